/**
 * Human rendering of `simulate capacity` (the JSON form is the result itself): a table per flavor
 * with the engine's count beside the naive division, breakdowns per AZ and aggregate, per host on
 * request, the what-if comparison, and on a TTY a compact used/free bar per zone with what fits.
 */
import type {ChalkInstance} from 'chalk'

import type {FlavorCapacity, ZoneUsage} from '../capacity/index.js'
import type {CapacityResult, ScenarioCapacity} from '../capacity/what-if.js'
import type {DrainReport} from '../scenario/index.js'
import {cpuRanges} from '../util/cpu-ranges.js'
import type {Display} from './display.js'
import {renderTable} from './table.js'
import {theme} from './theme.js'

export interface CapacityRenderOptions {
  /** Draw the zone bars (the command passes stdout.isTTY). */
  bars?: boolean
  /** Bar width in characters. */
  barWidth?: number
}

const BAR_CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']

function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n)
}

function limitsText(fc: FlavorCapacity, max = 2): string {
  if (fc.error) return `flavor refused: ${fc.error}`
  const shown = fc.limits.slice(0, max).map((l) => `${l.reason} (${l.hosts})`)
  const more = fc.limits.length - max
  return shown.join('; ') + (more > 0 ? `; +${more} more` : '')
}

/** A bar of `width` cells: used, then free; `share` of the free part drawn as "fits" when given. */
export function usageBar(used: number, capacity: number, width: number, c: ChalkInstance): string {
  if (!(capacity > 0)) return c.dim('·'.repeat(width))
  const u = Math.min(width, Math.max(0, Math.round((used / capacity) * width)))
  const ratio = used / capacity
  const paint = ratio >= 0.9 ? c.red : ratio >= 0.7 ? c.yellow : c.cyan
  return paint('█'.repeat(u)) + c.green('░'.repeat(width - u))
}

function zoneBars(r: CapacityResult, width: number, c: ChalkInstance): string[] {
  const out: string[] = [c.bold('Zones: used █ / free ░, and what fits')]
  const nameWidth = Math.max(...r.zones.map((z) => z.name.length + (z.kind === 'aggregate' ? 4 : 0)), 4)
  for (const z of r.zones) {
    const label = `${z.kind === 'aggregate' ? 'agg ' : ''}${z.name}`.padEnd(nameWidth)
    out.push(`  ${c.bold(label)}  ${z.hosts} host(s)`)
    for (const rc of BAR_CLASSES) {
      const res = z.resources[rc]
      if (!res || !(res.capacity > 0)) continue
      const pct = Math.round((res.used / res.capacity) * 100)
      out.push(
        `  ${' '.repeat(nameWidth)}  ${rc.padEnd(9)} ${usageBar(res.used, res.capacity, width, c)} ${String(pct).padStart(3)}%  ${res.used} used / ${Math.max(0, res.capacity - res.used)} free`,
      )
    }
    const fits = zoneFits(r.flavors, z)
    if (fits.length > 0) out.push(`  ${' '.repeat(nameWidth)}  fits      ${fits.join(' · ')}`)
  }
  return out
}

function zoneFits(flavors: FlavorCapacity[], z: ZoneUsage): string[] {
  return flavors.map((f) => {
    const g = (z.kind === 'az' ? f.byAz : f.byAggregate).find((x) => x.name === z.name)
    return `${f.flavor} ${g?.fits ?? 0}`
  })
}

function drainLines(d: DrainReport, c: ChalkInstance): string[] {
  const out = [
    `  drain ${d.host}: ${d.replaced.length} of ${d.instances} instance(s) re-placed through the engine${d.failed.length > 0 ? c.red(`, ${d.failed.length} could not be`) : ''}`,
  ]
  for (const i of d.failed) out.push(c.red(`    ✖ ${i.name ?? i.uuid} (${i.uuid}, ${i.flavor ?? 'unknown flavor'}): ${i.reason ?? 'no host'}`))
  return out
}

/** The what-if preamble shared by `simulate boot` and `simulate capacity`. */
export function renderScenarioChanges(s: {changes: string[]; drains: DrainReport[]}, c: ChalkInstance = theme()): string[] {
  const out = [c.bold('What-if')]
  // Drains are rendered from their reports below (with the instances that found no host).
  for (const ch of s.changes) if (!ch.startsWith('drain ')) out.push(`  • ${ch}`)
  for (const d of s.drains) out.push(...drainLines(d, c))
  return out
}

function repairLines(s: ScenarioCapacity, c: ChalkInstance): string[] {
  const r = s.repairs
  if (!r) return []
  const out = ['', c.bold('Planned repairs (as if applied)')]
  if (r.removedAllocations === 0 && r.pins.length === 0) out.push('  nothing to repair: no leaked allocation and no stuck pinned CPU')
  for (const p of r.freedByProvider) {
    const what = Object.entries(p.resources)
      .map(([rc, n]) => `${rc} ${n}`)
      .join(', ')
    out.push(
      `  leaked allocations freed on ${p.name ?? p.provider}: ${what}${p.schedulable ? '' : c.yellow(' (no live compute node owns this provider: the scheduler cannot use it)')}`,
    )
  }
  const byNode = new Map<string, string[]>()
  for (const p of r.pins) {
    const k = p.node && p.node !== p.host ? `${p.host}/${p.node}` : p.host
    byNode.set(k, [...(byNode.get(k) ?? []), `NUMA cell ${p.numa_cell}: ${cpuRanges(p.released) || 'none'}`])
  }
  for (const [k, cells] of byNode) out.push(`  stuck pinned CPUs released on ${k}: ${cells.join('; ')}`)
  const gained = s.flavors.filter((f) => f.change > 0)
  out.push(
    gained.length > 0
      ? c.green(`  capacity recovered: ${gained.map((f) => `${f.flavor} ${f.before} -> ${f.after} (${signed(f.change)})`).join(', ')}`)
      : '  capacity recovered: none for the flavors shown',
  )
  return out
}

