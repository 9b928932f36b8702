/**
 * One finding code: what it is (code, check, severity, summary), what it means (explain), and the
 * rule that emits it (run). The registry (registry.ts) lists every unit once; FINDING_CODES,
 * `cloudctl explain` and the docs/checks.md test all read that list.
 */
import type {CheckName, Finding, FindingCode, Severity, UndecidedCode} from '../domain/finding.js'
import type {AuditContext} from './context.js'

export interface CodeExplanation {
  /** How nova (or an operator) leaves the databases in this state. */
  cause: string
  /** What to run and what it changes; the command first. */
  repair: string
  /** A runbook page that walks through the incident, repo-relative. */
  runbook?: string
}

export interface CheckUnit {
  code: FindingCode
  check: CheckName
  /** 'info|warning': the unit decides per finding (usage.negative-free). */
  severity: Severity | 'info|warning'
  summary: string
  explain: CodeExplanation
  /** The findings of this code, in a stable order (runChecks sorts them with the others). */
  run(ctx: AuditContext): Finding[]
}

export const runbook = (page: string): string => `docs/runbooks/${page}.md`

/** Every `*.undecided` code says the same: a cell could not be read. */
export const UNDECIDED_EXPLANATION: CodeExplanation = {
  cause:
    'A cell database could not be read (unreachable, wrong credentials, a schema cloudctl cannot read). Rows that may live there are unknown, so nothing is concluded from their absence: an outage is never taken for an empty cell.',
  repair:
    'Make the cell database reachable (check `cloudctl cells list` for its error) and audit again. Every repair refuses to write what depends on that cell until then.',
}

/**
 * The `*.undecided` unit of a check whose cells are judged independently: one `unknown` finding per
 * unreadable cell. `extra` adds the check's own count of what it skipped to the evidence.
 */
export function undecidedUnit(
  check: CheckName,
  code: UndecidedCode,
  what: string,
  summary = 'a cell could not be read',
  extra: (ctx: AuditContext) => Record<string, unknown> = () => ({}),
): CheckUnit {
  return {
    code,
    check,
    severity: 'unknown',
    summary,
    explain: UNDECIDED_EXPLANATION,
    run: (ctx) => ctx.undecided(check, code, what, extra(ctx)),
  }
}
