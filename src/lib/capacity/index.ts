/**
 * Capacity planning on top of the scheduler engine (pure: a CloudModel in, a report out).
 * `capacityFor(model, opts)`: per flavor, how many more instances fit (fast per-host path, see
 * fast.ts, or the engine booting them one after another), beside the naive division figure, per AZ,
 * aggregate and host, with what limits each host; `--mix`: flavors booted in proportion through the
 * engine. See docs/capacity.md.
 */
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, Flavor} from '../domain/snapshot.js'
import {ConfigError} from '../errors.js'
import {
  buildRequestSpec,
  createEngineState,
  defaultSchedulerConfig,
  findFlavor,
  placementRequestFor,
  providerIndex,
  resolveFilters,
  runRequestFilters,
  simulateBoot,
  type BootRequest,
  type EngineState,
  type SchedulerConfig,
} from '../engine/index.js'
import {hostStateBase} from '../engine/host-state.js'
import {RequestFilterFailed} from '../engine/request.js'
import {CapacityContext, countPerHost, flatPlacement, numaLabel, type FlavorPlan, type HostCount} from './fast.js'
import {hostPlaces, type HostPlaces, zoneUsage} from './places.js'
import type {CapacityOptions, CapacityReport, FlavorCapacity, GroupCapacity, HostCapacity, MixCapacity} from './types.js'

export type * from './types.js'
export {CapacityContext, countPerHost, flatPlacement, leadingTrue} from './fast.js'
export {hostPlaces, type HostPlaces} from './places.js'

const DEFAULT_MAX_INSTANCES = 200_000
const nodeKeyOf = (cn: ComputeNode): string => `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`

// ---------------------------------------------------------------- hosts, zones, scope

/** Live compute nodes in the engine's database order, then those without a uuid. */
function orderedNodes(model: CloudModel, cfg: SchedulerConfig): ComputeNode[] {
  const base = hostStateBase(model, cfg)
  const out: ComputeNode[] = []
  for (const nodes of base.byUuid.values()) out.push(...nodes)
  for (const cn of model.liveComputeNodes) if (!cn.uuid) out.push(cn)
  return out
}

function scopeNodes(model: CloudModel, cfg: SchedulerConfig, places: HostPlaces, opts: CapacityOptions): ComputeNode[] {
  let nodes = orderedNodes(model, cfg)
  if (opts.availabilityZone) {
    const az = opts.availabilityZone
    nodes = nodes.filter((cn) => places.azOf(cn.host) === az)
    if (nodes.length === 0)
      throw new ConfigError(
        `no compute node is in availability zone "${az}"`,
        `Zones of this snapshot: ${[...new Set(orderedNodes(model, cfg).map((cn) => places.azOf(cn.host)))].sort().join(', ')}`,
      )
  }
  if (opts.aggregate) {
    const a = model.snapshot.nova_api.aggregates.find((x) => x.name === opts.aggregate || x.uuid === opts.aggregate)
    if (!a)
      throw new ConfigError(
        `aggregate "${opts.aggregate}" not found`,
        `Aggregates: ${model.snapshot.nova_api.aggregates.map((x) => x.name ?? x.uuid).join(', ') || '(none)'}`,
      )
    const hosts = new Set(a.hosts)
    nodes = nodes.filter((cn) => cn.host !== null && hosts.has(cn.host))
  }
  return nodes
}

/** Every public, enabled flavor (the default list), in flavor id order. */
export function defaultFlavors(model: CloudModel): Flavor[] {
  return [...model.snapshot.nova_api.flavors].filter((f) => f.is_public !== false && f.disabled !== true).sort((a, b) => a.id - b.id)
}

// ---------------------------------------------------------------- naive division

