/**
 * `audit all -f openmetrics`: the audit as Prometheus text exposition (format 0.0.4), for
 * node_exporter's textfile collector. Only gauges (every value is a level measured at this run, none
 * a counter), no timestamps (the textfile collector refuses them), and a final `# EOF` line, which
 * the 0.0.4 parser reads as a comment and OpenMetrics requires: the same text is valid in both.
 *
 * Placement amounts stay in each resource class's own unit (VCPU and PCPU count CPUs, MEMORY_MB MiB,
 * DISK_GB GiB): one metric carries every class under a `resource_class` label, so no single base unit
 * exists for it; the HELP text says so.
 */
import type {CapacityReport} from '../capacity/types.js'
import {capacityOf, floatRead} from '../domain/placement-capacity.js'
import type {AuditReport} from '../checks/types.js'
import type {Severity} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {terminalSafe} from './terminal.js'

export interface AuditMetricsInput {
  report: AuditReport
  model: CloudModel
  /** `simulate capacity` over every default flavor; absent when not computed. */
  capacity?: CapacityReport | null
  /** Wall time of the whole audit run (load, checks, capacity), in seconds. */
  durationSeconds: number
}

type Labels = Record<string, string>

interface Family {
  name: string
  help: string
  samples: Array<{labels: Labels; value: number}>
}

const SEVERITIES: Severity[] = ['error', 'unknown', 'warning', 'info']

/**
 * Label values: backslash, double quote and line feed escaped, as the text format requires. Before
 * that, control characters from the databases (a host or cell name with ESC or BEL) become visible
 * escapes (terminalSafe), so that `cat` of the metrics file runs nothing; the escape's backslash is
 * then escaped in turn, and a scraper reads the label as the text `\x1b`.
 */
export function escapeLabelValue(v: string): string {
  return terminalSafe(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** HELP text: backslash and line feed escaped. */
function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  if (v === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(v)
}

function renderFamily(f: Family): string[] {
  const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`]
  for (const s of f.samples) {
    const keys = Object.keys(s.labels)
    const labels = keys.length === 0 ? '' : `{${keys.map((k) => `${k}="${escapeLabelValue(s.labels[k])}"`).join(',')}}`
    lines.push(`${f.name}${labels} ${formatValue(s.value)}`)
  }
  return lines
}

/** Seconds since the epoch of an ISO 8601 time; NaN when it cannot be read. */
function epochSeconds(iso: string): number {
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? ms / 1000 : Number.NaN
}

export function auditMetricFamilies(input: AuditMetricsInput): Family[] {
  const {report, model} = input
  const families: Family[] = []
  const add = (name: string, help: string): Family['samples'] => {
    const f: Family = {name: `cloudctl_${name}`, help, samples: []}
    families.push(f)
    return f.samples
  }

  // Findings, aggregated to (check, code, severity, cell): one series per combination present.
  const byKey = new Map<string, {labels: Labels; value: number}>()
  for (const f of report.findings) {
    const cell = f.subject.cell ?? ''
    const key = `${f.check}\u0000${f.code}\u0000${f.severity}\u0000${cell}`
    const entry = byKey.get(key)
    if (entry) entry.value++
    else byKey.set(key, {labels: {check: f.check, code: f.code, severity: f.severity, cell}, value: 1})
  }
  const findings = add('audit_findings', 'Findings of this audit by check, finding code, severity and cell (cell is empty for findings of no one cell).')
  findings.push(...[...byKey.values()].sort((a, b) => (Object.values(a.labels).join('\u0000') < Object.values(b.labels).join('\u0000') ? -1 : 1)))

  // Per check and severity, zero included: an alert on "no more findings" needs the zero series.
  const perCheck = add('audit_check_findings', 'Findings of this audit by check and severity, zero included for every check that ran.')
  for (const check of report.checks) {
    const counts = report.counts.byCheck[check]
    for (const sev of SEVERITIES) perCheck.push({labels: {check, severity: sev}, value: counts?.[sev] ?? 0})
  }

  const cellUp = add('audit_cell_readable', '1 when the cell database could be read, 0 when it could not (its checks report unknown).')
  for (const c of [...model.snapshot.cells].sort((a, b) => (a.uuid < b.uuid ? -1 : 1))) {
    cellUp.push({labels: {cell: c.name ?? c.uuid, cell_uuid: c.uuid}, value: c.status === 'available' ? 1 : 0})
  }
  add('audit_unknown_cells', 'Cells that could not be read in this audit.').push({labels: {}, value: report.unavailableCells.length})

  // Placement, per provider and resource class, computed as placement does.
  const inventory = add(
    'provider_inventory',
    'Placement inventory total per provider and resource class, in the class unit (CPUs, MiB for MEMORY_MB, GiB for DISK_GB).',
  )
  const reserved = add('provider_reserved', 'Placement inventory reserved per provider and resource class, in the class unit.')
  const ratio = add('provider_allocation_ratio', 'Placement allocation_ratio per provider and resource class.')
  const capacity = add(
    'provider_capacity',
    'Capacity as placement computes it, (total - reserved) * allocation_ratio, per provider and resource class, in the class unit.',
  )
  const used = add('provider_used', 'Sum of placement allocations per provider and resource class, in the class unit.')
  const providers = [...model.snapshot.placement.resource_providers].sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0))
  for (const rp of providers) {
    const invs = [...(model.inventoriesByProvider.get(rp.id) ?? [])].sort((a, b) => a.resource_class_id - b.resource_class_id)
    for (const inv of invs) {
      const labels = {provider: rp.name ?? '', provider_uuid: rp.uuid, resource_class: model.rc.name(inv.resource_class_id)}
      inventory.push({labels, value: inv.total})
      reserved.push({labels, value: inv.reserved})
      ratio.push({labels, value: floatRead(inv.allocation_ratio)})
      capacity.push({labels, value: capacityOf(inv)})
      used.push({labels, value: model.usage(rp.id, inv.resource_class_id)})
    }
  }

  if (input.capacity) {
    const fits = add('capacity_instances', 'More instances of the flavor that fit now, counted by the scheduler simulation (as `cloudctl simulate capacity`).')
    const naive = add(
      'capacity_naive_instances',
      'More instances of the flavor by dividing free placement capacity (the estimate capacity_instances corrects).',
    )
    for (const f of input.capacity.flavors) {
      if (f.error) continue
      fits.push({labels: {flavor: f.flavor}, value: f.fits})
      naive.push({labels: {flavor: f.flavor}, value: f.naive})
    }
  }

  add('audit_duration_seconds', 'Wall time of this audit run: reading the snapshot, the checks and the capacity count.').push({
    labels: {},
    value: input.durationSeconds,
  })
  add('snapshot_timestamp_seconds', 'When the audited snapshot was captured, in seconds since the epoch.').push({
    labels: {},
    value: epochSeconds(model.snapshot.captured_at),
  })
  return families
}

export function renderOpenMetrics(input: AuditMetricsInput): string {
  const lines: string[] = []
  for (const f of auditMetricFamilies(input)) lines.push(...renderFamily(f))
  lines.push('# EOF')
  return `${lines.join('\n')}\n`
}
