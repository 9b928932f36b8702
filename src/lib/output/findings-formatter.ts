/**
 * Human rendering of an audit report: one table per check, coloured like a diagnosis (red errors,
 * yellow warnings, magenta unknowns, green info), a summary line per check, and for `audit all` a
 * table of counts by check and severity.
 */
import type {CheckName, Finding, FindingSubject, Severity} from '../domain/finding.js'
import type {Display} from './display.js'
import {renderTable} from './table.js'
import {severityColor, theme} from './theme.js'

interface ReportLike {
  findings: Finding[]
  checks: CheckName[]
  counts: {total: number; bySeverity: Record<Severity, number>; byCheck: Partial<Record<CheckName, Record<Severity, number>>>}
  unavailableCells: Array<{uuid: string; name: string | null; error?: string}>
}

const SEVERITIES: Severity[] = ['error', 'unknown', 'warning', 'info']

export function formatSubject(s: FindingSubject): string {
  const parts: string[] = []
  if (s.cell) parts.push(`cell=${s.cell}`)
  if (s.host) parts.push(`host=${s.host}`)
  if (s.node && s.node !== s.host) parts.push(`node=${s.node}`)
  if (s.numa_cell !== undefined) parts.push(`numa=${s.numa_cell}`)
  if (s.aggregate) parts.push(`aggregate=${s.aggregate}`)
  if (s.provider_uuid) parts.push(`rp=${s.provider_uuid}`)
  if (s.migration_uuid) parts.push(`migration=${s.migration_uuid}`)
  if (s.consumer_uuid && s.consumer_uuid !== s.instance_uuid && s.consumer_uuid !== s.migration_uuid) parts.push(`consumer=${s.consumer_uuid}`)
  if (s.instance_uuid) parts.push(`instance=${s.instance_uuid}`)
  return parts.join('\n')
}

// Below this, five columns leave each a few characters: two columns, what and where | why and how.
const WIDE_LAYOUT = 160

function findingsTable(d: Display, check: CheckName, findings: Finding[]): string {
  const c = theme()
  const width = d.width
  if (width === undefined || width >= WIDE_LAYOUT) {
    const rows = findings.map((f) => [severityColor(f.severity, c)(f.severity), f.code, formatSubject(f.subject), f.message, f.repair ?? ''])
    return renderTable(d, ['Severity', 'Code', 'Subject', 'Finding', 'Repair'], rows, {title: `audit ${check}`, wrap: [3, 4]})
  }
  const rows = findings.map((f) => [
    `${severityColor(f.severity, c)(f.severity)} ${f.code}\n${formatSubject(f.subject)}`,
    f.repair ? `${f.message}\n→ ${f.repair}` : f.message,
  ])
  return renderTable(d, ['Severity, code, subject', 'Finding → repair'], rows, {title: `audit ${check}`, wrap: [1]})
}

function summaryLine(check: CheckName, counts: Record<Severity, number> | undefined): string {
  const c = theme()
  const n = counts ?? {error: 0, unknown: 0, warning: 0, info: 0}
  const total = SEVERITIES.reduce((s, k) => s + n[k], 0)
  if (total === 0) return `${c.green('✔')} ${check}: no findings`
  const worst = SEVERITIES.find((k) => n[k] > 0) as Severity
  const mark = worst === 'info' ? c.green('ℹ') : severityColor(worst, c)('✖')
  const parts = SEVERITIES.filter((k) => n[k] > 0).map((k) => severityColor(k, c)(`${n[k]} ${k}`))
  return `${mark} ${check}: ${total} finding${total === 1 ? '' : 's'} (${parts.join(', ')})`
}

export function renderFindings(report: ReportLike, d: Display, opts: {summaryTable?: boolean} = {}): string {
  const c = theme()
  const out: string[] = []
  for (const cell of report.unavailableCells) {
    out.push(
      c.magenta(`! cell ${cell.name ?? cell.uuid} could not be read${cell.error ? ` (${cell.error})` : ''}: its checks report "unknown", never a conclusion.`),
    )
  }
  for (const check of report.checks) {
    const findings = report.findings.filter((f) => f.check === check)
    if (findings.length > 0) {
      out.push(findingsTable(d, check, findings))
    }
    // The snapshot's own consistency check is news only when it finds something.
    if (check !== 'snapshot' || findings.length > 0) out.push(summaryLine(check, report.counts.byCheck[check]))
  }
  if (opts.summaryTable) {
    const rows = report.checks.map((check) => {
      const n = report.counts.byCheck[check] ?? {error: 0, unknown: 0, warning: 0, info: 0}
      return [check, ...SEVERITIES.map((k) => (n[k] > 0 ? severityColor(k, c)(String(n[k])) : '0')), SEVERITIES.reduce((s, k) => s + n[k], 0)]
    })
    rows.push(['total', ...SEVERITIES.map((k) => String(report.counts.bySeverity[k])), report.counts.total])
    out.push(
      renderTable(d, ['Check', 'error', 'unknown', 'warning', 'info', 'total'], rows, {
        title: 'summary',
        align: ['left', 'right', 'right', 'right', 'right', 'right'],
      }),
    )
  }
  return out.join('\n\n')
}
