import {Command, Errors, Flags, type Interfaces, ux} from '@oclif/core'

import {CloudctlError, ExitCode, exitCodeHelp} from '../errors.js'
import {humanText, jsonSafe, terminalSafe} from '../output/terminal.js'
import {colorEnabled} from '../output/theme.js'
import {scrub} from '../util/redact.js'

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof CloudctlCommand)['baseFlags'] & T['flags']>
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/**
 * Base of every cloudctl command: `--json` (stdout holds exactly one JSON document), `--debug`, and
 * one error path that prints a one-line message with a hint on stderr and exits with the documented
 * code, in JSON mode too.
 */
export abstract class CloudctlCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    debug: Flags.boolean({summary: 'Show stack traces and driver details on errors.', helpGroup: 'GLOBAL'}),
  }

  static override enableJsonFlag = true

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
  }

  /**
   * Human output goes to stdout only without --json. Every line passes through humanText: database
   * strings reach it inside messages, and no control character of theirs may reach the terminal.
   */
  protected out(text: string): void {
    if (!this.jsonEnabled()) this.log(humanText(text, {keepSgr: colorEnabled(process.stdout)}))
  }

  /** Diagnostics and progress: always stderr, so stdout stays one document. */
  protected note(text: string): void {
    process.stderr.write(`${humanText(text, {keepSgr: colorEnabled(process.stderr)})}\n`)
  }

  /** The JSON document, with DEL and C1 escaped as well (same values, nothing a terminal acts on). */
  public override logJson(json: unknown): void {
    ux.stdout(jsonSafe(ux.colorizeJson(json, {pretty: true, theme: this.config.theme?.json})))
  }

  protected setExit(code: number): void {
    process.exitCode = code
  }

  protected override toErrorJson(err: unknown): unknown {
    const e = describeError(err)
    return {error: {code: e.code, message: e.message, hint: e.hint, exit_code: e.exitCode}}
  }

  public override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    const e = describeError(err)
    // oclif reads err.exitCode in JSON mode and err.oclif.exit otherwise: set both to our code.
    process.exitCode = e.exitCode
    if (this.jsonEnabled()) {
      this.logJson(this.toErrorJson(err))
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
}

export interface DescribedError {
  code: string
  message: string
  hint?: string
  exitCode: number
}

export function describeError(err: unknown): DescribedError {
  if (err instanceof CloudctlError) {
    return {code: err.code, message: scrub(oneLine(err.message)), hint: err.hint ? scrub(err.hint) : undefined, exitCode: err.exitCode}
  }
  const e = err as Error & {oclif?: {exit?: number}; code?: string}
  // Parse errors from oclif (unknown flag, missing arg, a value a flag cannot parse) are usage errors.
  if (e?.oclif?.exit !== undefined || isFlagParseError(e)) {
    const exit = e.oclif?.exit ?? ExitCode.CONFIG
    const exitCode = exit === 2 || exit === 1 ? ExitCode.CONFIG : exit
    return {code: 'UsageError', message: scrub(oneLine(e.message)), hint: 'See --help for usage.', exitCode}
  }
  return {
    code: 'UnexpectedError',
    message: scrub(firstLine(e?.message ?? String(err))),
    hint: 'This is a cloudctl bug or an unexpected condition: re-run with --debug and report the stack trace.',
    exitCode: ExitCode.UNEXPECTED,
  }
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
export function oneLine(message: string): string {
  // eslint-disable-next-line no-control-regex
  const lines = message.replace(/\u001B\[[0-9;]*m/g, '').split('\n').map((l) => l.replace(/received: $/, 'received: ""').trim()).filter((l) => l !== '' && !/^See more help with --help$/.test(l))
  if (lines.length <= 1) return lines[0] ?? firstLine(message)
  const [head, ...rest] = lines
  return `${head.replace(/:$/, '')}: ${rest.join('; ')}`
}

export const EXIT_CODES_HELP = exitCodeHelp()
