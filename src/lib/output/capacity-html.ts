/**
 * `simulate capacity --html FILE`: one standalone page (inline CSS and SVG, no script, no network:
 * it opens from a mail attachment or an air-gapped jump host) with, per availability zone, a chart
 * of the capacity by flavor (engine count over the naive division) and one of the utilisation by
 * host (a bar per host and resource class; a histogram when the zone is too large to list).
 */
import type {FlavorCapacity, HostUsage} from '../capacity/index.js'
import type {CapacityResult} from '../capacity/what-if.js'
import {cpuRanges} from '../util/cpu-ranges.js'
import {terminalSafe} from './terminal.js'

const CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB'] as const
const COLORS: Record<string, string> = {VCPU: '#2f6fb3', PCPU: '#8e44ad', MEMORY_MB: '#d9822b', DISK_GB: '#3a9d5d'}
const FITS = '#2f6fb3'
const NAIVE = '#c9d3df'
/** Above this many hosts a zone's utilisation is drawn as a histogram. */
const MAX_HOST_ROWS = 120
const WIDTH = 760

/**
 * Text for HTML, and the one escaper of every report page. Control characters first become visible
 * escapes (terminalSafe): a browser ignores ESC and BEL, but `cat report.html` in a terminal would
 * run them, and a bidi override would reorder what the page shows.
 */
