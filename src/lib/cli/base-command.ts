import {Command, Errors, Flags, type Interfaces, ux} from './oclif.js'

import {CloudctlError, ExitCode} from '../errors.js'
import {declaredListing, type ExtraFormat, type ListingSpec, renderCsv, renderJson, renderValue, renderYaml} from '../output/formats.js'
import {jsonDocument} from '../output/json-view.js'
import {type Display, terminalDisplay} from '../output/display.js'
import {renderTable, textWidth} from '../output/table.js'
import {fitLines, humanText, terminalSafe} from '../output/terminal.js'
import {colorEnabled} from '../output/theme.js'
import {type ReadFrom, readFrom} from '../snapshot/read-from.js'
import {nearest} from '../util/did-you-mean.js'
import {scrub} from '../util/redact.js'
import {formatFlags, formatFromArgv, type OutputChoice, resolveOutput} from './format-flags.js'
import type {SnapshotRelease} from '../domain/release.js'
import type {Snapshot} from '../domain/snapshot.js'
import {loadSnapshot} from '../snapshot/load.js'
import {ProgressLine} from './progress-printer.js'
import type {ChosenSource} from './source-flags.js'

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof CloudctlCommand)['baseFlags'] & T['flags']>
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * Base of every cloudctl command: the output formats (`-f table|json|yaml|csv|value`, `-c`, `--json`
 * = `-f json`; stdout holds exactly one document in every format but table), `--debug`, and one error
 * path that prints a one-line message with a hint on stderr and exits with the documented code, as a
 * JSON/YAML error document in those formats.
 *
 * The human report (table) is what the command prints through `out()`; every other format is made
 * here from the result document `run()` returns (see src/lib/output/formats.ts).
 */
