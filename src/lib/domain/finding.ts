/**
 * A finding: one inconsistency, with the evidence an operator needs to believe it.
 * `code` values are stable (documented in docs/checks.md); consumers key on them.
 */
export type Severity = 'error' | 'warning' | 'info' | 'unknown'

export type CheckName = 'leaks' | 'providers' | 'cells' | 'pinning' | 'usage' | 'aggregates' | 'snapshot'

export interface FindingSubject {
  cell?: string // cell name (or uuid when unnamed)
  cell_uuid?: string
  host?: string
  node?: string // hypervisor_hostname
  provider_uuid?: string
  consumer_uuid?: string
  instance_uuid?: string
  migration_uuid?: string
  aggregate?: string
  numa_cell?: number
}

export interface Finding {
  check: CheckName
  /** e.g. 'allocation.consumer-deleted' */
  code: string
  severity: Severity
  subject: FindingSubject
  /** One line an operator understands. */
  message: string
  /** The observed values: the rows (or fields) that disagree. */
  evidence: Record<string, unknown>
  /** The cloudctl command that would fix it, when one exists. */
  repair?: string
}

export const SEVERITY_ORDER: Record<Severity, number> = {error: 3, unknown: 2, warning: 1, info: 0}
