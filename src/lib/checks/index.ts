/**
 * The audits: pure functions of a CloudModel. `runChecks` runs the requested checks over one shared
 * set of indexes, filters and orders the findings, and counts them.
 */
import {type CheckName, type Finding, SEVERITY_ORDER, type Severity} from '../domain/finding.js'
import {type CloudModel} from '../domain/model.js'
import {checkAggregates} from './aggregates.js'
import {checkBlobs} from './blobs.js'
import {checkCells} from './cells.js'
import {AuditContext} from './context.js'
import {checkLeaks} from './leaks.js'
import {checkPinning} from './pinning.js'
import {checkProviders} from './providers.js'
import {AUDIT_CHECKS, type AuditCounts, type AuditOptions, type AuditReport, emptySeverityCounts} from './types.js'
import {checkUsage} from './usage.js'

export {checkAggregates} from './aggregates.js'
export {checkBlobs} from './blobs.js'
export {checkCells} from './cells.js'
export {AuditContext, LiveInstanceIndex, TextMemo} from './context.js'
export {expectedResources, resourcesFromFlavor} from './flavor-resources.js'
export {checkLeaks, classifyAllocations} from './leaks.js'
export {checkPinning} from './pinning.js'
export {checkProviders} from './providers.js'
export {checkUsage} from './usage.js'
export * from './types.js'

type CheckFn = (model: CloudModel, ctx: AuditContext) => Finding[]

export const CHECKS: Record<CheckName, CheckFn> = {
  leaks: checkLeaks,
  providers: checkProviders,
  cells: checkCells,
  pinning: checkPinning,
  usage: checkUsage,
  aggregates: checkAggregates,
  snapshot: checkBlobs,
}

/** Every finding code, its check and its severity (docs/checks.md documents each). */
export const FINDING_CODES: Record<string, {check: CheckName; severity: Severity | 'info|warning'; summary: string}> = {
  'allocation.consumer-deleted': {check: 'leaks', severity: 'error', summary: 'allocation held by an instance soft-deleted in its cell'},
  'allocation.consumer-unknown': {check: 'leaks', severity: 'error', summary: 'allocation whose consumer is no instance in any cell and no migration'},
  'allocation.migration-finished': {check: 'leaks', severity: 'error', summary: 'allocation held by a migration that is over (confirmed, reverted, done, completed, error, failed, cancelled)'},
  'allocation.wrong-provider': {check: 'leaks', severity: 'error', summary: "allocation on a provider that is not the consumer's node, with no migration in progress"},
  'allocation.evacuation-leftover': {check: 'leaks', severity: 'warning', summary: 'allocation left on the source of a done evacuation'},
  'allocation.missing': {check: 'leaks', severity: 'error', summary: 'live instance on a host with no allocation at all'},
  'allocation.amount-mismatch': {check: 'leaks', severity: 'warning', summary: 'allocation amounts differ from what the flavor asks'},
  'allocation.consumer-incomplete': {check: 'leaks', severity: 'warning', summary: 'consumer without a consumers row or with no project/user'},
  'allocation.undecided': {check: 'leaks', severity: 'unknown', summary: 'a cell could not be read: consumers that may live there are not judged'},
  'provider.stale': {check: 'providers', severity: 'warning', summary: 'provider with no compute node, a deleted one, or a deleted nova-compute service'},
  'provider.uuid-mismatch': {check: 'providers', severity: 'error', summary: "a provider carries a live compute node's name under another uuid"},
  'provider.missing': {check: 'providers', severity: 'warning', summary: 'live compute node with no provider'},
  'provider.duplicate-name': {check: 'providers', severity: 'warning', summary: 'several providers for one hostname'},
  'provider.over-capacity': {check: 'providers', severity: 'error', summary: 'usage above (total - reserved) x allocation_ratio'},
  'provider.inventory-drift': {check: 'providers', severity: 'warning', summary: "inventory totals differ from the compute node's vcpus / memory_mb / local_gb"},
  'provider.undecided': {check: 'providers', severity: 'unknown', summary: 'a cell could not be read: providers that may belong to it are not judged'},
  'cell.instance-unmapped': {check: 'cells', severity: 'error', summary: 'instance live in a cell with no instance_mapping'},
  'cell.instance-mapped-wrong-cell': {check: 'cells', severity: 'error', summary: 'instance_mapping with a NULL or another cell than the one the instance lives in'},
  'cell.instance-duplicate': {check: 'cells', severity: 'error', summary: 'instance live in two cells'},
  'cell.instance-mapping-stale': {check: 'cells', severity: 'info', summary: 'instance_mapping of an instance deleted long ago or archived'},
  'cell.build-request-stale': {check: 'cells', severity: 'warning', summary: 'build_request of an instance that already exists in a cell'},
  'cell.host-unmapped': {check: 'cells', severity: 'error', summary: 'nova-compute host with no host_mapping'},
  'cell.host-mapping-stale': {check: 'cells', severity: 'warning', summary: 'host_mapping whose host has no live nova-compute service'},
  'cell.host-mapped-wrong-cell': {check: 'cells', severity: 'error', summary: 'host mapped to another cell than the one its service lives in'},
  'cell.undecided': {check: 'cells', severity: 'unknown', summary: 'a cell could not be read'},
  'pinning.leaked': {check: 'pinning', severity: 'error', summary: 'pCPUs in pinned_cpus that no live instance pins'},
  'pinning.unaccounted': {check: 'pinning', severity: 'warning', summary: 'pCPUs live instances pin that are missing from pinned_cpus'},
  'pinning.overlap': {check: 'pinning', severity: 'error', summary: 'one pCPU pinned by two instances'},
  'pinning.outside-dedicated-set': {check: 'pinning', severity: 'warning', summary: 'pins outside the host cell pcpuset (cpu_dedicated_set)'},
  'pinning.placement-drift': {check: 'pinning', severity: 'warning', summary: 'placement PCPU usage differs from the number of pinned pCPUs'},
  'pinning.undecided': {check: 'pinning', severity: 'unknown', summary: 'a cell could not be read'},
  'usage.node-drift': {check: 'usage', severity: 'warning', summary: 'compute node *_used / free_* / running_vms differ from the live instances'},
  'usage.negative-free': {check: 'usage', severity: 'info|warning', summary: 'negative free values: info when overcommit within the allocation ratio, warning beyond it'},
  'usage.undecided': {check: 'usage', severity: 'unknown', summary: 'a cell could not be read'},
  'aggregate.missing-in-placement': {check: 'aggregates', severity: 'warning', summary: "host in a nova aggregate whose provider lacks the placement aggregate"},
  'aggregate.extra-in-placement': {check: 'aggregates', severity: 'warning', summary: 'provider in the placement aggregate of a nova aggregate that does not list its host'},
  'aggregate.host-not-found': {check: 'aggregates', severity: 'warning', summary: 'nova aggregate lists a host with no live compute node'},
  'aggregate.az-conflict': {check: 'aggregates', severity: 'error', summary: 'host in two availability zones'},
  'aggregate.no-uuid': {check: 'aggregates', severity: 'warning', summary: 'nova aggregate without a uuid'},
  'aggregate.undecided': {check: 'aggregates', severity: 'unknown', summary: 'a cell could not be read'},
  'snapshot.unreadable-blob': {check: 'snapshot', severity: 'error', summary: 'a JSON column nova wrote cannot be read'},
}

