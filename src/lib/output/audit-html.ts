/**
 * `audit all --html FILE`: one standalone page (inline CSS, no script, no network, like the capacity
 * report) with the counts per check and severity, every finding with its evidence and repair
 * command, and per host a strip of placement capacity against usage per resource class, with the
 * host's findings marked on it. Every string from a database goes through escapeHtml.
 */
import {capacityOf} from '../domain/placement-capacity.js'
import type {AuditReport} from '../checks/types.js'
import type {Finding, Severity} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, ResourceProvider} from '../domain/snapshot.js'
import {escapeHtml} from './capacity-html.js'
import {capEvidence, truncationLines} from './evidence.js'
import {formatSubject} from './findings-formatter.js'

const SEVERITIES: Severity[] = ['error', 'unknown', 'warning', 'info']
const SEV_COLORS: Record<Severity, string> = {error: '#b3261e', unknown: '#8e44ad', warning: '#b7791f', info: '#2e7d4f'}
const CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'] as const
const COLORS: Record<string, string> = {VCPU: '#2f6fb3', PCPU: '#8e44ad', MEMORY_MB: '#d9822b', DISK_GB: '#3a9d5d'}
/** A page an operator opens: beyond these, the rest is counted and left to --json. */
const MAX_FINDINGS = 2000
const MAX_HOSTS = 1000
/** Evidence text per finding (its lists already cut to EVIDENCE_ROWS rows), beyond which it is cut. */
const MAX_EVIDENCE_CHARS = 20_000

export interface HostStrip {
  host: string
  node: string
  cell: string
  provider_uuid: string | null
  resources: Array<{rc: string; capacity: number; used: number}>
  /** Indexes into report.findings of this host's findings. */
  findings: number[]
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : (Math.round(x * 10) / 10).toString())