export function renderCapacity(r: CapacityResult, d: Display, opts: CapacityRenderOptions = {}): string {
  const c = theme()
  const out: string[] = []
  const s = r.scenario
  const scope = [r.scope.availabilityZone ? `AZ ${r.scope.availabilityZone}` : null, r.scope.aggregate ? `aggregate ${r.scope.aggregate}` : null]
    .filter(Boolean)
    .join(', ')
  out.push(
    c.bold(`Capacity: additional instances that fit, ${r.scope.hosts} compute node(s)${scope ? ` in ${scope}` : ''}`) +
      `  (snapshot ${r.captured_at}, seed ${r.seed})`,
  )
  out.push(`  filters: ${r.enabled_filters.join(', ')}`)
  if (s) out.push('', ...renderScenarioChanges(s, c))

  if (r.flavors.length > 0) {
    const delta = new Map((s?.flavors ?? []).map((d) => [d.flavor, d]))
    const head = ['flavor', 'vCPU', 'RAM MB', 'disk GB', 'fits', 'naive ÷', 'overestimate', ...(s ? ['snapshot', 'change'] : []), 'limited by (hosts)']
    const rows = r.flavors.map((f) => {
      const d = delta.get(f.flavor)
      return [
        f.flavor,
        f.vcpus,
        f.memory_mb,
        f.disk_gb,
        f.error ? c.red('refused') : f.fits,
        f.naive,
        f.overestimate > 0 ? c.yellow(String(f.overestimate)) : 0,
        ...(s ? [d?.before ?? '', d ? (d.change > 0 ? c.green(signed(d.change)) : d.change < 0 ? c.red(signed(d.change)) : '0') : ''] : []),
        limitsText(f),
      ]
    })
    const align = head.map((h) => (['flavor', 'limited by (hosts)'].includes(h) ? ('left' as const) : ('right' as const)))
    out.push('', renderTable(d, head, rows, {title: s ? 'Per flavor (fits under the what-if; snapshot = as captured)' : 'Per flavor', align}))

    const azs = [...new Set(r.flavors.flatMap((f) => f.byAz.map((g) => g.name)))].sort()
    if (azs.length > 0) out.push('', groupTable(d, 'Per availability zone: fits (naive ÷)', r.flavors, azs, 'byAz'))
    const aggs = [...new Set(r.flavors.flatMap((f) => f.byAggregate.map((g) => g.name)))].sort()
    if (aggs.length > 0) out.push('', groupTable(d, 'Per aggregate: fits (naive ÷)', r.flavors, aggs, 'byAggregate'))
  }

  if (opts.bars && r.zones.length > 0) out.push('', ...zoneBars(r, opts.barWidth ?? 24, c))

  for (const f of r.flavors) {
    if (!f.hosts) continue
    const rows = f.hosts.map((h) => [h.node && h.node !== h.host ? `${h.host}/${h.node}` : h.host, h.az, h.aggregates.join(','), h.fits, h.naive, h.limit])
    out.push(
      '',
      renderTable(d, ['host', 'AZ', 'aggregates', 'fits', 'naive ÷', 'next one refused by'], rows, {
        title: `Per host: ${f.flavor}`,
        align: ['left', 'left', 'left', 'right', 'right', 'left'],
      }),
    )
  }

  if (r.mix) {
    const m = r.mix
    out.push(
      '',
      c.bold(`Mix ${m.mix.map((x) => `${x.flavor} ${Math.round(x.share * 1000) / 10}%`).join(' + ')}: ${m.total} instance(s) fit`) +
        (s?.mix ? ` (snapshot ${s.mix.before}, ${signed(s.mix.change)})` : ''),
    )
    out.push(`  ${m.byFlavor.map((x) => `${x.flavor} ${x.fits}`).join(', ')}`)
    for (const z of m.byAz) out.push(`  ${z.name}: ${m.byFlavor.map((x) => `${x.flavor} ${z.byFlavor[x.flavor] ?? 0}`).join(', ')}`)
    if (m.stoppedBy) out.push(`  stopped at the next ${m.stoppedBy}: ${m.stopReason ?? ''}`)
    if (m.truncated) out.push(c.yellow('  stopped at the instance limit: more may fit'))
  }

  if (s) out.push(...repairLines(s, c))

  const notes = [...r.notes, ...r.flavors.flatMap((f) => f.notes.map((n) => `${f.flavor}: ${n}`))]
  if (notes.length > 0) out.push('', c.bold('Notes'), ...notes.map((n) => `  - ${n}`))
  if (r.html) out.push('', `HTML report written to ${r.html}`)
  return out.join('\n')
}

function groupTable(d: Display, title: string, flavors: FlavorCapacity[], names: string[], key: 'byAz' | 'byAggregate'): string {
  const rows = flavors.map((f) => [
    f.flavor,
    ...names.map((n) => {
      const g = f[key].find((x) => x.name === n)
      return g ? `${g.fits} (${g.naive})` : '0'
    }),
  ])
  const hosts = names.map((n) => flavors[0]?.[key].find((x) => x.name === n)?.hosts ?? 0)
  return renderTable(d, ['flavor', ...names.map((n, i) => `${n} [${hosts[i]} hosts]`)], rows, {title, align: ['left', ...names.map(() => 'right' as const)]})
}