export function escapeHtml(s: string): string {
  return terminalSafe(s).replace(/[&<>"']/g, (ch) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[ch] as string)
}

const n2 = (x: number) => (Math.round(x * 10) / 10).toString()

function flavorChart(az: string, flavors: FlavorCapacity[]): string {
  const rows = flavors.map((f) => {
    const g = f.byAz.find((x) => x.name === az)
    return {flavor: f.flavor, fits: g?.fits ?? 0, naive: g?.naive ?? 0}
  })
  const labelW = Math.min(240, 24 + 8 * Math.max(6, ...rows.map((r) => r.flavor.length)))
  const plotW = WIDTH - labelW - 90
  const max = Math.max(1, ...rows.map((r) => Math.max(r.fits, r.naive)))
  const rowH = 26
  const h = 34 + rows.length * rowH + 10
  const parts: string[] = [
    `<svg class="chart chart-flavors" data-az="${escapeHtml(az)}" role="img" aria-label="Capacity by flavor in ${escapeHtml(az)}" width="${WIDTH}" height="${h}" viewBox="0 0 ${WIDTH} ${h}" xmlns="http://www.w3.org/2000/svg">`,
    `<rect x="${labelW}" y="6" width="12" height="10" fill="${FITS}"/><text x="${labelW + 16}" y="15" class="legend">fits (engine)</text>`,
    `<rect x="${labelW + 120}" y="6" width="12" height="10" fill="${NAIVE}"/><text x="${labelW + 136}" y="15" class="legend">naive division</text>`,
  ]
  rows.forEach((r, i) => {
    const y = 30 + i * rowH
    const wn = (r.naive / max) * plotW
    const wf = (r.fits / max) * plotW
    parts.push(
      `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="label">${escapeHtml(r.flavor)}</text>`,
      `<rect class="bar naive" data-flavor="${escapeHtml(r.flavor)}" data-value="${r.naive}" x="${labelW}" y="${y + 2}" width="${n2(wn)}" height="18" fill="${NAIVE}"><title>${escapeHtml(r.flavor)}: naive division ${r.naive}</title></rect>`,
      `<rect class="bar fits" data-flavor="${escapeHtml(r.flavor)}" data-value="${r.fits}" x="${labelW}" y="${y + 5}" width="${n2(wf)}" height="12" fill="${FITS}"><title>${escapeHtml(r.flavor)}: ${r.fits} fit (naive ${r.naive})</title></rect>`,
      `<text x="${labelW + Math.max(wn, wf) + 6}" y="${y + 15}" class="value">${r.fits}${r.naive !== r.fits ? ` / ${r.naive}` : ''}</text>`,
    )
  })
  parts.push('</svg>')
  return parts.join('\n')
}

function pct(h: HostUsage, rc: string): number | null {
  const r = h.resources[rc]
  return r && r.capacity > 0 ? (r.used / r.capacity) * 100 : null
}

function hostChart(az: string, hosts: HostUsage[]): string {
  const present = CLASSES.filter((rc) => hosts.some((h) => pct(h, rc) !== null))
  const legend = present
    .map(
      (rc, i) => `<rect x="${160 + i * 120}" y="6" width="12" height="10" fill="${COLORS[rc]}"/><text x="${176 + i * 120}" y="15" class="legend">${rc}</text>`,
    )
    .join('')
  if (hosts.length > MAX_HOST_ROWS) return hostHistogram(az, hosts, present, legend)
  const labelW = Math.min(260, 16 + 7 * Math.max(6, ...hosts.map((h) => h.node.length || h.host.length)))
  const plotW = WIDTH - labelW - 60
  const barH = 5
  const rowH = present.length * barH + 8
  const h = 40 + hosts.length * rowH + 10
  const parts = [
    `<svg class="chart chart-hosts" data-az="${escapeHtml(az)}" role="img" aria-label="Utilisation by host in ${escapeHtml(az)}" width="${WIDTH}" height="${h}" viewBox="0 0 ${WIDTH} ${h}" xmlns="http://www.w3.org/2000/svg">`,
    legend,
    `<line x1="${labelW + plotW}" y1="24" x2="${labelW + plotW}" y2="${h - 6}" class="full"/><text x="${labelW + plotW}" y="34" text-anchor="middle" class="legend">100%</text>`,
  ]
  hosts.forEach((host, i) => {
    const y = 40 + i * rowH
    const name = host.node && host.node !== host.host ? `${host.host}/${host.node}` : host.host
    parts.push(`<text x="${labelW - 8}" y="${y + rowH / 2 + 2}" text-anchor="end" class="label small">${escapeHtml(name)}</text>`)
    if (present.every((rc) => pct(host, rc) === null)) {
      parts.push(`<text x="${labelW + 4}" y="${y + rowH / 2 + 2}" class="legend">no resource provider</text>`)
      return
    }
    present.forEach((rc, k) => {
      const p = pct(host, rc)
      if (p === null) return
      const r = host.resources[rc] as {capacity: number; used: number}
      // Overcommitted usage (a negative free) is drawn to the edge and reported in the tooltip.
      const w = (Math.min(p, 100) / 100) * plotW
      parts.push(`<rect class="track" x="${labelW}" y="${y + k * barH}" width="${plotW}" height="${barH - 1}" fill="#eef1f5"/>`)
      parts.push(
        `<rect class="bar util" data-host="${escapeHtml(name)}" data-rc="${rc}" data-value="${n2(p)}" x="${labelW}" y="${y + k * barH}" width="${n2(w)}" height="${barH - 1}" fill="${COLORS[rc]}"><title>${escapeHtml(name)} ${rc}: ${r.used} / ${r.capacity} (${n2(p)}%)</title></rect>`,
      )
    })
  })
  parts.push('</svg>')
  return parts.join('\n')
}

function hostHistogram(az: string, hosts: HostUsage[], present: readonly string[], legend: string): string {
  const buckets = 11 // 0-10% ... 90-100%, over 100%
  const counts = present.map((rc) => {
    const c = new Array<number>(buckets).fill(0)
    for (const h of hosts) {
      const p = pct(h, rc)
      if (p === null) continue
      c[p > 100 ? 10 : Math.min(9, Math.floor(p / 10))]++
    }
    return c
  })
  const max = Math.max(1, ...counts.flat())
  const plotH = 180
  const groupW = (WIDTH - 60) / buckets
  const barW = Math.max(2, (groupW - 6) / Math.max(1, present.length))
  const h = 40 + plotH + 30
  const parts = [
    `<svg class="chart chart-hosts histogram" data-az="${escapeHtml(az)}" role="img" aria-label="Hosts by utilisation in ${escapeHtml(az)}" width="${WIDTH}" height="${h}" viewBox="0 0 ${WIDTH} ${h}" xmlns="http://www.w3.org/2000/svg">`,
    legend,
    `<text x="4" y="15" class="legend">${hosts.length} hosts by utilisation</text>`,
  ]
  for (let b = 0; b < buckets; b++) {
    const x0 = 40 + b * groupW
    parts.push(
      `<text x="${x0 + groupW / 2}" y="${40 + plotH + 16}" text-anchor="middle" class="legend">${b === 10 ? '>100%' : `${b * 10}-${b * 10 + 10}%`}</text>`,
    )
    present.forEach((rc, k) => {
      const n = counts[k]?.[b] ?? 0
      const bh = (n / max) * plotH
      parts.push(
        `<rect class="bar util" data-rc="${rc}" data-bucket="${b}" data-value="${n}" x="${n2(x0 + 3 + k * barW)}" y="${n2(40 + plotH - bh)}" width="${n2(barW - 1)}" height="${n2(bh)}" fill="${COLORS[rc]}"><title>${rc}: ${n} host(s) at ${b === 10 ? 'over 100' : `${b * 10}-${b * 10 + 10}`}%</title></rect>`,
      )
    })
  }
  parts.push('</svg>')
  return parts.join('\n')
}

function table(head: string[], rows: Array<Array<string | number>>): string {
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((v) => `<td${typeof v === 'number' ? ' class="num"' : ''}>${escapeHtml(String(v))}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`
}

export function renderCapacityHtml(r: CapacityResult): string {
  const s = r.scenario
  const azs = [...new Set([...r.zones.filter((z) => z.kind === 'az').map((z) => z.name), ...r.flavors.flatMap((f) => f.byAz.map((g) => g.name))])].sort()
  const delta = new Map((s?.flavors ?? []).map((d) => [d.flavor, d]))
  const summary = table(
    ['flavor', 'vCPU', 'RAM MB', 'disk GB', 'fits', 'naive ÷', 'overestimate', ...(s ? ['snapshot', 'change'] : []), 'limited by (hosts)'],
    r.flavors.map((f) => {
      const d = delta.get(f.flavor)
      return [
        f.flavor,
        f.vcpus,
        f.memory_mb,
        f.disk_gb,
        f.fits,
        f.naive,
        f.overestimate,
        ...(s ? [d?.before ?? 0, d ? (d.change > 0 ? `+${d.change}` : String(d.change)) : ''] : []),
        f.error ? `refused: ${f.error}` : f.limits.map((l) => `${l.reason} (${l.hosts})`).join('; '),
      ]
    }),
  )
  const whatIf = s
    ? `<section class="what-if"><h2>What-if</h2><ul>${s.changes.map((c) => `<li>${escapeHtml(c)}</li>`).join('')}${s.drains
        .flatMap((d) =>
          d.failed.map(
            (i) => `<li class="bad">${escapeHtml(`${d.host}: ${i.name ?? i.uuid} (${i.flavor ?? '?'}) could not be re-placed: ${i.reason ?? ''}`)}</li>`,
          ),
        )
        .join(
          '',
        )}${(s.repairs?.pins ?? []).map((p) => `<li>${escapeHtml(`${p.host} NUMA cell ${p.numa_cell}: pinned CPUs ${cpuRanges(p.released)} released`)}</li>`).join('')}</ul></section>`
    : ''
  const sections = azs.map((az) => {
    const zone = r.zones.find((z) => z.kind === 'az' && z.name === az)
    const hosts = (r.hostUsage ?? []).filter((h) => h.az === az)
    const usage = zone
      ? CLASSES.filter((rc) => zone.resources[rc] && (zone.resources[rc]?.capacity ?? 0) > 0)
          .map((rc) => {
            const u = zone.resources[rc] as {capacity: number; used: number}
            return `${rc} ${u.used} / ${u.capacity} (${Math.round((u.used / u.capacity) * 100)}%)`
          })
          .join(' · ')
      : ''
    return `<section class="az" data-az="${escapeHtml(az)}">
<h2>Availability zone ${escapeHtml(az)}</h2>
<p class="meta">${zone?.hosts ?? hosts.length} compute node(s)${usage ? ` · used: ${escapeHtml(usage)}` : ''}</p>
<h3>Capacity by flavor</h3>
${r.flavors.length > 0 ? flavorChart(az, r.flavors) : '<p>No flavor requested.</p>'}
<h3>Utilisation by host</h3>
${hosts.length > 0 ? hostChart(az, hosts) : '<p>No per-host data.</p>'}
</section>`
  })
  const mix = r.mix
    ? `<section class="mix"><h2>Mix</h2><p>${escapeHtml(`${r.mix.mix.map((m) => `${m.flavor} ${Math.round(m.share * 1000) / 10}%`).join(' + ')}: ${r.mix.total} instance(s) fit`)}</p>${table(
        ['flavor', 'fits'],
        r.mix.byFlavor.map((b) => [b.flavor, b.fits]),
      )}${r.mix.stoppedBy ? `<p class="meta">${escapeHtml(`stopped at the next ${r.mix.stoppedBy}: ${r.mix.stopReason ?? ''}`)}</p>` : ''}</section>`
    : ''
  const notes = [...r.notes, ...r.flavors.flatMap((f) => f.notes.map((n) => `${f.flavor}: ${n}`))]
  const scope = [r.scope.availabilityZone ? `AZ ${r.scope.availabilityZone}` : null, r.scope.aggregate ? `aggregate ${r.scope.aggregate}` : null]
    .filter(Boolean)
    .join(', ')
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cloudctl capacity — ${escapeHtml(r.captured_at)}</title>
<style>
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d2733; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 4px; } h3 { font-size: 14px; margin: 14px 0 4px; color: #3d4b5c; }
.meta { color: #5a6878; margin: 2px 0; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #d5dce4; padding: 3px 8px; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f1f4f8; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg .label { font-size: 12px; fill: #1d2733; } svg .small { font-size: 10px; } svg .value, svg .legend { font-size: 11px; fill: #3d4b5c; }
svg .full { stroke: #9aa7b5; stroke-dasharray: 3 3; }
.bad { color: #b3261e; }
section.az { border-top: 1px solid #d5dce4; }
</style>
</head>
<body>
<h1>Capacity: additional instances that fit</h1>
<p class="meta">snapshot ${escapeHtml(r.captured_at)} · ${r.scope.hosts} compute node(s)${scope ? ` in ${escapeHtml(scope)}` : ''} · seed ${r.seed}</p>
<p class="meta">filters: ${escapeHtml(r.enabled_filters.join(', '))}</p>
${whatIf}
<h2>Per flavor</h2>
<p class="meta">fits: booted one after another through the scheduler engine (filters, NUMA, groups, traits, max_unit); naive ÷: free resources divided by the flavor, as simple estimates do.</p>
${summary}
${sections.join('\n')}
${mix}
${notes.length > 0 ? `<h2>Notes</h2><ul>${notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>` : ''}
<p class="meta">Generated by cloudctl simulate capacity.</p>
</body>
</html>
`
}
