/**
 * Human rendering of `snapshot diff`: the findings that appeared (with the rows that changed under
 * them), those that disappeared, a count of those that persisted, and the row changes by kind.
 */
import type {DiffedFinding, RowChange, SnapshotDiff} from '../snapshot/diff.js'
import {formatSubject} from './findings-formatter.js'
import {severityColor, theme} from './theme.js'

const cpus = (l: number[]): string => (l.length === 0 ? '-' : l.join(','))
const where = (p: {cell: string; host: string | null; node: string | null}): string =>
  `${p.host ?? '?'}${p.node && p.node !== p.host ? `/${p.node}` : ''} (${p.cell})`

export function describeChange(c: RowChange): string {
  switch (c.kind) {
    case 'instance-moved':
      return `instance ${c.instance_uuid}${c.name ? ` (${c.name})` : ''} moved ${where(c.from)} -> ${where(c.to)}`
    case 'instance-added':
      return `instance ${c.instance_uuid}${c.name ? ` (${c.name})` : ''} appeared on ${where(c.at)}`
    case 'instance-removed':
      return `instance ${c.instance_uuid}${c.name ? ` (${c.name})` : ''} gone from ${where(c.at)}`
    case 'allocation-added':
      return `allocation added: consumer ${c.consumer_uuid} ${c.resource_class}=${c.used} on ${c.provider ?? c.provider_uuid}`
    case 'allocation-removed':
      return `allocation removed: consumer ${c.consumer_uuid} ${c.resource_class}=${c.used} on ${c.provider ?? c.provider_uuid}`
    case 'allocation-changed':
      return `allocation changed: consumer ${c.consumer_uuid} ${c.resource_class} ${c.before} -> ${c.after} on ${c.provider ?? c.provider_uuid}`
    case 'provider-added':
      return `provider added: ${c.provider ?? '(no name)'} ${c.provider_uuid}`
    case 'provider-removed':
      return `provider removed: ${c.provider ?? '(no name)'} ${c.provider_uuid}`
    case 'pinned-cpus-changed':
      return `pinned CPUs of ${c.node ?? c.host ?? '?'} NUMA cell ${c.numa_cell}: ${cpus(c.before)} -> ${cpus(c.after)}${c.added.length ? ` (+${cpus(c.added)})` : ''}${c.removed.length ? ` (-${cpus(c.removed)})` : ''}`
  }
}

/** Changes listed under a finding at most; the rest are counted (all of them are in --json). */
const MAX_RELATED = 8
const MAX_LISTED = 200

export function renderDiff(d: SnapshotDiff): string {
  const c = theme()
  const out: string[] = []
  out.push(`${c.bold('Before')} ${d.before.captured_at}  ${d.before.source}`)
  out.push(`${c.bold('After')}  ${d.after.captured_at}  ${d.after.source}`)
  out.push('')
  const finding = (x: DiffedFinding, mark: string): string[] => {
    const f = x.finding
    const lines = [`${mark} ${severityColor(f.severity, c)(f.severity)} ${f.code} ${formatSubject(f.subject).replace(/\n/g, ' ')}`, `    ${f.message}`]
    for (const i of x.related.slice(0, MAX_RELATED)) lines.push(`    · ${describeChange(d.changes[i])}`)
    if (x.related.length > MAX_RELATED) lines.push(`    · … ${x.related.length - MAX_RELATED} more change(s)`)
    return lines
  }
  out.push(c.bold(`Appeared (${d.counts.appeared})`))
  for (const x of d.findings.appeared.slice(0, MAX_LISTED)) out.push(...finding(x, c.red('+')))
  if (d.counts.appeared > MAX_LISTED) out.push(`  … ${d.counts.appeared - MAX_LISTED} more (see --json)`)
  out.push('', c.bold(`Disappeared (${d.counts.disappeared})`))
  for (const x of d.findings.disappeared.slice(0, MAX_LISTED)) out.push(...finding(x, c.green('-')))
  if (d.counts.disappeared > MAX_LISTED) out.push(`  … ${d.counts.disappeared - MAX_LISTED} more (see --json)`)
  out.push('', `${c.bold('Persisted')}: ${d.counts.persisted} finding(s)`)
  const kinds = Object.entries(d.counts.changes).filter(([, n]) => n > 0)
  out.push('', `${c.bold('Rows changed')}: ${kinds.length === 0 ? 'none' : kinds.map(([k, n]) => `${k} ${n}`).join(', ')}`)
  for (const ch of d.changes.slice(0, MAX_LISTED)) out.push(`  ${describeChange(ch)}`)
  if (d.changes.length > MAX_LISTED) out.push(`  … ${d.changes.length - MAX_LISTED} more (see --json)`)
  out.push('')
  out.push(
    d.counts.appeared > 0
      ? c.red(`✖ ${d.counts.appeared} new finding(s)`)
      : c.green(`✔ no new findings${d.counts.disappeared > 0 ? `, ${d.counts.disappeared} resolved` : ''}`),
  )
  return out.join('\n')
}