export abstract class CloudctlCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    debug: Flags.boolean({summary: 'Show stack traces and driver details on errors.', helpGroup: 'GLOBAL'}),
    quiet: Flags.boolean({char: 'q', summary: 'No progress line on stderr (there is none when stderr is not a terminal).', helpGroup: 'GLOBAL'}),
    ...formatFlags(),
  }

  static override enableJsonFlag = true

  /** Formats only this command offers (also passed to formatFlags in its baseFlags). */
  static extraFormats: ReadonlyArray<ExtraFormat<never>> = []

  /**
   * The command's listing (csv, value, -c): which rows of its JSON document and which columns, declared
   * once so that the header never depends on what the cloud holds. Every command with -f declares one.
   */
  static listing: ListingSpec | undefined

  protected flags!: CommandFlags<T>
  protected args!: CommandArgs<T>

  public override async init(): Promise<void> {
    await super.init()
    const {args, flags} = await this.parse({
      args: this.ctor.args,
      baseFlags: (super.ctor as typeof CloudctlCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      flags: this.ctor.flags,
      strict: this.ctor.strict,
    })
    this.flags = flags as CommandFlags<T>
    this.args = args as CommandArgs<T>
    this.output = resolveOutput(flags as Record<string, unknown>)
    this.display = terminalDisplay(this.output.maxWidth)
    this.progress = new ProgressLine(!(flags as {quiet?: boolean}).quiet && !this.jsonEnabled())
  }

  private output: OutputChoice | undefined

  /**
   * How this command's human output is laid out (--max-width, the terminal, the locale): passed to
   * the formatters, which draw nothing without it. The terminal's until the flags are parsed.
   */
  protected display: Display = terminalDisplay(undefined)

  /** This command's progress line on stderr: none until the flags say whether it may show one. */
  private progress = new ProgressLine(false)

  /**
   * oclif prints the result document after run(), outside its own try: an error while formatting
   * it (an unknown -c column) must still take the one error path.
   */
  public override async _run<R>(): Promise<R> {
    try {
      return await super._run<R>()
    } catch (error) {
      if (error instanceof Errors.ExitError || (error as {oclif?: {exit?: number}}).oclif?.exit !== undefined) throw error
      await this.catch(error as Error)
      return undefined as R
    } finally {
      // A command that printed nothing after its last phase must not leave the line behind.
      this.progress.clear()
    }
  }

  /** The snapshot file or the live databases, with the progress line while they are read. */
  protected async readSnapshot(opts: ChosenSource): Promise<Snapshot> {
    if (opts.snapshot) this.progress.phase(`reading ${opts.snapshot}`)
    const snapshot = await loadSnapshot(opts, this.progress.sink())
    this.loadedRelease = snapshot.release ?? null
    this.loadedReadFrom = readFrom(snapshot)
    return snapshot
  }

  /** Which server (and Galera node) each database of the loaded snapshot was read from ([]: not recorded). */
  private loadedReadFrom: ReadFrom[] = []

  /**
   * The release of the snapshot this command loaded, so that its `--json` result names it (logJson):
   * undefined when it loaded none, null when the snapshot records no release.
   */
  private loadedRelease: SnapshotRelease | null | undefined

  /** The progress line names the next phase (auditing, planning, counting capacity); on a TTY only. */
  protected phase(text: string): void {
    this.progress.phase(text)
  }

  /** The format asked for: from the parsed flags, or from argv before (or without) a successful parse. */
  protected outputFormat(): string {
    if (this.output) return this.output.format
    const ctor = this.ctor as typeof CloudctlCommand
    // A command without -f (snapshot capture) may use -f for nothing else, but only --json counts.
    const hasFormat = ctor.baseFlags !== undefined && 'format' in ctor.baseFlags
    const f = hasFormat ? formatFromArgv(this.argv ?? []) : (this.argv ?? []).includes('--json') ? 'json' : undefined
    const known = ['table', 'json', 'yaml', 'csv', 'value', ...ctor.extraFormats.map((x) => x.name)]
    return f !== undefined && known.includes(f) ? f : 'table'
  }

  /**
   * "Machine output": anything but the plain human table. oclif asks this to decide whether to print
   * the result document, and the commands to decide whether to render their report.
   */
  public override jsonEnabled(): boolean {
    if (!this.ctor?.enableJsonFlag) return false
    return this.outputFormat() !== 'table' || this.output?.columns !== undefined
  }

  /** Formats whose errors are a document on stdout (the rest print the one-line error on stderr). */
  private structuredErrors(): boolean {
    const f = this.outputFormat()
    return f === 'json' || f === 'yaml'
  }

  /**
   * Human output goes to stdout only without --json. Every line passes through humanText: database
   * strings reach it inside messages, and no control character of theirs may reach the terminal.
   */
  /**
   * The human report; a function is called (with the command's display, for its tables) only when it
   * is printed (not for -f json and the like).
   */
  protected out(text: string | ((display: Display) => string)): void {
    this.progress.clear()
    // Every line within the display width, not only the tables (notes, plan lines, request lines).
    if (!this.jsonEnabled())
      this.log(
        fitLines(humanText(typeof text === 'function' ? text(this.display) : text, {keepSgr: colorEnabled(process.stdout)}), this.display.width, textWidth),
      )
  }

  /**
   * A document printed as written (a runbook page's markdown, for a pager or a file): not wrapped to
   * the display width, which would break its tables and code blocks; control characters still go.
   */
  protected outVerbatim(text: string): void {
    this.progress.clear()
    if (!this.jsonEnabled()) this.log(humanText(text, {keepSgr: false}))
  }

  /** Diagnostics and progress: always stderr, so stdout stays one document. */
  protected note(text: string): void {
    this.progress.clear()
    process.stderr.write(`${humanText(text, {keepSgr: colorEnabled(process.stderr)})}\n`)
  }

  /**
   * Prints the result document in the chosen format (oclif calls this with run()'s result whenever
   * jsonEnabled()). JSON keeps DEL and C1 escaped as well (same values, nothing a terminal acts on).
   */
  public override logJson(json: unknown): void {
    // Every result read from a snapshot names the release its databases were (null: not recorded).
    const release = this.loadedRelease
    if (release !== undefined && typeof json === 'object' && json !== null && !Array.isArray(json) && !('error' in json) && !('release' in json)) {
      json = {...json, release}
    }
    // And, when the snapshot records it, which server and Galera node each database was read from.
    const from = this.loadedReadFrom
    if (from.length > 0 && typeof json === 'object' && json !== null && !Array.isArray(json) && !('error' in json) && !('read_from' in json))
      json = {...json, read_from: from}
    const out = this.output ?? {format: this.outputFormat(), columns: undefined, noindent: false, maxWidth: undefined}
    const ctor = this.ctor as typeof CloudctlCommand
    const extra = ctor.extraFormats.find((f) => f.name === out.format)
    if (extra) {
      ux.stdout(terminalSafe(extra.render(json as never, {commandId: this.id ?? '', flags: (this.flags ?? {}) as Record<string, unknown>})))
      return
    }
    // The formats above render the command's own result; these print its JSON view (snake_case keys,
    // exit_code and warnings first), so json, yaml, csv and value name every field alike.
    // Findings' evidence is cut to 20 rows per array unless the command has --full-evidence set.
    const fullEvidence = (this.flags as {'full-evidence'?: boolean} | undefined)?.['full-evidence'] === true
    json = jsonDocument(json, typeof process.exitCode === 'number' ? process.exitCode : 0, {fullEvidence})
    const spec = ctor.listing
    const listing = () => {
      if (spec === undefined) throw new Error(`${this.id ?? 'this command'} declares no listing for -f ${out.format} / -c`)
      return declaredListing(json, spec, out.columns)
    }
    switch (out.format) {
      case 'yaml':
        ux.stdout(renderYaml(out.columns ? listing().rows : json))
        return
      case 'csv':
        ux.stdout(terminalSafe(renderCsv(listing())))
        return
      case 'value':
        ux.stdout(terminalSafe(renderValue(listing())))
        return
      case 'table': {
        const l = listing()
        ux.stdout(
          renderTable(
            this.display,
            l.columns,
            l.rows.map((r) => l.columns.map((c) => (r[c] !== null && typeof r[c] === 'object' ? JSON.stringify(r[c]) : (r[c] as string)))),
          ),
        )
        return
      }
      default:
        ux.stdout(renderJson(out.columns ? listing().rows : json, {noindent: out.noindent}))
    }
  }

  protected setExit(code: number): void {
    process.exitCode = code
  }

  protected override toErrorJson(err: unknown): unknown {
    const e = this.describe(err)
    return {error: {code: e.code, message: e.message, hint: e.hint, exit_code: e.exitCode}}
  }

  public override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    this.progress.clear()
    const e = this.describe(err)
    // oclif reads err.exitCode in JSON mode and err.oclif.exit otherwise: set both to our code.
    process.exitCode = e.exitCode
    if (this.structuredErrors()) {
      // The error document, never filtered by -c (which names columns of a result).
      const f = this.outputFormat()
      const doc = this.toErrorJson(err)
      ux.stdout(f === 'yaml' ? renderYaml(doc) : renderJson(doc, {noindent: this.output?.noindent}))
      return
    }
    if (err instanceof Errors.ExitError) throw err
    const safe = (text: string) => humanText(text, {keepSgr: false})
    process.stderr.write(`Error: ${safe(e.message)}\n`)
    if (e.hint) process.stderr.write(`Hint: ${safe(e.hint)}\n`)
    const debug = (this.flags as {debug?: boolean} | undefined)?.debug || process.argv.includes('--debug')
    if (debug && err.stack) process.stderr.write(`${terminalSafe(scrub(err.stack))}\n`)
    throw new Errors.ExitError(e.exitCode)
  }

  /** describeError, with "Did you mean --snapshot?" when the error is a mistyped flag of this command. */
  private describe(err: unknown): DescribedError {
    const e = describeError(err)
    const typed = nonExistentFlags(err)
    if (typed.length === 0) return e
    // The command's own flags and the global ones, by their long names and aliases (hidden ones left out).
    const ctor = this.ctor as typeof CloudctlCommand
    const names: string[] = ctor.enableJsonFlag ? ['json', 'help'] : ['help']
    for (const [name, flag] of Object.entries({...ctor.baseFlags, ...ctor.flags})) {
      if ((flag as {hidden?: boolean}).hidden) continue
      names.push(name, ...((flag as {aliases?: string[]}).aliases ?? []))
    }
    const suggestions = typed.map((t) => nearest(t.replace(/^--?/, '').replace(/=.*$/s, ''), names)).filter((n): n is string => n !== undefined)
    if (suggestions.length === 0) return e
    return {...e, hint: `Did you mean ${[...new Set(suggestions)].map((n) => `--${n}`).join(', ')}?`}
  }
}

