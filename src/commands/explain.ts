import {readFile} from 'node:fs/promises'
import {join} from 'node:path'

import {Args, Flags} from '../lib/cli/oclif.js'

import {CloudctlCommand} from '../lib/cli/base-command.js'
import {suggestCommand} from '../lib/cli/hooks/command-not-found.js'
import {FINDING_CODES} from '../lib/checks/index.js'
import {type ExplainedCode, explainCode} from '../lib/checks/explain.js'
import {CloudctlError, ExitCode} from '../lib/errors.js'
import type {ListingSpec} from '../lib/output/formats.js'

export default class Explain extends CloudctlCommand<typeof Explain> {
  static override listing: ListingSpec = {
    rows: 'codes',
    columns: [{key: 'code'}, {key: 'check'}, {key: 'severity'}, {key: 'summary'}],
    more: [{key: 'cause'}, {key: 'repair'}, {key: 'runbook'}, {key: 'docs'}],
  }

  static override summary = 'What a finding code means, how nova gets there, what the repair does.'

  static override description =
    'Without CODE, every code. CODE may also be a check name (leaks, providers, cells, pinning, usage, aggregates, snapshot) for all of its codes. The text comes from the same registry as docs/checks.md; runbook and docs paths are relative to where cloudctl is installed (every artifact carries docs/); --runbook prints the runbook page itself.'

  static override args = {code: Args.string({description: 'A finding code (allocation.consumer-deleted) or a check name.', required: false, ignoreStdin: true})}

  static override flags = {
    runbook: Flags.boolean({summary: "Print the code's runbook page (docs/runbooks/, installed with cloudctl) instead of the explanation."}),
  }

  static override examples = [
    '<%= config.bin %> <%= command.id %> pinning.leaked',
    '<%= config.bin %> <%= command.id %> pinning.leaked --runbook',
    '<%= config.bin %> <%= command.id %> leaks',
    '<%= config.bin %> <%= command.id %> -f value -c code -c severity',
  ]

  async run(): Promise<{codes: ExplainedCode[]}> {
    const codes = selectCodes(this.args.code).map((c) => explainCode(c) as ExplainedCode)
    if (this.flags.runbook) return this.printRunbook(codes)
    const width = this.display.width
    const blocks = codes.map((e) =>
      [
        `${e.code} (${e.check}, ${e.severity})`,
        `  ${e.summary}.`,
        `  Why: ${e.cause}`,
        `  Repair: ${e.repair}`,
        ...(e.runbook ? [`  Runbook: ${e.runbook} (cloudctl explain ${e.code} --runbook)`] : []),
        `  Docs: ${e.docs}`,
      ]
        .map((line) => wrap(line, width))
        .join('\n'),
    )
    this.out(blocks.join('\n\n'))
    this.setExit(ExitCode.OK)
    return {codes}
  }

  /** The page as text; with --json the document is explain's own for the one code (its runbook path included). */
  private async printRunbook(codes: ExplainedCode[]): Promise<{codes: ExplainedCode[]}> {
    if (codes.length !== 1) {
      throw new CloudctlError('--runbook needs one finding code', {
        exitCode: ExitCode.CONFIG,
        code: 'UsageError',
        hint: '`cloudctl explain pinning.leaked --runbook`; `cloudctl explain` lists every code.',
      })
    }
    const [e] = codes
    if (!e.runbook) {
      const withPages = Object.keys(FINDING_CODES).filter((c) => explainCode(c)?.runbook)
      throw new CloudctlError(`${e.code} has no runbook page`, {
        exitCode: ExitCode.CONFIG,
        code: 'NotFoundError',
        hint: `Codes with one: ${withPages.join(', ')}.`,
      })
    }
    const file = join(this.config.root, e.runbook)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw new CloudctlError(`cannot read the runbook page ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
        exitCode: ExitCode.CONFIG,
        code: 'NotFoundError',
        hint: 'The page ships in every cloudctl artifact under docs/runbooks/: reinstall cloudctl.',
      })
    }
    this.outVerbatim(text.trimEnd())
    this.setExit(ExitCode.OK)
    return {codes}
  }
}

function selectCodes(arg: string | undefined): string[] {
  const all = Object.keys(FINDING_CODES)
  if (arg === undefined) return all
  const code = arg.trim().toLowerCase()
  if (code in FINDING_CODES) return [code]
  const ofCheck = all.filter((c) => FINDING_CODES[c].check === code)
  if (ofCheck.length > 0) return ofCheck
  const near = suggestCommand(code, all)
  throw new CloudctlError(`unknown finding code "${arg}"`, {
    exitCode: ExitCode.CONFIG,
    code: 'NotFoundError',
    hint: near ? `Did you mean \`cloudctl explain ${near}\`? (\`cloudctl explain\` lists every code.)` : '`cloudctl explain` lists every code.',
  })
}

/** Word-wrap a paragraph to the display width, continuation lines indented under its label. */
function wrap(line: string, width: number | undefined): string {
  if (width === undefined || line.length <= width) return line
  const indent = ' '.repeat(Math.min(line.length - line.trimStart().length + 2, Math.floor(width / 4)))
  const out: string[] = []
  let cur = ''
  for (const word of line.trimStart().split(' ')) {
    const lead = out.length === 0 ? line.slice(0, line.length - line.trimStart().length) : indent
    if (cur !== '' && lead.length + cur.length + 1 + word.length > width) {
      out.push(lead + cur)
      cur = word
    } else cur = cur === '' ? word : `${cur} ${word}`
  }
  out.push((out.length === 0 ? line.slice(0, line.length - line.trimStart().length) : indent) + cur)
  return out.join('\n')
}