/** Per live compute node: placement capacity and usage of its provider, and the findings about it. */
export function hostStrips(report: AuditReport, model: CloudModel): HostStrip[] {
  const byName = new Map<string, number[]>()
  const byProvider = new Map<string, number[]>()
  const push = (m: Map<string, number[]>, k: string | undefined, i: number) => {
    if (!k) return
    const l = m.get(k)
    if (l) l.push(i)
    else m.set(k, [i])
  }
  report.findings.forEach((f, i) => {
    push(byName, f.subject.host, i)
    if (f.subject.node !== f.subject.host) push(byName, f.subject.node, i)
    push(byProvider, f.subject.provider_uuid, i)
  })
  const providerOf = (cn: ComputeNode): ResourceProvider | undefined =>
    (cn.uuid ? model.providersByUuid.get(cn.uuid) : undefined) ??
    (model.providersByName.get(cn.hypervisor_hostname ?? '') ?? []).find((p) => p.parent_provider_id === null)
  const resourcesOf = (rp: ResourceProvider): HostStrip['resources'] =>
    CLASSES.flatMap((rc) => {
      const rcId = model.rc.id(rc)
      const inv = rcId === undefined ? undefined : model.inventory(rp.id, rcId)
      return inv && rcId !== undefined ? [{rc, capacity: capacityOf(inv), used: model.usage(rp.id, rcId)}] : []
    })
  const strips = model.liveComputeNodes.map((cn): HostStrip => {
    const rp = providerOf(cn)
    const resources = rp ? resourcesOf(rp) : []
    const idx = new Set([
      ...(byName.get(cn.host ?? '') ?? []),
      ...(byName.get(cn.hypervisor_hostname ?? '') ?? []),
      ...(rp ? (byProvider.get(rp.uuid) ?? []) : []),
    ])
    return {
      host: cn.host ?? '',
      node: cn.hypervisor_hostname ?? '',
      cell: model.cellLabel(cn.cell_uuid),
      provider_uuid: rp?.uuid ?? null,
      resources,
      findings: [...idx].sort((a, b) => a - b),
    }
  })
  // Providers with findings that no live compute node claims (stale, deleted node): a row of their own,
  // or the leaks on them would be marked nowhere.
  const shown = new Set(strips.map((x) => x.provider_uuid).filter((u): u is string => u !== null))
  for (const rp of model.snapshot.placement.resource_providers) {
    const idx = byProvider.get(rp.uuid)
    if (!idx || shown.has(rp.uuid)) continue
    const resources = resourcesOf(rp)
    strips.push({
      host: rp.name ?? rp.uuid,
      node: rp.name ?? '',
      cell: 'provider without a live compute node',
      provider_uuid: rp.uuid,
      resources,
      findings: [...idx],
    })
  }
  // Hosts with findings first (worst first), then by name: the page opens on what needs a look.
  const worst = (s: HostStrip) => Math.min(4, ...s.findings.map((i) => SEVERITIES.indexOf(report.findings[i].severity)))
  return strips.sort((a, b) => worst(a) - worst(b) || (a.host < b.host ? -1 : a.host > b.host ? 1 : a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
}

function summaryTable(report: AuditReport): string {
  const head = ['check', ...SEVERITIES, 'total'].map((h) => `<th>${h}</th>`).join('')
  const rows = report.checks.map((check) => {
    const c = report.counts.byCheck[check] ?? {error: 0, unknown: 0, warning: 0, info: 0}
    const total = SEVERITIES.reduce((s, k) => s + c[k], 0)
    return `<tr data-check="${check}">${[`<td>${check}</td>`, ...SEVERITIES.map((k) => `<td class="num${c[k] > 0 ? ` sev-${k}` : ''}" data-severity="${k}">${c[k]}</td>`), `<td class="num">${total}</td>`].join('')}</tr>`
  })
  const t = report.counts.bySeverity
  rows.push(`<tr class="total"><td>total</td>${SEVERITIES.map((k) => `<td class="num">${t[k]}</td>`).join('')}<td class="num">${report.counts.total}</td></tr>`)
  return `<table class="summary"><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`
}

function evidenceText(f: Finding, full: boolean): string {
  if (full) return JSON.stringify(f.evidence, null, 2) ?? '{}'
  const {evidence, truncated} = capEvidence(f.evidence)
  const text = [JSON.stringify(evidence, null, 2) ?? '{}', ...truncationLines(truncated)].join('\n')
  return text.length > MAX_EVIDENCE_CHARS
    ? `${text.slice(0, MAX_EVIDENCE_CHARS)}\n… (${text.length - MAX_EVIDENCE_CHARS} more characters: see --json --full-evidence)`
    : text
}

function findingArticle(f: Finding, i: number, full: boolean): string {
  return `<article class="finding sev-${f.severity}" id="f-${i}" data-code="${escapeHtml(f.code)}" data-severity="${f.severity}">
<header><span class="badge sev-${f.severity}">${f.severity}</span> <code class="code">${escapeHtml(f.code)}</code> <span class="subject">${escapeHtml(formatSubject(f.subject).replace(/\n/g, ' · '))}</span></header>
<p class="message">${escapeHtml(f.message)}</p>
${f.repair ? `<p class="repair">repair: <code>${escapeHtml(f.repair)}</code></p>` : '<p class="repair none">no automatic repair: see the runbook of this code</p>'}
<details><summary>evidence</summary><pre>${escapeHtml(evidenceText(f, full))}</pre></details>
</article>`
}

function strip(s: HostStrip, report: AuditReport): string {
  const name = s.node && s.node !== s.host ? `${s.host}/${s.node}` : s.host
  const marks = s.findings
    .map((i) => {
      const f = report.findings[i]
      return `<a class="mark sev-${f.severity}" href="#f-${i}" data-code="${escapeHtml(f.code)}" title="${escapeHtml(f.message)}">${escapeHtml(f.code)}</a>`
    })
    .join(' ')
  const bars =
    s.resources.length === 0
      ? '<div class="none">no resource provider</div>'
      : s.resources
          .map((r) => {
            const pct = r.capacity > 0 ? (r.used / r.capacity) * 100 : r.used > 0 ? Number.POSITIVE_INFINITY : 0
            const over = pct > 100
            const w = Math.min(100, pct)
            return `<div class="res" data-rc="${r.rc}"><span class="rc">${r.rc}</span><div class="track"><div class="fill${over ? ' over' : ''}" data-host="${escapeHtml(s.host)}" data-rc="${r.rc}" data-value="${Number.isFinite(pct) ? fmt(pct) : 'inf'}" style="width:${fmt(w)}%;background:${over ? SEV_COLORS.error : COLORS[r.rc]}"></div></div><span class="nums">${fmt(r.used)} / ${fmt(r.capacity)}${over ? ' over capacity' : ''}</span></div>`
          })
          .join('')
  return `<div class="host${s.findings.length > 0 ? ' flagged' : ''}" data-host="${escapeHtml(s.host)}" data-node="${escapeHtml(s.node)}" data-findings="${s.findings.length}">
<div class="hostname">${escapeHtml(name)} <span class="meta">${escapeHtml(s.cell)}</span></div>
<div class="bars">${bars}</div>
<div class="marks">${marks}</div>
</div>`
}

/** `fullEvidence` (--full-evidence): every row of every evidence list, and no cut by length either. */
export function renderAuditHtml(report: AuditReport, model: CloudModel, opts: {fullEvidence?: boolean} = {}): string {
  const snap = model.snapshot
  const strips = hostStrips(report, model)
  const byCheck = report.checks
    .map((check) => {
      const list = report.findings.map((f, i) => ({f, i})).filter((x) => x.f.check === check)
      if (list.length === 0) return ''
      const shown = list.slice(0, MAX_FINDINGS)
      return `<section class="check" data-check="${check}"><h3>${check} <span class="meta">${list.length} finding(s)</span></h3>
${shown.map((x) => findingArticle(x.f, x.i, opts.fullEvidence === true)).join('\n')}
${list.length > shown.length ? `<p class="meta">${list.length - shown.length} more ${check} finding(s) not shown: see <code>audit all --json</code>.</p>` : ''}
</section>`
    })
    .join('\n')
  const unavailable = report.unavailableCells
    .map(
      (c) =>
        `<p class="alert sev-unknown">cell ${escapeHtml(c.name ?? c.uuid)} could not be read${c.error ? ` (${escapeHtml(c.error)})` : ''}: its checks report unknown, never a conclusion.</p>`,
    )
    .join('\n')
  const shownStrips = strips.slice(0, MAX_HOSTS)
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cloudctl audit — ${escapeHtml(snap.captured_at)}</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d2733; background: #fff; max-width: 1100px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 6px; border-top: 1px solid #d5dce4; padding-top: 12px; } h3 { font-size: 15px; margin: 16px 0 6px; }
.meta { color: #5a6878; font-weight: normal; font-size: 12px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #d5dce4; padding: 3px 10px; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f1f4f8; }
tr.total td { font-weight: 600; }
${SEVERITIES.map((k) => `td.sev-${k} { background: ${SEV_COLORS[k]}22; color: ${SEV_COLORS[k]}; font-weight: 600; }\n.badge.sev-${k}, .mark.sev-${k} { background: ${SEV_COLORS[k]}; }\narticle.sev-${k} { border-left-color: ${SEV_COLORS[k]}; }`).join('\n')}
.badge, .mark { color: #fff; border-radius: 3px; padding: 1px 6px; font-size: 11px; text-decoration: none; white-space: nowrap; }
article.finding { border: 1px solid #d5dce4; border-left-width: 5px; border-radius: 3px; padding: 6px 10px; margin: 8px 0; }
article header { font-size: 13px; } .subject { color: #5a6878; font-size: 12px; overflow-wrap: anywhere; }
.message { margin: 4px 0; overflow-wrap: anywhere; } .repair code { background: #f1f4f8; padding: 1px 4px; } .repair.none { color: #5a6878; font-size: 12px; }
pre { background: #f7f9fb; border: 1px solid #e3e8ee; padding: 6px; max-height: 320px; overflow: auto; font-size: 11px; white-space: pre-wrap; overflow-wrap: anywhere; }
.alert { padding: 6px 10px; border-radius: 3px; background: #8e44ad22; color: #5b2673; }
.host { display: grid; grid-template-columns: 220px 1fr 260px; gap: 8px; align-items: center; padding: 4px 0; border-bottom: 1px solid #eef1f5; }
.host.flagged { background: #fff6f5; }
.hostname { font-size: 12px; overflow-wrap: anywhere; }
.res { display: grid; grid-template-columns: 80px 1fr 150px; gap: 6px; align-items: center; font-size: 11px; }
.track { height: 9px; background: #eef1f5; border-radius: 2px; position: relative; }
.fill { height: 9px; border-radius: 2px; }
.fill.over { box-shadow: 0 0 0 1px ${SEV_COLORS.error}; }
.nums { font-variant-numeric: tabular-nums; color: #3d4b5c; } .none { font-size: 11px; color: #5a6878; }
.marks { display: flex; flex-wrap: wrap; gap: 3px; }
</style>
</head>
<body>
<h1>Audit: ${report.counts.total} finding(s)</h1>
<p class="meta">snapshot ${escapeHtml(snap.captured_at)} · ${escapeHtml(snap.source.description)} · ${snap.cells.length} cell(s) · ${model.liveComputeNodes.length} compute node(s) · checks: ${report.checks.join(', ')}</p>
${unavailable}
<h2>Summary</h2>
${summaryTable(report)}
<h2>Hosts: placement capacity and usage</h2>
<p class="meta">capacity = (total - reserved) × allocation_ratio, as placement computes it; a red bar is over capacity. Each host's findings are marked on its row (links to the finding).</p>
<div class="hosts">
${shownStrips.map((s) => strip(s, report)).join('\n')}
</div>
${strips.length > shownStrips.length ? `<p class="meta">${strips.length - shownStrips.length} more host(s) without findings not shown.</p>` : ''}
<h2>Findings</h2>
${report.findings.length === 0 ? '<p>No findings.</p>' : byCheck}
<p class="meta">Generated by cloudctl audit all. Codes are documented in docs/checks.md.</p>
</body>
</html>
`
}