const CHECK_ORDER: Record<CheckName, number> = {snapshot: 0, leaks: 1, providers: 2, cells: 3, pinning: 4, usage: 5, aggregates: 6}

export function runChecks(model: CloudModel, opts: AuditOptions = {}): AuditReport {
  const wanted = opts.checks && opts.checks.length > 0 ? [...new Set(opts.checks)] : [...AUDIT_CHECKS]
  // Unreadable blobs are always reported: every conclusion drawn without them is partial.
  const checks = wanted.includes('snapshot') ? wanted : (['snapshot', ...wanted] as CheckName[])
  checks.sort((a, b) => CHECK_ORDER[a] - CHECK_ORDER[b])
  const ctx = new AuditContext(model)
  let findings: Finding[] = []
  for (const name of checks) for (const f of CHECKS[name](model, ctx)) findings.push(f)
  findings = sortFindings(filterFindings(model, findings, opts))
  return {
    findings,
    counts: countFindings(findings, checks),
    checks,
    unavailableCells: model.unavailableCells.map((c) => ({uuid: c.uuid, name: c.name, ...(c.error ? {error: c.error} : {})})),
  }
}

export function filterFindings(model: CloudModel, findings: Finding[], opts: AuditOptions): Finding[] {
  let out = findings
  if (opts.cell) {
    const c = model.snapshot.cells.find((x) => x.uuid === opts.cell || x.name === opts.cell)
    const uuid = c?.uuid ?? opts.cell
    const name = c?.name ?? opts.cell
    out = out.filter((f) => f.subject.cell_uuid === uuid || (f.subject.cell ?? '').split(',').includes(name))
  }
  if (opts.host) {
    const h = opts.host
    out = out.filter((f) => f.subject.host === h || f.subject.node === h)
  }
  if (opts.severity) {
    const min = SEVERITY_ORDER[opts.severity]
    out = out.filter((f) => SEVERITY_ORDER[f.severity] >= min)
  }
  return out
}

/** Same order as compareFindings, with each subject key computed once (100k findings sort in ms). */
export function sortFindings(findings: Finding[]): Finding[] {
  const keyed = findings.map((f) => ({f, k: subjectKey(f)}))
  keyed.sort(
    (a, b) =>
      CHECK_ORDER[a.f.check] - CHECK_ORDER[b.f.check] ||
      SEVERITY_ORDER[b.f.severity] - SEVERITY_ORDER[a.f.severity] ||
      (a.f.code < b.f.code ? -1 : a.f.code > b.f.code ? 1 : 0) ||
      (a.k < b.k ? -1 : a.k > b.k ? 1 : 0),
  )
  return keyed.map((x) => x.f)
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    CHECK_ORDER[a.check] - CHECK_ORDER[b.check] ||
    SEVERITY_ORDER[b.severity] - SEVERITY_ORDER[a.severity] ||
    a.code.localeCompare(b.code) ||
    subjectKey(a).localeCompare(subjectKey(b))
  )
}

const subjectKey = (f: Finding): string =>
  [f.subject.cell, f.subject.host, f.subject.node, f.subject.numa_cell, f.subject.provider_uuid, f.subject.consumer_uuid, f.subject.instance_uuid, f.subject.aggregate].join('|')

export function countFindings(findings: Finding[], checks: CheckName[]): AuditCounts {
  const counts: AuditCounts = {total: findings.length, bySeverity: emptySeverityCounts(), byCheck: {}, byCode: {}}
  for (const name of checks) counts.byCheck[name] = emptySeverityCounts()
  for (const f of findings) {
    counts.bySeverity[f.severity]++
    ;(counts.byCheck[f.check] ??= emptySeverityCounts())[f.severity]++
    counts.byCode[f.code] = (counts.byCode[f.code] ?? 0) + 1
  }
  return counts
}

/** 3 when something needs action (error, warning or unknown); info findings explain and do not fail. */
export function auditExitCode(report: AuditReport): 0 | 3 {
  const c = report.counts.bySeverity
  return c.error + c.warning + c.unknown > 0 ? 3 : 0
}
