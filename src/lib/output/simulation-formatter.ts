/** Human rendering of a `simulate boot` result (the JSON form is the result itself). */
import type {RecordedRequest} from '../domain/recorded-request.js'
import type {HostVerdict, SimulationResult} from '../engine/index.js'
import type {BootWhatIfResult} from '../scenario/boot-what-if.js'
import {renderScenarioChanges} from './capacity-formatter.js'
import type {Display} from './display.js'
import {renderTable} from './table.js'
import {theme} from './theme.js'

/** What `simulate boot` prints: the recorded request it replays, the what-if changes, the simulation. */
export function renderBootReport(
  r: BootWhatIfResult,
  recorded: RecordedRequest | undefined,
  d: Display,
  opts: {explain?: boolean; why?: string[]} = {},
): string {
  const parts: string[] = []
  if (recorded) parts.push(renderRecorded(recorded))
  if (r.scenario) parts.push([...renderScenarioChanges(r.scenario), `  on the snapshot as captured: ${r.scenario.before.summary}`, ''].join('\n'))
  parts.push(renderSimulation(r, d, opts))
  return parts.join('\n')
}

export function renderRecorded(r: RecordedRequest): string {
  const fl = r.flavor
  const specs = Object.entries(fl.extra_specs).map(([k, v]) => `${k}=${v}`)
  const props = Object.entries(r.image.properties).map(([k, v]) => `${k}=${v}`)
  const hints = Object.entries(r.scheduler_hints).map(([k, v]) => `${k}=${v.join(',')}`)
  const lines = [
    `Replaying the request nova recorded for instance ${r.instance_uuid} (nova_api.request_specs):`,
    `  flavor ${fl.name ?? fl.flavorid ?? '?'} as recorded: ${fl.vcpus} vCPU, ${fl.memory_mb} MB RAM, root ${fl.root_gb} GB, ephemeral ${fl.ephemeral_gb} GB, swap ${fl.swap} MB${specs.length ? `; ${specs.join(' ')}` : ''}`,
    `  image ${r.image.id ?? '(none: boot from volume)'}${props.length ? `; ${props.join(' ')}` : ''}`,
    `  availability zone ${r.availability_zone ?? '(any)'}, project ${r.project_id ?? '?'}, user ${r.user_id ?? '?'}, num_instances ${r.num_instances}`,
  ]
  if (hints.length || r.instance_group)
    lines.push(`  scheduler hints ${hints.join(' ') || '(none)'}${r.instance_group ? `; server group ${r.instance_group}` : ''}`)
  if (r.requested_destination)
    lines.push(`  requested destination ${r.requested_destination.host ?? '*'}${r.requested_destination.node ? `/${r.requested_destination.node}` : ''}`)
  if (r.force_hosts.length || r.force_nodes.length) lines.push(`  forced to ${[...r.force_hosts, ...r.force_nodes].join(', ')} (filters skipped, as nova does)`)
  if (r.ignore_hosts.length) lines.push(`  ignore_hosts ${r.ignore_hosts.join(', ')}`)
  if (r.not_simulated.length) lines.push(`  not simulated: ${r.not_simulated.join('; ')}`)
  if (r.holds_allocations_on.length)
    lines.push(`  note: the instance still holds allocations on ${r.holds_allocations_on.join(', ')}; the replay counts them as used`)
  return `${lines.join('\n')}\n`
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(4)
}