/** os-capacity's estimate for the engine path: free (capacity - used) / flavor, per class, minimum. */
function naiveCounts(cc: CapacityContext, plan: FlavorPlan): number[] {
  const fp = flatPlacement(cc.idx, plan.request)
  return cc.rows.map((row) => {
    const rp = row.rp
    if (!rp || fp.parts.length === 0) return 0
    let n = Number.POSITIVE_INFINITY
    for (const p of fp.parts) {
      const inv = rp.inventories.get(p.rcId)
      n = Math.min(n, inv ? Math.max(0, Math.floor((inv.summaryCapacity - cc.usage.used(rp.id, p.rcId)) / p.total)) : 0)
    }
    return n
  })
}

// ---------------------------------------------------------------- per flavor

function planFor(
  model: CloudModel,
  flavor: Flavor,
  opts: CapacityOptions,
  cfg: SchedulerConfig,
): {plan: FlavorPlan | null; req: BootRequest; error?: string; refused?: string} {
  const req: BootRequest = {...(opts.request ?? {}), flavor: String(flavor.id), numInstances: 1, availabilityZone: opts.availabilityZone ?? null}
  const {filters, unknown} = resolveFilters(cfg.enabled_filters)
  if (unknown.length > 0) throw new ConfigError(`unknown scheduler filter(s): ${unknown.join(', ')}`)
  let spec
  try {
    spec = buildRequestSpec(model, req, cfg)
  } catch (error) {
    if (error instanceof ConfigError) return {plan: null, req, error: error.message}
    throw error
  }
  try {
    runRequestFilters(model, spec, cfg)
  } catch (error) {
    if (error instanceof RequestFilterFailed) return {plan: null, req, refused: `request filter: ${error.message}`}
    throw error
  }
  const pr = placementRequestFor(model, spec, cfg)
  if (pr.fatal) return {plan: null, req, refused: pr.fatal}
  return {plan: {spec, request: pr.request, filters, cfg}, req}
}

interface EngineRun {
  placed: Map<string, number>
  total: number
  stopReason: string | null
  truncated: boolean
  state: EngineState
}

/**
 * The reference: boot instances of `req` one after another through simulateBoot, consuming, until
 * NoValidHost. Without a server group each boot is its own request (as operators boot them); with
 * a group hint one multi-instance request, so that the group sees the new members (nova-api adds
 * them as members; separate simulated requests would not know each other).
 */
export function bootUntilFull(
  model: CloudModel,
  req: BootRequest,
  cfg: SchedulerConfig,
  state: EngineState,
  opts: {seed?: number; chunk?: number; maxInstances?: number} = {},
): EngineRun {
  const st = state.clone()
  const placed = new Map<string, number>()
  const max = opts.maxInstances ?? DEFAULT_MAX_INSTANCES
  let total = 0
  let stopReason: string | null = null
  const record = (host: string | null, node: string | null) => {
    const k = `${host ?? ''}\u0000${node ?? ''}`
    placed.set(k, (placed.get(k) ?? 0) + 1)
    total++
  }
  let seed = opts.seed ?? 42
  if (req.hints?.group) {
    const r = simulateBoot(model, {...req, numInstances: max}, cfg, {seed, state: st})
    for (const o of r.instances) if (o.host !== null) record(o.host, o.node)
    stopReason = r.placedAll ? null : r.summary
  } else {
    const chunk = Math.max(1, opts.chunk ?? 1)
    while (total < max) {
      const n = Math.min(chunk, max - total)
      const r = simulateBoot(model, {...req, numInstances: n}, cfg, {seed: seed++, state: st})
      let got = 0
      for (const o of r.instances)
        if (o.host !== null) {
          record(o.host, o.node)
          got++
        }
      if (got === 0) {
        stopReason = r.summary
        break
      }
    }
  }
  return {placed, total, stopReason, truncated: total >= max, state: st}
}