/**
 * The flags oclif found no definition for, from its NonExistentFlagsError's `flags` (as typed:
 * "--snpashot", "--snpashot=x"); single-dash ones ("-X") have no name to compare, so they are left out.
 */
function nonExistentFlags(err: unknown): string[] {
  const flags = (err as {flags?: unknown} | undefined)?.flags
  if (!Array.isArray(flags) || !/^Nonexistent flags?:/.test((err as Error).message ?? '')) return []
  return flags.filter((f): f is string => typeof f === 'string' && f.startsWith('--') && f.length > 2)
}

interface DescribedError {
  code: string
  message: string
  hint?: string
  exitCode: number
}

function describeError(err: unknown): DescribedError {
  if (err instanceof CloudctlError) {
    return {code: err.code, message: scrub(oneLine(err.message)), hint: err.hint ? scrub(err.hint) : undefined, exitCode: err.exitCode}
  }
  const e = err as Error & {oclif?: {exit?: number}; code?: string}
  // Parse errors from oclif (unknown flag, missing arg, a value a flag cannot parse) are usage errors.
  if (e?.oclif?.exit !== undefined || isFlagParseError(e)) {
    const exit = e.oclif?.exit ?? ExitCode.CONFIG
    const exitCode = exit === 2 || exit === 1 ? ExitCode.CONFIG : exit
    return {code: 'UsageError', message: scrub(oneLine(e.message)), hint: usageHint(), exitCode}
  }
  return {
    code: 'UnexpectedError',
    message: scrub(firstLine(e?.message ?? String(err))),
    hint: 'This is a cloudctl bug or an unexpected condition: re-run with --debug and report the stack trace.',
    exitCode: ExitCode.UNEXPECTED,
  }
}

