/**
 * The machine-readable view of a result document (what `-f json|yaml|csv|value` print): one key
 * style, snake_case as nova's and placement's APIs, and the same top-level fields on every command
 * (`exit_code`, `warnings`, then the command's result). docs/json-schema/ describes each document.
 *
 * The engine, the checks and the capacity model keep their TypeScript field names (`placedAll`,
 * `byAz`, ...): the view renames them here, from an explicit table, never by rewriting every key.
 * Many keys of these documents are data — host, flavor, AZ and cell names, finding codes, check
 * names, resource classes, extra specs, plan columns — and a blind camelCase→snake_case pass would
 * change them. Positions that hold data are listed in DATA_POSITIONS and copied untouched; a
 * camelCase field missing from RENAMES shows up in test/output/json-schema.e2e.test.ts.
 */

import {capFinding, EVIDENCE_ROWS} from './evidence.js'

/** Every camelCase field name a result document carries, and its snake_case name. */
export const RENAMES: Readonly<Record<string, string>> = {
  // audit (src/lib/checks, src/lib/output/findings-formatter.ts)
  unavailableCells: 'unavailable_cells',
  bySeverity: 'by_severity',
  byCheck: 'by_check',
  byCode: 'by_code',
  // simulate boot / migrate (src/lib/engine/result.ts, migrate.ts)
  queryEncoded: 'query_encoded',
  cutByLimit: 'cut_by_limit',
  providerSummaries: 'provider_summaries',
  stoppedAt: 'stopped_at',
  hostStates: 'host_states',
  withoutService: 'without_service',
  withoutComputeNode: 'without_compute_node',
  instanceUuid: 'instance_uuid',
  claimFailures: 'claim_failures',
  placedAll: 'placed_all',
  noValidHost: 'no_valid_host',
  // what-if scenarios (src/lib/scenario)
  disableHosts: 'disable_hosts',
  drainHosts: 'drain_hosts',
  allocationRatios: 'allocation_ratios',
  addHosts: 'add_hosts',
  applyRepairs: 'apply_repairs',
  removedAllocations: 'removed_allocations',
  freedByProvider: 'freed_by_provider',
  resourceClass: 'resource_class',
  // simulate capacity (src/lib/capacity/types.ts)
  availabilityZone: 'availability_zone',
  perHost: 'per_host',
  maxInstances: 'max_instances',
  hostUsage: 'host_usage',
  byAz: 'by_az',
  byAggregate: 'by_aggregate',
  byFlavor: 'by_flavor',
  stoppedBy: 'stopped_by',
  stopReason: 'stop_reason',
  // simulate capacity under a what-if scenario (src/lib/capacity/what-if.ts)
  hostsBefore: 'hosts_before',
  naiveBefore: 'naive_before',
  naiveAfter: 'naive_after',
}

/**
 * Positions (after renaming; `[]` for every element of an array) whose object keys are data, for
 * every document: they are copied as they are. `plan` is the repair plan, the same document the
 * plan and undo files hold (already snake_case, its `set` keys are column names).
 */
const COMMON_DATA: readonly string[] = [
  'plan',
  'findings[].evidence',
  'findings[].evidence_truncated',
  'findings.appeared[].finding.evidence',
  'findings.appeared[].finding.evidence_truncated',
  'findings.disappeared[].finding.evidence',
  'findings.disappeared[].finding.evidence_truncated',
  'findings.persisted[].finding.evidence',
  'findings.persisted[].finding.evidence_truncated',
  'counts.by_check',
  'counts.by_code',
  'request.extra_specs',
  'request.image_properties',
  'recorded_request',
  'flavors[].resources',
  'zones[].resources',
  'mix.by_az[].by_flavor',
  'scenario.repairs.freed',
  'host_usage[].resources',
  'scenario.repairs.freed_by_provider[].resources',
  'scenario.options.allocation_ratios',
  'counts.changes',
]

/** A position inside `simulation` (simulate migrate) holds the same data as at the top of simulate boot. */
const DATA = new Set([...COMMON_DATA, ...COMMON_DATA.map((p) => `simulation.${p}`)])

/**
 * Where a document holds findings (audit: `findings`; snapshot diff: each side's `finding`): their
 * evidence is cut there to EVIDENCE_ROWS rows per array (src/lib/output/evidence.ts), the one place
 * every machine format passes through.
 */
const FINDINGS = new Set(['findings[]', 'findings.appeared[].finding', 'findings.disappeared[].finding', 'findings.persisted[].finding'])

/** Fields no document carries: how long something took differs from run to run (see `npm run bench`). */
const DROPPED = new Set(['timings'])

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

export interface ViewOptions {
  /** --full-evidence: every row of every finding's evidence (else EVIDENCE_ROWS per array). */
  fullEvidence?: boolean
}

function view(value: unknown, path: string, opts: ViewOptions): unknown {
  if (DATA.has(path)) return value
  if (Array.isArray(value)) return value.map((v) => view(v, `${path}[]`, opts))
  if (!isPlainObject(value)) return value
  const fields: Record<string, unknown> =
    FINDINGS.has(path) && 'evidence' in value ? capFinding(value as {evidence: unknown}, opts.fullEvidence ? null : EVIDENCE_ROWS) : value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(fields)) {
    if (path === '' && DROPPED.has(k)) continue
    const name = RENAMES[k] ?? k
    out[name] = view(v, path === '' ? name : `${path}.${name}`, opts)
  }
  return out
}

/**
 * The document every machine format prints: `exit_code` (the command's exit status, as the process
 * ends with it), `warnings` (what the command wants the operator to know; [] when nothing), then the
 * result with its keys in snake_case, findings' evidence cut to EVIDENCE_ROWS rows per array unless
 * `opts.fullEvidence` (see evidence.ts). Error documents (`{error: ...}`) are left as they are.
 */
export function jsonDocument(result: unknown, exitCode: number, opts: ViewOptions = {}): unknown {
  if (!isPlainObject(result) || 'error' in result) return result
  const body = view(result, '', opts) as Record<string, unknown>
  const {exit_code: own, warnings, ...rest} = body
  return {
    exit_code: typeof own === 'number' ? own : exitCode,
    warnings: Array.isArray(warnings) ? warnings : [],
    ...rest,
  }
}

type Snake<S extends string> = S extends `${infer H}${infer R}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${Snake<R>}` : S

/**
 * The type of a result's JSON view, for code that reads the documents (tests, scripts): field names
 * in snake_case; maps keep their `string` keys. (RENAMES is what the view does; this follows it.)
 */
export type JsonOf<T> =
  T extends ReadonlyArray<infer U>
    ? Array<JsonOf<U>>
    : T extends object
      ? {[K in keyof T as K extends 'timings' ? never : K extends string ? Snake<K> : K]: JsonOf<T[K]>}
      : T
