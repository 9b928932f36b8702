/**
 * The audits: pure functions of a CloudModel. `runChecks` runs the requested checks over one shared
 * set of indexes, filters and orders the findings, and counts them.
 */
import {type CheckName, type Finding, needsAction, SEVERITY_ORDER, type Severity} from '../domain/finding.js'
import {type CloudModel} from '../domain/model.js'
import {AuditContext} from './context.js'
import {UNITS} from './registry.js'
import {AUDIT_CHECKS, type AuditCounts, type AuditOptions, type AuditReport, emptySeverityCounts} from './types.js'
import type {CheckUnit} from './unit.js'

export {AuditContext} from './context.js'
export {expectedResources, resourcesFromFlavor} from './flavor-resources.js'
export {classifyAllocations} from './leaks/classify.js'
export {UNITS} from './registry.js'
export type {CheckUnit, CodeExplanation} from './unit.js'
export * from './types.js'

/** Every finding code, its check, its severity and its one-line summary (docs/checks.md documents each). */
export const FINDING_CODES: Record<string, {check: CheckName; severity: Severity | 'info|warning'; summary: string}> = Object.fromEntries(
  UNITS.map((u) => [u.code, {check: u.check, severity: u.severity, summary: u.summary}]),
)

/** The units of each check, in registry order. */
const UNITS_BY_CHECK = new Map<CheckName, CheckUnit[]>()
for (const u of UNITS) UNITS_BY_CHECK.set(u.check, [...(UNITS_BY_CHECK.get(u.check) ?? []), u])

const CHECK_ORDER: Record<CheckName, number> = {snapshot: 0, leaks: 1, providers: 2, cells: 3, pinning: 4, usage: 5, aggregates: 6}

export function runChecks(model: CloudModel, opts: AuditOptions = {}): AuditReport {
  const wanted = opts.checks && opts.checks.length > 0 ? [...new Set(opts.checks)] : [...AUDIT_CHECKS]
  // Unreadable blobs are always reported: every conclusion drawn without them is partial.
  const checks = wanted.includes('snapshot') ? wanted : (['snapshot', ...wanted] as CheckName[])
  checks.sort((a, b) => CHECK_ORDER[a] - CHECK_ORDER[b])
  const ctx = new AuditContext(model)
  let findings: Finding[] = []
  for (const name of checks) for (const unit of UNITS_BY_CHECK.get(name) ?? []) for (const f of unit.run(ctx)) findings.push(f)
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

/** By check, severity (worst first), code and subject, each subject key computed once (100k findings sort in ms); stable, so a unit's own order breaks ties. */
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

const subjectKey = (f: Finding): string =>
  [
    f.subject.cell,
    f.subject.host,
    f.subject.node,
    f.subject.numa_cell,
    f.subject.provider_uuid,
    f.subject.consumer_uuid,
    f.subject.instance_uuid,
    f.subject.aggregate,
  ].join('|')

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
  return (Object.keys(c) as Severity[]).some((s) => c[s] > 0 && needsAction(s)) ? 3 : 0
}
