import type {ValidationProblem} from '../snapshot/schema.js'
import type {SnapshotSummary} from '../snapshot/summary.js'
import type {BlobError} from '../domain/model.js'
import {databaseReleaseLabel, type SnapshotRelease} from '../domain/release.js'
import type {Display} from './display.js'
import {renderTable} from './table.js'
import {theme} from './theme.js'

export function renderSummary(s: SnapshotSummary, d: Display): string {
  const c = theme()
  const out: string[] = []
  out.push(`${c.bold('Snapshot')} captured ${s.captured_at} from ${s.source.kind}: ${s.source.description}`)
  // One line per database: which server answered, and on Galera which node and how causal the read was.
  for (const r of s.read_from)
    out.push(
      `  ${r.database} read from ${r.wsrep_node_name === null ? '' : `Galera node ${r.wsrep_node_name}, `}${r.hostname ?? '?'}:${r.port ?? '?'}${r.wsrep_sync_wait === null ? '' : ` (wsrep_sync_wait ${r.wsrep_sync_wait})`}`,
    )
  out.push(releaseLine(s.release))
  // A snapshot that records no release gets no column of question marks.
  const withRelease = s.release !== null
  out.push(
    renderTable(
      d,
      ['cell', 'uuid', ...(withRelease ? ['release'] : []), 'state', 'compute services (down/disabled)', 'hosts', 'instances', 'soft-deleted'],
      s.cells.map((cell) => [
        cell.name ?? '(unnamed)',
        cell.uuid,
        ...(withRelease ? [cell.release ?? '?'] : []),
        cell.status === 'available' ? c.green(cell.disabled ? 'available, disabled' : 'available') : c.red(`UNAVAILABLE: ${cell.error ?? 'not read'}`),
        cell.status === 'available' ? `${cell.compute_services} (${cell.compute_services_down}/${cell.compute_services_disabled})` : '?',
        cell.status === 'available' ? cell.hosts : '?',
        cell.status === 'available' ? cell.instances : '?',
        cell.status === 'available' ? cell.instances_deleted : '?',
      ]),
      {align: ['left', 'left', ...(withRelease ? ['left' as const] : []), 'left', 'right', 'right', 'right', 'right']},
    ),
  )
  const t = s.totals
  const states = Object.entries(t.instances_by_vm_state)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')
  out.push(
    renderTable(
      d,
      ['what', 'count'],
      [
        ['hosts (live compute nodes)', t.hosts],
        [`instances (live${states ? `: ${states}` : ''})`, t.instances],
        ['flavors', t.flavors],
        ['host aggregates', t.aggregates],
        ['host mappings', t.host_mappings],
        ['instance mappings', t.instance_mappings],
        ['build requests', t.build_requests],
        ['resource providers (root)', `${t.resource_providers} (${t.root_providers})`],
        ['allocations', t.allocations],
        ['consumers', t.consumers],
        ['unreadable JSON blobs', t.unreadable_blobs === 0 ? 0 : c.yellow(String(t.unreadable_blobs))],
      ],
      {align: ['left', 'right']},
    ),
  )
  const unavailable = s.cells.filter((x) => x.status !== 'available')
  if (unavailable.length > 0) {
    out.push(c.red(`${unavailable.length} cell(s) could not be read: their hosts and instances are unknown, not absent.`))
  }
  return out.join('\n')
}

/** 'Release 2025.1 (nova_api 2023.2 or later (alembic cdeec0c85668), placement ...)'. */
export function releaseLine(r: SnapshotRelease | null): string {
  if (r === null) return `${theme().bold('Release')} not recorded (a snapshot written before cloudctl read it, or a generated cloud)`
  return `${theme().bold('Release')} ${r.name} (nova_api ${databaseReleaseLabel(r.nova_api)}, placement ${databaseReleaseLabel(r.placement)})`
}

export function renderValidation(path: string, problems: ValidationProblem[], blobErrors: BlobError[]): string {
  const c = theme()
  const out: string[] = []
  if (problems.length === 0) out.push(c.green(`${path}: valid cloudctl snapshot`))
  else {
    out.push(c.red(`${path}: ${problems.length} structural problem(s)`))
    for (const p of problems) out.push(`  ${p.where} ${p.problem}`)
  }
  if (blobErrors.length > 0) {
    out.push(c.yellow(`${blobErrors.length} unreadable JSON blob(s) (reported as findings by the audits):`))
    for (const b of blobErrors.slice(0, 20)) out.push(`  ${b.table}.${b.column} of ${b.subject}: ${b.error}`)
    if (blobErrors.length > 20) out.push(`  ... and ${blobErrors.length - 20} more`)
  }
  return out.join('\n')
}

/**
 * The first lines of a human audit report: what was read and when, the release, how big the cloud
 * is (as the HTML report's header says), so that a report pasted into a ticket names its source.
 */
export function reportHeader(
  snapshot: {source: {kind: string; description: string}; captured_at: string; release?: SnapshotRelease | null; cells: ReadonlyArray<{status: string}>},
  hosts: number,
): string {
  const c = theme()
  const cells = snapshot.cells.length
  const down = snapshot.cells.filter((x) => x.status !== 'available').length
  const release = snapshot.release ? snapshot.release.name : 'release not recorded'
  return [
    `${c.bold('Read')} ${snapshot.source.kind === 'live' ? 'live databases' : snapshot.source.kind}: ${snapshot.source.description}`,
    `${c.bold('Captured')} ${snapshot.captured_at} · ${release} · ${cells} cell(s)${down > 0 ? ` (${down} not read)` : ''} · ${hosts} compute host(s)`,
  ].join('\n')
}