/** Why each host refuses one more instance, from an --explain run on the final state. */
function engineLimits(model: CloudModel, req: BootRequest, cfg: SchedulerConfig, state: EngineState, plan: FlavorPlan | null): Map<string, string> {
  const out = new Map<string, string>()
  const r = simulateBoot(model, {...req, numInstances: 1}, cfg, {explain: true, state: state.clone()})
  for (const v of r.verdicts) {
    const k = `${v.host}\u0000${v.node}`
    if (v.stage === 'filter')
      out.set(k, v.filter === 'NUMATopologyFilter' && plan ? numaLabel(plan.spec, {label: v.label.replace(/^NUMATopologyFilter: /, '')}) : v.label)
    else if (v.stage === 'placement')
      out.set(k, /^insufficient (\S+)$/.test(v.label) ? v.label.replace(/^insufficient (\S+)$/, '$1 exhausted') : `placement: ${v.label}`)
    else if (v.stage === 'selected' || v.stage === 'weigher') out.set(k, 'fits more (run truncated)')
    else out.set(k, v.label)
  }
  return out
}

function flavorCapacity(cc: CapacityContext, flavor: Flavor, places: HostPlaces, opts: CapacityOptions): FlavorCapacity {
  const {model, idx, cfg, state} = cc
  const {plan, req, error, refused} = planFor(model, flavor, opts, cfg)
  const notes: string[] = []
  const parts = plan ? flatPlacement(idx, plan.request).parts : []
  const fc: FlavorCapacity = {
    flavor: flavor.name,
    vcpus: flavor.vcpus,
    memory_mb: flavor.memory_mb,
    disk_gb: parts.find((r) => r.rc === 'DISK_GB')?.total ?? 0,
    resources: Object.fromEntries(parts.map((r) => [r.rc, r.total])),
    fits: 0,
    naive: 0,
    overestimate: 0,
    method: 'fast',
    limits: [],
    byAz: [],
    byAggregate: [],
    notes,
  }
  if (error) fc.error = error
  let counts: HostCount[]
  const useEngine = opts.method === 'engine' || idx.hasTrees || idx.sharing.size > 0
  if (!plan) {
    counts = cc.rows.map(() => ({fits: 0, naive: 0, limit: error ? `flavor refused: ${error}` : (refused as string)}))
  } else if (useEngine) {
    fc.method = 'engine'
    if (opts.method !== 'engine') notes.push('nested or sharing resource providers: counted by booting through the engine one after another (slower)')
    const naive = naiveCounts(cc, plan)
    // On a flat cloud the division bounds what can fit: a multi-instance request (group) needs no more.
    const flat = !idx.hasTrees && idx.sharing.size === 0
    const bound = flat
      ? naiveCounts(new CapacityContext(model, idx, cfg, state, orderedNodes(model, cfg)), plan).reduce((a, b) => a + b, 0) + 1
      : Number.POSITIVE_INFINITY
    const run = bootUntilFull(model, req, cfg, state, {
      seed: opts.seed,
      maxInstances: Math.min(opts.maxInstances ?? DEFAULT_MAX_INSTANCES, bound),
      chunk: opts.method === 'engine' ? 1 : 50,
    })
    if (run.truncated && run.total < bound) notes.push(`stopped after ${run.total} instances (--max-instances)`)
    const limits = engineLimits(model, req, cfg, run.state, plan)
    counts = cc.rows.map((row, i) => ({
      fits: run.placed.get(row.key) ?? 0,
      naive: naive[i] as number,
      limit: limits.get(row.key) ?? row.gone ?? 'not a scheduler candidate',
    }))
  } else {
    let onlyHostKey: string | null | undefined
    let affinityNote: string | undefined
    const g = plan.spec.group
    if (g && g.policy === 'affinity' && g.hosts.length === 0 && plan.filters.some((f) => f.name === 'ServerGroupAffinityFilter')) {
      // The first member decides the host for all others: place it through the engine (weighers, seed).
      const first = simulateBoot(model, {...req, numInstances: 1}, cfg, {seed: opts.seed, state: state.clone()})
      const o = first.instances[0]
      if (o && o.host !== null) {
        onlyHostKey = `${o.host}\u0000${o.node ?? ''}`
        g.hosts.push(o.host)
        affinityNote = `affinity group ${g.name ?? g.uuid}: its first member goes to ${o.host}`
        notes.push(`${affinityNote}; only that host counts`)
      } else {
        onlyHostKey = null
        affinityNote = `affinity group ${g.name ?? g.uuid}: ${first.summary}`
      }
    }
    counts = countPerHost(cc, plan, {onlyHostKey, affinityNote})
  }
  const limits = new Map<string, {hosts: number; fits: number}>()
  const rows: HostCapacity[] | null = opts.perHost ? [] : null
  const byAz = new Map<string, GroupCapacity>()
  const byAgg = new Map<string, GroupCapacity>()
  const add = (m: Map<string, GroupCapacity>, name: string, c: HostCount) => {
    const g = m.get(name)
    if (g) {
      g.hosts++
      g.fits += c.fits
      g.naive += c.naive
    } else m.set(name, {name, hosts: 1, fits: c.fits, naive: c.naive})
  }
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i] as HostCount
    const cn = (cc.rows[i] as (typeof cc.rows)[number]).cn
    fc.fits += c.fits
    fc.naive += c.naive
    const l = limits.get(c.limit)
    if (l) {
      l.hosts++
      l.fits += c.fits
    } else limits.set(c.limit, {hosts: 1, fits: c.fits})
    const az = places.azOf(cn.host)
    const aggs = places.aggregatesOf(cn.host)
    add(byAz, az, c)
    for (const a of aggs) add(byAgg, a, c)
    rows?.push({host: cn.host ?? '', node: cn.hypervisor_hostname ?? '', az, aggregates: aggs, fits: c.fits, naive: c.naive, limit: c.limit})
  }
  const byName = (a: GroupCapacity, b: GroupCapacity) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  fc.overestimate = fc.naive - fc.fits
  fc.limits = [...limits.entries()].map(([reason, v]) => ({reason, ...v})).sort((a, b) => b.hosts - a.hosts || (a.reason < b.reason ? -1 : 1))
  fc.byAz = [...byAz.values()].sort(byName)
  fc.byAggregate = [...byAgg.values()].sort(byName)
  if (rows) fc.hosts = rows
  if (plan && fc.method === 'fast' && plan.request.limit !== null) {
    const limit = plan.request.limit
    const refusedForGood = counts.filter((c) => c.fits === 0 && /^[A-Za-z]+Filter: |^NUMA: |^anti-affinity/.test(c.limit) === true).length
    if (refusedForGood >= limit) {
      notes.push(
        `${refusedForGood} placement candidates are refused by the host filters, at least max_placement_results=${limit}: nova can answer NoValidHost before this capacity is reached (the refused hosts can fill the candidate window)`,
      )
    }
  }
  return fc
}