export function renderSimulation(r: SimulationResult, d: Display, opts: {explain?: boolean; why?: string[]; verb?: string} = {}): string {
  const c = theme()
  const out: string[] = []
  const rq = r.request
  out.push(
    c.bold(`${opts.verb ?? 'Boot'} ${rq.num_instances} x ${rq.flavor}`) +
      ` (${rq.vcpus} vCPU, ${rq.memory_mb} MB RAM, ${rq.disk_gb} GB disk${rq.boot_from_volume ? ', boot from volume' : ''})` +
      (rq.availability_zone ? ` in AZ ${rq.availability_zone}` : '') +
      `  seed=${r.seed}`,
  )
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
    for (const u of hs.unavailableCells)
      out.push(c.magenta(`  cell ${u.cell} could not be read: ${u.candidates} candidate host(s) in it are unknown (nova's scatter-gather would skip them too)`))
    if (hs.withoutService.length > 0) out.push(`  skipped without a nova-compute service: ${hs.withoutService.join(', ')}`)
    if (hs.withoutComputeNode > 0) out.push(`  ${hs.withoutComputeNode} candidate provider(s) without a compute node in the readable cells`)
  }
  const first = r.instances[0]
  if (first && first.filters.length > 0) {
    out.push('', c.bold('Filters (instance 1)'))
    for (const f of first.filters) out.push(`  ${f.name}: ${f.start} -> ${f.end} hosts${f.end === 0 ? c.red('  (returned 0 hosts)') : ''}`)
  }
  if (r.weighed.length > 0) out.push('', opts.explain ? weighedBreakdown(r, c) : weighedTable(r, d))
  if (r.instances.some((o) => o.host)) {
    out.push('', c.bold('Selected'))
    for (const o of r.instances) {
      if (!o.host) continue
      out.push(
        `  instance ${o.index + 1}: ${c.green(o.host)}${o.node && o.node !== o.host ? `/${o.node}` : ''}  [${o.allocations.map((a) => `${a.resource_class}=${a.amount}@${a.provider}`).join(', ')}]${o.claimFailures.length ? `  (claim failed first on ${o.claimFailures.join(', ')})` : ''}`,
      )
    }
  }
  const shown =
    opts.why && opts.why.length > 0
      ? r.verdicts.filter((v) => opts.why?.some((h) => v.host === h || v.node === h))
      : opts.explain
        ? r.verdicts.filter((v) => v.stage !== 'selected')
        : []
  if (opts.why && opts.why.length > 0 && shown.length === 0 && !r.warnings.some((w) => w.startsWith('--why ')))
    out.push('', c.yellow(`No verdict for ${opts.why.join(', ')}: not a compute node of this snapshot`))
  if (shown.length > 0) {
    out.push('', c.bold(opts.why?.length ? 'Why' : 'Per host'))
    for (const v of shown) out.push(`  ${verdictLine(v)}`)
  }
  out.push('', r.noValidHost ? c.red(r.summary) : c.green(r.summary))
  return out.join('\n')
}

const hostName = (w: {host: string; node?: string | null}) => `${w.host}${w.node && w.node !== w.host ? `/${w.node}` : ''}`

/**
 * The top hosts with the weighers that count: a weigher that adds 0 to every host shown (multiplier
 * 0, or nothing to weigh: no server group, no build failures) only widens the table, and nova's
 * defaults have several. Each cell is the weigher's share of the host's weight (multiplier x
 * normalized value); --explain shows every weigher's figures.
 */
function weighedTable(r: SimulationResult, d: Display): string {
  const parts = r.weighed[0]?.parts ?? []
  const counting = parts.map((p, i) => i).filter((i) => r.weighed.some((w) => w.parts[i] && w.parts[i].multiplier * w.parts[i].normalized !== 0))
  const rows = r.weighed.map((w) => [hostName(w), fmt(w.weight), ...counting.map((i) => fmt(w.parts[i].multiplier * w.parts[i].normalized))])
  const zero = parts.length - counting.length
  const table = renderTable(d, ['host', 'weight', ...counting.map((i) => parts[i].weigher.replace(/Weigher$/, ''))], rows, {
    title: 'Weighed hosts (instance 1, top)',
    align: ['left', 'right', ...counting.map(() => 'right' as const)],
  })
  return zero > 0 ? `${table}\n${zero} weigher(s) adding 0 to every host shown are left out; --explain shows every weigher's figures.` : table
}

/** Every weigher of each top host: multiplier x normalized value (the raw value the weigher computed). */
function weighedBreakdown(r: SimulationResult, c: ReturnType<typeof theme>): string {
  const out = [c.bold('Weighed hosts (instance 1, top)')]
  for (const w of r.weighed) {
    out.push(`  ${hostName(w)}  weight ${fmt(w.weight)}`)
    for (const p of w.parts) out.push(`    ${p.weigher}: ${fmt(p.multiplier)} x ${fmt(p.normalized)} (raw ${fmt(p.raw)})`)
  }
  return out.join('\n')
}

function verdictLine(v: HostVerdict): string {
  const where = v.stage === 'filter' ? `filter ${v.filter}` : v.stage
  return `${v.host}${v.node && v.node !== v.host ? `/${v.node}` : ''}: [${where}] ${v.reason}`
}
