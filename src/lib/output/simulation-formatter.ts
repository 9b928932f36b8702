/** Human rendering of a `simulate boot` result (the JSON form is the result itself). */
import type {HostVerdict, SimulationResult} from '../engine/index.js'
import {renderTable} from './table.js'
import {theme} from './theme.js'

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(4)
}

export function renderSimulation(r: SimulationResult, opts: {explain?: boolean; why?: string[]} = {}): string {
  const c = theme()
  const out: string[] = []
  const rq = r.request
  out.push(c.bold(`Boot ${rq.num_instances} x ${rq.flavor}`) + ` (${rq.vcpus} vCPU, ${rq.memory_mb} MB RAM, ${rq.disk_gb} GB disk${rq.boot_from_volume ? ', boot from volume' : ''})` + (rq.availability_zone ? ` in AZ ${rq.availability_zone}` : '') + `  seed=${r.seed}`)
  if (rq.numa) out.push(`  NUMA request: ${rq.numa}`)
  const ran = r.prefilters.filter((p) => p.ran)
  if (ran.length > 0) {
    out.push('', c.bold('Request filters'))
    for (const p of ran) out.push(`  ${p.name}: ${p.effect}`)
  }
  if (r.query !== null) {
    out.push('', c.bold('Placement query nova would send'), `  GET /allocation_candidates?${r.queryEncoded}`, `  (${r.query})`)
    const p = r.placement
    out.push(
      `  ${p.candidates} allocation candidate(s)` +
        (p.cutByLimit > 0 ? `, ${p.cutByLimit} cut by limit=${p.limit} (max_placement_results): ${p.kept} kept` : '') +
        `; ${p.providerSummaries} provider summar${p.providerSummaries === 1 ? 'y' : 'ies'}`,
    )
    if (p.stoppedAt) out.push(`  ${c.yellow(`placement: ${p.stoppedAt}`)}`)
    for (const n of p.notes) out.push(`  note: ${n}`)
  }
  for (const w of r.warnings) out.push(c.yellow(`warning: ${w}`))
  const hs = r.hostStates
  if (r.query !== null && r.placement.kept > 0) {
    out.push('', c.bold('Host states') + `: ${hs.count} compute node(s) from the candidates`)
    for (const u of hs.unavailableCells) out.push(c.magenta(`  cell ${u.cell} could not be read: ${u.candidates} candidate host(s) in it are unknown (nova's scatter-gather would skip them too)`))
    if (hs.withoutService.length > 0) out.push(`  skipped without a nova-compute service: ${hs.withoutService.join(', ')}`)
    if (hs.withoutComputeNode > 0) out.push(`  ${hs.withoutComputeNode} candidate provider(s) without a compute node in the readable cells`)
  }
  const first = r.instances[0]
  if (first && first.filters.length > 0) {
    out.push('', c.bold('Filters (instance 1)'))
    for (const f of first.filters) out.push(`  ${f.name}: ${f.start} -> ${f.end} hosts${f.end === 0 ? c.red('  (returned 0 hosts)') : ''}`)
  }
  if (r.weighed.length > 0) {
    const weighers = r.weighed[0]?.parts.map((p) => p.weigher) ?? []
    const rows = r.weighed.map((w) => [`${w.host}${w.node && w.node !== w.host ? `/${w.node}` : ''}`, fmt(w.weight), ...w.parts.map((p) => `${fmt(p.multiplier)} x ${fmt(p.normalized)} (raw ${fmt(p.raw)})`)])
    out.push('', renderTable(['host', 'weight', ...weighers.map((w) => w.replace(/Weigher$/, ''))], rows, {title: 'Weighed hosts (instance 1, top)', align: ['left', 'right', ...weighers.map(() => 'left' as const)]}))
  }
  if (r.instances.some((o) => o.host)) {
    out.push('', c.bold('Selected'))
    for (const o of r.instances) {
      if (!o.host) continue
      out.push(`  instance ${o.index + 1}: ${c.green(o.host)}${o.node && o.node !== o.host ? `/${o.node}` : ''}  [${o.allocations.map((a) => `${a.resource_class}=${a.amount}@${a.provider}`).join(', ')}]${o.claimFailures.length ? `  (claim failed first on ${o.claimFailures.join(', ')})` : ''}`)
    }
  }
  const shown = opts.why && opts.why.length > 0 ? r.verdicts.filter((v) => opts.why?.some((h) => v.host === h || v.node === h)) : opts.explain ? r.verdicts.filter((v) => v.stage !== 'selected') : []
  if (opts.why && opts.why.length > 0 && shown.length === 0) out.push('', c.yellow(`No verdict for ${opts.why.join(', ')}: not a compute node of this snapshot`))
  if (shown.length > 0) {
    out.push('', c.bold(opts.why?.length ? 'Why' : 'Per host'))
    for (const v of shown) out.push(`  ${verdictLine(v)}`)
  }
  out.push('', r.noValidHost ? c.red(r.summary) : c.green(r.summary))
  return out.join('\n')
}

function verdictLine(v: HostVerdict): string {
  const where = v.stage === 'filter' ? `filter ${v.filter}` : v.stage
  return `${v.host}${v.node && v.node !== v.host ? `/${v.node}` : ''}: [${where}] ${v.reason}`
}