// ---------------------------------------------------------------- mix

function mixCapacity(
  model: CloudModel,
  opts: CapacityOptions,
  cfg: SchedulerConfig,
  state: EngineState,
  places: HostPlaces,
  nodes: ComputeNode[],
): MixCapacity {
  const mix = opts.mix ?? []
  const flavors = mix.map((m) => findFlavor(model, m.flavor))
  const weights = mix.map((m) => m.weight)
  const total = weights.reduce((a, b) => a + b, 0)
  if (!(total > 0) || weights.some((w) => !(w > 0))) throw new ConfigError('--mix shares must be positive', 'Example: --mix m1.small=50%,m1.large=50%')
  const inScope = new Set(nodes.map(nodeKeyOf))
  const st = state.clone()
  const counts = flavors.map(() => 0)
  const byAz = new Map<string, Record<string, number>>()
  const max = opts.maxInstances ?? DEFAULT_MAX_INSTANCES
  let stoppedBy: string | null = null
  let stopReason: string | null = null
  let placed = 0
  const cur = weights.map(() => 0)
  let seed = opts.seed ?? 42
  while (placed < max) {
    let k = 0
    for (let i = 0; i < weights.length; i++) {
      cur[i] = (cur[i] as number) + (weights[i] as number)
      if ((cur[i] as number) > (cur[k] as number)) k = i
    }
    cur[k] = (cur[k] as number) - total
    const f = flavors[k] as Flavor
    const r = simulateBoot(model, {...(opts.request ?? {}), flavor: String(f.id), numInstances: 1, availabilityZone: opts.availabilityZone ?? null}, cfg, {
      seed: seed++,
      state: st,
    })
    const o = r.instances[0]
    // Hosts outside an --aggregate scope would take the instance: stop there too (the scope is full).
    if (!o || o.host === null || !inScope.has(`${o.host}\u0000${o.node ?? ''}`)) {
      stoppedBy = f.name
      stopReason = !o || o.host === null ? r.summary : `the next ${f.name} would land outside the scope (${o.host})`
      break
    }
    counts[k] = (counts[k] as number) + 1
    placed++
    const az = places.azOf(o.host)
    const m = byAz.get(az) ?? {}
    m[f.name] = (m[f.name] ?? 0) + 1
    byAz.set(az, m)
  }
  return {
    mix: mix.map((m, i) => ({flavor: (flavors[i] as Flavor).name, share: m.weight / total})),
    total: placed,
    byFlavor: flavors.map((f, i) => ({flavor: f.name, fits: counts[i] as number})),
    stoppedBy,
    stopReason,
    truncated: placed >= max,
    byAz: [...byAz.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([name, byFlavor]) => ({name, byFlavor})),
  }
}