/** "See `cloudctl simulate boot --help`." for the command being run (argv as typed, flags dropped). */
function usageHint(): string {
  const words: string[] = []
  for (const a of process.argv.slice(2)) {
    if (a.startsWith('-') || words.length >= 2) break
    words.push(a)
  }
  return words.length > 0 && words.every((w) => /^[a-z][a-z-]*$/.test(w))
    ? `See \`cloudctl ${words.join(' ')} --help\` for its flags and arguments.`
    : 'See --help for usage.'
}

function firstLine(s: string): string {
  return s.split('\n').find((l) => l.trim() !== '') ?? s
}

// oclif wraps a flag's parse failure as "Parsing --flag \n\t<reason>\nSee more help with --help".
function isFlagParseError(e: Error | undefined): boolean {
  return typeof e?.message === 'string' && /^Parsing --\S+ *\n/.test(e.message)
}

/**
 * oclif's parse errors put the reason on the lines after the first ("Parsing --num-instances" then
 * "Expected an integer ...") and end with "See more help with --help": keep every line that says
 * something, on one line, without oclif's own colouring (an empty value shown as "").
 */
function oneLine(message: string): string {
  const lines = message
    // eslint-disable-next-line no-control-regex
    .replace(/\u001B\[[0-9;]*m/g, '')
    // oclif's preamble for failed flag validation says nothing; the reason follows it.
    .replace(/^The following errors? occurred:\s*/, '')
    // "uuid  Instance uuid." (name, two spaces, description): the description in parentheses.
    .replace(
      /^(Missing \d+ required args?:)\n(.*)$/ms,
      (_m, head: string, rest: string) =>
        `${head}\n${rest
          .split('\n')
          .map((l) => l.replace(/^(\S+)\s{2,}(.+)$/, '$1 ($2)'))
          .join('\n')}`,
    )
    .split('\n')
    .map((l) => l.replace(/received: $/, 'received: ""').trim())
    // oclif appends a note about multiple-value flags to every missing-argument error, whether or not
    // one was given before the argument: it reads as the cause when it rarely is.
    .filter(
      (l) => l !== '' && !/^See more help with --help$/.test(l) && !/^Note: .* allows? multiple values/.test(l) && !/^Alternatively, you can use "--"/.test(l),
    )
  if (lines.length <= 1) return lines[0] ?? firstLine(message)
  const [head, ...rest] = lines
  return `${head.replace(/:$/, '')}: ${rest.join('; ')}`
}
