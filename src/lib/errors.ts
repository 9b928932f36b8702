/**
 * One exit-code table for every command (shown in --help and the README).
 * Library code never calls process.exit: it throws CloudctlError or returns a result and lets the
 * base command set process.exitCode.
 */
export const ExitCode = {
  OK: 0,
  UNEXPECTED: 1,
  CONFIG: 2,
  FINDINGS: 3,
  APPLIED: 4,
  ABORTED: 5,
  PARTIAL: 6,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export const EXIT_CODE_TABLE: ReadonlyArray<[ExitCodeValue, string]> = [
  [0, 'nothing that needs action: no finding of severity warning or above, an empty plan, every instance placed'],
  [1, 'unexpected error (a bug, a lost connection, the repair lock held elsewhere)'],
  [
    2,
    'usage or configuration error (bad flags, unreachable database, wrong credentials, wrong release, malformed snapshot, a repair refused before planning or applying)',
  ],
  [
    3,
    'action needed: a finding of severity warning, unknown or error (reported by an audit, or left by a repair under "Not repaired"), a dry-run plan with steps, a cell not read, NoValidHost',
  ],
  [4, 'repair applied and verified'],
  [5, 'repair aborted and rolled back (the data changed under us); nothing was written'],
  [6, 'partial: more to do (--max-count reached or a database left for a re-run); run again'],
]

/**
 * The rule behind 0 and 3, said once: README, docs/repairs.md and docs/runbooks/README.md quote it
 * verbatim (test/commands/exit-codes.e2e.test.ts), and needsAction (domain/finding.ts) implements it.
 */
export const EXIT_RULE =
  'Findings below warning (info) never make a command exit 3: an audit that finds only info findings exits 0, and so does a repair whose plan is empty and that leaves only info findings under "Not repaired".'

/** The table and the rule as --help shows them, wrapped to `width` (an 80-column terminal by default). */
export function exitCodeHelp(width = 80): string {
  const wrap = (text: string, first: string, rest: string) => {
    const lines: string[] = []
    let line = first
    for (const word of text.split(' ')) {
      if (line.trim() !== '' && line.length + 1 + word.length > width && line !== first) {
        lines.push(line)
        line = rest + word
      } else line += (line === first || line === rest ? '' : ' ') + word
    }
    lines.push(line)
    return lines.join('\n')
  }
  return ['EXIT CODES', ...EXIT_CODE_TABLE.map(([code, text]) => wrap(text, `  ${code}  `, '     ')), '', wrap(EXIT_RULE, '  ', '  ')].join('\n')
}

/** An error the operator can act on: one line, a hint, an exit code and a stable code. */
export class CloudctlError extends Error {
  readonly exitCode: ExitCodeValue
  readonly code: string
  readonly hint?: string

  constructor(message: string, opts: {exitCode?: ExitCodeValue; code?: string; hint?: string; cause?: unknown} = {}) {
    super(message, opts.cause === undefined ? undefined : {cause: opts.cause})
    this.name = 'CloudctlError'
    this.exitCode = opts.exitCode ?? ExitCode.CONFIG
    this.code = opts.code ?? 'CloudctlError'
    this.hint = opts.hint
  }
}

export class ConfigError extends CloudctlError {
  constructor(message: string, hint?: string, code = 'ConfigError') {
    super(message, {exitCode: ExitCode.CONFIG, code, hint})
  }
}

export class SnapshotFormatError extends CloudctlError {
  constructor(
    message: string,
    hint = 'Capture a fresh snapshot with `cloudctl snapshot capture -o FILE`, or check the file with `cloudctl snapshot validate FILE`.',
  ) {
    super(message, {exitCode: ExitCode.CONFIG, code: 'SnapshotFormatError', hint})
  }
}

export class NotFoundError extends CloudctlError {
  constructor(message: string, hint?: string) {
    super(message, {exitCode: ExitCode.CONFIG, code: 'NotFoundError', hint})
  }
}

/** A guarded write found the data changed since it was observed: the transaction was rolled back. */
export class RepairAbortedError extends CloudctlError {
  constructor(message: string, hint = 'Nothing was written. Re-run the command to plan against the current state.') {
    super(message, {exitCode: ExitCode.ABORTED, code: 'RepairAbortedError', hint})
  }
}
