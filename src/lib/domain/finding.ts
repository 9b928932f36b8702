/**
 * A finding: one inconsistency, with the evidence an operator needs to believe it.
 * `code` values are stable (documented in docs/checks.md); consumers key on them.
 *
 * `Finding` is a union keyed by `code`: after `f.code === 'allocation.missing'` the evidence has the
 * fields that code's check writes, so the repair planners read them without casts. Each evidence
 * type names the fields the repairs read; the others a check adds for the operator stay open
 * (`[field: string]: unknown`), so the JSON a check prints is not constrained by what a repair needs.
 */
import type {MigrationType} from './snapshot.js'

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

/** FindingSubject's fields in the order listings and diffs name them. */
export const SUBJECT_FIELDS = [
  'cell',
  'cell_uuid',
  'host',
  'node',
  'provider_uuid',
  'consumer_uuid',
  'instance_uuid',
  'migration_uuid',
  'aggregate',
  'numa_cell',
] as const satisfies ReadonlyArray<keyof FindingSubject>

/** What every finding of a consumer's allocations names. */
export type ConsumerSubject = FindingSubject & {consumer_uuid: string}
/** What every finding of one instance row names. */
export type InstanceSubject = FindingSubject & {instance_uuid: string; cell_uuid: string}

/** Fields a check shows the operator beyond those a repair reads (a new code's evidence extends it too). */
export interface Open {
  [field: string]: unknown
}

// ---------------------------------------------------------------- rows as evidence shows them

export interface AllocationEvidence {
  id: number
  resource_provider_id: number
  resource_class: string
  used: number
}
export interface ProviderEvidence {
  id: number
  uuid: string
  name: string | null
  generation: number | null
}
export interface InstanceEvidence {
  cell_uuid: string
  id: number
  uuid: string
  host: string | null
  node: string | null
  vm_state: string | null
  task_state: string | null
  deleted: number
  deleted_at: string | null
}
export interface MigrationEvidence {
  cell_uuid: string
  id: number
  uuid: string | null
  instance_uuid: string | null
  migration_type: MigrationType | null
  status: string | null
  source_compute: string | null
  source_node: string | null
  dest_compute: string | null
  dest_node: string | null
  updated_at: string | null
  /** 0, or the row's id once soft-deleted (with its instance, by nova's instance_destroy). */
  deleted: number
}
export interface ComputeNodeRef extends Open {
  id: number
  uuid: string | null
  cell_uuid: string
}
export interface HostMappingEvidence {
  id: number
  cell_id: number
  host: string
}

// ---------------------------------------------------------------- evidence per code

export interface LeakEvidence extends Open {
  /** The consumer's rows on the provider tree the finding names: what `repair leaks` removes. */
  allocations: AllocationEvidence[]
  provider: ProviderEvidence
}
export interface MigrationLeakEvidence extends LeakEvidence {
  migration: MigrationEvidence
}
export interface WrongProviderEvidence extends LeakEvidence {
  /** Set when the consumer is a migration: neither its source nor its destination holds the rows. */
  migration?: MigrationEvidence
}
export interface MissingEvidence extends Open {
  instance: InstanceEvidence
  /** Resource class -> amount, from the flavor. */
  expected: Record<string, number>
  provider: ProviderEvidence | null
}
export interface AmountMismatchEvidence extends Open {
  differences: Record<string, {expected: number; allocated: number}>
  instance: InstanceEvidence
}
export interface StaleProviderEvidence extends Open {
  cause: 'no-compute-node' | 'compute-node-deleted' | 'service-deleted'
  provider: ProviderEvidence
}
export interface UuidMismatchEvidence extends Open {
  compute_node: ComputeNodeRef
  providers: ProviderEvidence[]
}
export interface DuplicateNameEvidence extends Open {
  providers: Array<ProviderEvidence & {stale: boolean; compute_node: ComputeNodeRef | null}>
}
export interface NodeEvidence extends Open {
  compute_node: ComputeNodeRef
}
export interface NodeDriftEvidence extends NodeEvidence {
  /** Column -> value on the row (null: the column is not there to compare). */
  recorded: Record<string, number | null>
  /** Column -> value its live instances add up to. */
  expected: Record<string, number>
}
export interface AggregateLinkEvidence extends Open {
  aggregate: {uuid: string | null}
  provider: ProviderEvidence
}
export interface HostMappingWrongCellEvidence extends Open {
  host_mapping: HostMappingEvidence
  /** cell_mappings.id of the cell the host runs in; null when that cell has no mapping. */
  expected_cell_id: number | null
}
export interface HostMappingStaleEvidence extends Open {
  host_mapping: HostMappingEvidence
}

/**
 * Per code: the subject and the evidence its findings carry. Empty here: each check unit adds its
 * code by module augmentation (`declare module '../../domain/finding.js'`), so a new code is one
 * file (CONTRIBUTING.md, the worked example).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface FindingShapes {}

export type FindingCode = keyof FindingShapes

/** The code a check gives a cell it could not read. */
export type UndecidedCode = Extract<FindingCode, `${string}.undecided`>

/** A finding of one code (of each, for a union of codes). */
export type FindingOf<C extends FindingCode> = C extends FindingCode ? FindingShape<C> : never

interface FindingShape<C extends FindingCode> {
  check: CheckName
  /** e.g. 'allocation.consumer-deleted' */
  code: C
  severity: Severity
  subject: FindingShapes[C][0]
  /** One line an operator understands. */
  message: string
  /** The observed values: the rows (or fields) that disagree. */
  evidence: FindingShapes[C][1]
  /** The cloudctl command that would fix it, when one exists. */
  repair?: string
}

export type Finding = FindingOf<FindingCode>

/** Findings of the given codes, typed as such (a filter TypeScript can follow). */
export function ofCodes<C extends FindingCode>(findings: readonly Finding[], ...codes: C[]): Array<FindingOf<C>> {
  const want = new Set<string>(codes)
  return findings.filter((f): f is FindingOf<C> => want.has(f.code))
}

export const SEVERITY_ORDER: Record<Severity, number> = {error: 3, unknown: 2, warning: 1, info: 0}

/**
 * The one exit-code rule for findings, audits and repairs alike (README "Exit codes"): a finding of
 * severity warning, unknown or error needs the operator (exit 3); an info finding explains and never
 * makes any command exit 3, whether an audit reports it or a repair lists it under "Not repaired".
 */
export function needsAction(severity: Severity): boolean {
  return severity !== 'info'
}