// ---------------------------------------------------------------- entry point

export function capacityFor(model: CloudModel, opts: CapacityOptions = {}): CapacityReport {
  const t0 = performance.now()
  const cfg = opts.config ?? defaultSchedulerConfig()
  const state = opts.state ?? createEngineState()
  const idx = providerIndex(model)
  const places = hostPlaces(model, cfg)
  const nodes = scopeNodes(model, cfg, places, opts)
  const flavors =
    opts.flavors && opts.flavors.length > 0 ? opts.flavors.map((f) => findFlavor(model, f)) : opts.mix && opts.mix.length > 0 ? [] : defaultFlavors(model)
  const notes: string[] = []
  if (model.unavailableCells.length > 0)
    notes.push(`cell(s) ${model.unavailableCells.map((c) => c.name ?? c.uuid).join(', ')} could not be read: their hosts count as 0`)
  const report: CapacityReport = {
    captured_at: model.snapshot.captured_at,
    scope: {availabilityZone: opts.availabilityZone ?? null, aggregate: opts.aggregate ?? null, hosts: nodes.length},
    enabled_filters: [...cfg.enabled_filters],
    flavors: [],
    mix: opts.mix && opts.mix.length > 0 ? mixCapacity(model, opts, cfg, state, places, nodes) : null,
    zones: [],
    notes,
    timings: {totalMs: 0},
  }
  const zu = zoneUsage(model, idx, state, nodes, places, opts.hostUsage === true)
  report.zones = zu.zones
  if (zu.hosts) report.hostUsage = zu.hosts
  if (flavors.length > 0) {
    const cc = new CapacityContext(model, idx, cfg, state, nodes)
    report.flavors = flavors.map((f) => flavorCapacity(cc, f, places, opts))
  }
  report.timings.totalMs = performance.now() - t0
  return report
}

/** Parse `m1.small=50%,m1.large=50%` (or plain numbers) into mix shares. */
export function parseMix(text: string): Array<{flavor: string; weight: number}> {
  const out: Array<{flavor: string; weight: number}> = []
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.lastIndexOf('=')
    const name = i > 0 ? part.slice(0, i) : ''
    const w = i > 0 ? Number(part.slice(i + 1).replace(/%$/, '')) : Number.NaN
    if (!name || !(w > 0)) throw new ConfigError(`--mix "${part}" is not FLAVOR=SHARE`, 'Example: --mix m1.small=50%,m1.large=50% (shares are normalised)')
    out.push({flavor: name, weight: w})
  }
  if (out.length === 0) throw new ConfigError('--mix is empty', 'Example: --mix m1.small=50%,m1.large=50%')
  return out
}
