import type {CheckName, Finding, Severity} from '../domain/finding.js'

export type AuditCheckName = Exclude<CheckName, 'snapshot'>

/** The checks `audit all` runs, in report order. Unreadable blobs are reported under 'snapshot'. */
export const AUDIT_CHECKS: readonly AuditCheckName[] = ['leaks', 'providers', 'cells', 'pinning', 'usage', 'aggregates']

export interface AuditOptions {
  /** Run only these checks (default: all). Unreadable blobs are always reported. */
  checks?: readonly CheckName[]
  /** Keep findings of this cell (name or uuid). */
  cell?: string
  /** Keep findings of this host (service host or hypervisor_hostname). */
  host?: string
  /** Keep findings at or above this severity (error > unknown > warning > info). */
  severity?: Severity
}

export type SeverityCounts = Record<Severity, number>

export interface AuditCounts {
  total: number
  bySeverity: SeverityCounts
  byCheck: Partial<Record<CheckName, SeverityCounts>>
  byCode: Record<string, number>
}

export interface AuditReport {
  /** Ordered by check, then severity (worst first), then code and subject. */
  findings: Finding[]
  counts: AuditCounts
  /** The checks that ran. */
  checks: CheckName[]
  /** Cells that could not be read: their checks yield `unknown` findings instead of conclusions. */
  unavailableCells: Array<{uuid: string; name: string | null; error?: string}>
}

export const emptySeverityCounts = (): SeverityCounts => ({error: 0, unknown: 0, warning: 0, info: 0})
