/**
 * The whole of nova's select_destinations for a boot, offline:
 *   request -> request filters -> placement query -> allocation candidates (limit) -> host states
 *   (database order) -> filters -> weighers -> host_subset_size choice -> claim -> consume
 * repeated per instance, with an EngineState that a capacity planner can clone and keep using.
 */
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {FILTERS, resolveFilters, type FilterContext, type HostFilter, type Reason, pciSupports} from './filters.js'
import {buildHostState, hostStateBase, type HostState} from './host-state.js'
import {consumeNuma, CpuPinningError, type FittedCell} from './numa.js'
import {
  allocationCandidates,
  checkClaimCapacity,
  providerIndex,
  toQueryString,
  type AllocationRequest,
  type CandidateResult,
  type PlacementRequest,
  type ProviderIndex,
  type UsageView,
} from './placement.js'
import {buildRequestSpec, placementRequestFor, RequestFilterFailed, runRequestFilters, type BootRequest, type PrefilterTrace, type RequestSpec} from './request.js'
import {createRng, DEFAULT_SEED, shuffleInPlace, type Rng} from './rng.js'
import {resolveWeighers, weighHosts, type WeighedHost, type WeightPart} from './weighers.js'
import {ConfigError} from '../errors.js'

// ---------------------------------------------------------------- engine state

/**
 * What earlier simulated claims consumed: placement usage deltas and replaced host states.
 * Cheap to clone (maps of references; host states are replaced, never mutated).
 */
export class EngineState {
  constructor(
    readonly usageDelta = new Map<number, Map<number, number>>(),
    readonly hosts = new Map<string, HostState>(),
    public placed = 0,
  ) {}

  clone(): EngineState {
    const usage = new Map<number, Map<number, number>>()
    for (const [k, v] of this.usageDelta) usage.set(k, new Map(v))
    return new EngineState(usage, new Map(this.hosts), this.placed)
  }

  usageView(idx: ProviderIndex): UsageView {
    return {
      used: (rpId, rcId) => (idx.baseUsage.get(rpId)?.get(rcId) ?? 0) + (this.usageDelta.get(rpId)?.get(rcId) ?? 0),
      base: idx.baseUsage,
      delta: this.usageDelta,
    }
  }

  addUsage(rpId: number, rcId: number, amount: number): void {
    let m = this.usageDelta.get(rpId)
    if (!m) this.usageDelta.set(rpId, (m = new Map()))
    m.set(rcId, (m.get(rcId) ?? 0) + amount)
  }
}

export function createEngineState(): EngineState {
  return new EngineState()
}

// ---------------------------------------------------------------- results

export interface FilterStep {
  name: string
  start: number
  end: number
  skipped?: boolean
}

export interface HostVerdict {
  host: string
  node: string
  stage: 'placement' | 'host_state' | 'requested_destination' | 'filter' | 'weigher' | 'claim' | 'selected'
  filter?: string
  reason: string
  label: string
  need?: number
  have?: number
}

export interface WeighedView {
  host: string
  node: string
  weight: number
  parts: WeightPart[]
}

export interface InstanceOutcome {
  index: number
  instanceUuid: string
  host: string | null
  node: string | null
  /** Providers and amounts claimed in placement. */
  allocations: Array<{provider: string; resource_class: string; amount: number}>
  filters: FilterStep[]
  /** Hosts tried before the claim succeeded (claim failed: placement full). */
  claimFailures: string[]
  reason?: string
}

export interface SimulationResult {
  seed: number
  request: {
    flavor: string
    flavorid: string
    vcpus: number
    memory_mb: number
    disk_gb: number
    extra_specs: Record<string, string>
    image_properties: Record<string, string>
    availability_zone: string | null
    num_instances: number
    project_id: string
    boot_from_volume: boolean
    numa: string | null
  }
  prefilters: PrefilterTrace[]
  query: string | null
  queryEncoded: string | null
  warnings: string[]
  placement: {
    candidates: number
    kept: number
    cutByLimit: number
    limit: number | null
    providerSummaries: number
    stoppedAt: string | null
    notes: string[]
  }
  hostStates: {
    count: number
    unavailableCells: Array<{cell: string; candidates: number}>
    withoutService: string[]
    withoutComputeNode: number
  }
  instances: InstanceOutcome[]
  /** Hosts after the filters of the first instance, weighed (top N kept). */
  weighed: WeighedView[]
  /** Per compute node (host/node), why it was not chosen, or 'selected'. Only with explain/why. */
  verdicts: HostVerdict[]
  placedAll: boolean
  noValidHost: boolean
  summary: string
  timings: {totalMs: number; placementMs: number; filtersMs: number}
}

export interface SimulateOptions {
  seed?: number
  /** Collect a verdict per compute node (for --explain / --why). */
  explain?: boolean
  /** How many weighed hosts to keep in the result. */
  topWeighed?: number
  state?: EngineState
}

const nodeName = (cn: ComputeNode) => `${cn.host ?? '?'}/${cn.hypervisor_hostname ?? '?'}`

// ---------------------------------------------------------------- the pipeline

export function simulateBoot(model: CloudModel, req: BootRequest, cfg: SchedulerConfig, opts: SimulateOptions = {}): SimulationResult {
  const t0 = performance.now()
  const seed = opts.seed ?? DEFAULT_SEED
  const rng = createRng(seed)
  const state = opts.state ?? createEngineState()
  const explain = Boolean(opts.explain)
  const {filters, unknown: unknownFilters} = resolveFilters(cfg.enabled_filters)
  if (unknownFilters.length > 0) throw new ConfigError(`unknown scheduler filter(s): ${unknownFilters.join(', ')}`, `Known filters: ${Object.keys(FILTERS).join(', ')}`)
  const {weighers, unknown: unknownWeighers} = resolveWeighers(cfg.weight_classes)
  if (unknownWeighers.length > 0) throw new ConfigError(`unknown weigher(s): ${unknownWeighers.join(', ')}`)

  const spec = buildRequestSpec(model, req, cfg)
  const idx = providerIndex(model)
  const result = emptyResult(spec, seed)
  // The instances of this request are members of their server group, as nova-api records them.
  const newUuids = Array.from({length: spec.numInstances}, (_, i) => `simulated-instance-${String(i + 1).padStart(4, '0')}`)
  if (spec.group) for (const u of newUuids) spec.group.members.add(u)

  try {
    result.prefilters = runRequestFilters(model, spec, cfg)
  } catch (error) {
    if (!(error instanceof RequestFilterFailed)) throw error
    return finishNoValidHost(result, `request filter failed: ${error.message}`, t0)
  }
  if (spec.numaTopology && !filters.some((f) => f.name === 'NUMATopologyFilter')) {
    result.warnings.push('the request has a NUMA topology (pinning / hw:numa_nodes / page size) but NUMATopologyFilter is not in enabled_filters: nova would pick a host without checking NUMA cells, and the build could then fail on the compute node (add it with --filters or --nova-conf)')
  }
  const pr = placementRequestFor(model, spec, cfg)
  result.warnings.push(...pr.warnings)
  result.query = toQueryString(pr.request)
  result.queryEncoded = toQueryString(pr.request, {encoded: true})
  result.request.disk_gb = [...(pr.request.groups.find((g) => g.suffix === '')?.resources ?? [])].find(([rc]) => rc === 'DISK_GB')?.[1] ?? 0
  if (pr.fatal) return finishNoValidHost(result, pr.fatal, t0)

  const tp = performance.now()
  const cands = allocationCandidates(idx, pr.request, state.usageView(idx))
  result.timings.placementMs = performance.now() - tp
  result.placement = {
    candidates: cands.all.length,
    kept: cands.kept.length,
    cutByLimit: cands.all.length - cands.kept.length,
    limit: pr.request.limit,
    providerSummaries: cands.summaryProviderIds.size,
    stoppedAt: cands.diagnostics.stoppedAt,
    notes: [...cands.diagnostics.notes, ...(cands.combinationsTruncated ? [`more than 10000 combinations in a provider tree: the engine stopped enumerating (placement would not)`] : [])],
  }

  // Host states for the candidate providers, in database order.
  const base = hostStateBase(model, cfg)
  const unavailable = new Map<string, number>()
  let hosts: HostState[] = []
  const candidateRoots = new Set<number>()
  for (const a of cands.kept) candidateRoots.add(a.anchorRootId)
  // Only the candidates' compute nodes, visited in database order (not every node of the cloud).
  const candidateUuids: string[] = []
  for (const id of cands.summaryProviderIds) {
    const uuid = idx.providers.get(id)?.uuid
    if (uuid !== undefined && base.uuidOrder.has(uuid)) candidateUuids.push(uuid)
  }
  candidateUuids.sort((a, b) => (base.uuidOrder.get(a) as number) - (base.uuidOrder.get(b) as number))
  for (const uuid of candidateUuids) {
    for (const cn of base.byUuid.get(uuid) as ComputeNode[]) {
      if (!model.isCellAvailable(cn.cell_uuid)) {
        unavailable.set(cn.cell_uuid, (unavailable.get(cn.cell_uuid) ?? 0) + 1)
        continue
      }
      const hs = state.hosts.get(`${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`) ?? buildHostState(model, cn, cfg, base)
      if (!hs.service) {
        result.hostStates.withoutService.push(nodeName(cn))
        continue
      }
      hosts.push(hs)
    }
  }
  // Candidate providers whose compute node nova cannot see: in a cell we could not read.
  for (const id of cands.summaryProviderIds) {
    const rp = idx.providers.get(id)
    if (!rp || rp.rootId !== rp.id || base.byUuid.has(rp.uuid)) continue
    result.hostStates.withoutComputeNode++
  }
  for (const cell of model.unavailableCells) {
    result.hostStates.unavailableCells.push({cell: cell.name ?? cell.uuid, candidates: unavailable.get(cell.uuid) ?? 0})
  }
  result.hostStates.count = hosts.length

  const verdicts = new Map<string, HostVerdict>()
  if (spec.requestedDestination) {
    const d = spec.requestedDestination
    const before = hosts
    hosts = hosts.filter((h) => h.host === d.host && (!d.node || h.nodename === d.node))
    for (const h of before) if (!hosts.includes(h)) verdicts.set(h.key, {host: h.host, node: h.nodename, stage: 'requested_destination', reason: `not the requested destination ${d.host}${d.node ? `/${d.node}` : ''}`, label: 'not the requested host'})
  }
  // host_manager.get_filtered_hosts: ignore_hosts (hosts a reschedule already tried), then force_hosts
  // (case-insensitive) and force_nodes; forced hosts skip the filters.
  const dropHosts = (keep: (h: HostState) => boolean, reason: string, label: string) => {
    const before = hosts
    hosts = hosts.filter(keep)
    for (const h of before) if (!hosts.includes(h)) verdicts.set(h.key, {host: h.host, node: h.nodename, stage: 'requested_destination', reason, label})
  }
  if (spec.ignoreHosts.length > 0) {
    const ignore = new Set(spec.ignoreHosts.map((x) => x.toLowerCase()))
    dropHosts((h) => !ignore.has(h.host.toLowerCase()), `in ignore_hosts ${spec.ignoreHosts.join(', ')}`, 'ignored host')
  }
  if (spec.forceHosts.length > 0) {
    const force = new Set(spec.forceHosts.map((x) => x.toLowerCase()))
    dropHosts((h) => force.has(h.host.toLowerCase()), `not in force_hosts ${spec.forceHosts.join(', ')}`, 'not a forced host')
  }
  if (spec.forceNodes.length > 0) {
    const force = new Set(spec.forceNodes)
    dropHosts((h) => force.has(h.nodename), `not in force_nodes ${spec.forceNodes.join(', ')}`, 'not a forced node')
  }
  const forced = spec.forceHosts.length > 0 || spec.forceNodes.length > 0

  // alloc_reqs_by_rp_uuid: every provider of a kept request -> its requests, in order.
  const areqsByRp = new Map<string, AllocationRequest[]>()
  for (const a of cands.kept) {
    for (const p of a.parts) {
      const uuid = idx.providers.get(p.rpId)?.uuid as string
      const l = areqsByRp.get(uuid)
      if (l) {
        if (!l.includes(a)) l.push(a)
      } else areqsByRp.set(uuid, [a])
    }
  }

  const ctx: FilterContext = {cfg, now: new Date(model.snapshot.captured_at), numaFits: new Map()}
  // The first instance's weighing and choice, turned into verdicts only when they are reported.
  let firstWeighed: WeighedHost[] = []
  let firstSelected: HostState | null = null
  const tf = performance.now()
  for (let i = 0; i < spec.numInstances; i++) {
    const outcome: InstanceOutcome = {index: i, instanceUuid: newUuids[i] as string, host: null, node: null, allocations: [], filters: [], claimFailures: []}
    result.instances.push(outcome)
    ctx.numaFits = new Map()
    const filtered = forced ? [...hosts] : runFilters(filters, hosts, spec, ctx, i, outcome.filters, i === 0 ? verdicts : null)
    if (filtered.length === 0) {
      if (i > 0) for (const h of hosts) void h
      outcome.reason = hosts.length === 0 ? 'no hosts left after placement' : `filter ${outcome.filters.find((f) => f.end === 0)?.name ?? '?'} returned 0 hosts`
      break
    }
    const weighed = weighHosts(filtered, spec, weighers, cfg, i === 0)
    if (i === 0) {
      result.weighed = weighed.slice(0, opts.topWeighed ?? 5).map((w) => ({host: w.hs.host, node: w.hs.nodename, weight: w.weight, parts: w.parts ?? []}))
      firstWeighed = weighed
    }
    const sorted = chooseHost(weighed, cfg, rng)
    let claimed: {hs: HostState; areq: AllocationRequest} | null = null
    for (const hs of sorted) {
      const list = areqsByRp.get(hs.uuid)
      if (!list || list.length === 0) continue
      const areq = list[0] as AllocationRequest
      if (claimFits(idx, areq, state.usageView(idx))) {
        claimed = {hs, areq}
        break
      }
      outcome.claimFailures.push(`${hs.host}/${hs.nodename}`)
    }
    hosts = sorted
    if (!claimed) {
      outcome.reason = 'every filtered host failed the placement claim (capacity used up by earlier instances of this request)'
      break
    }
    for (const p of claimed.areq.parts) {
      state.addUsage(p.rpId, p.rcId, p.amount)
      outcome.allocations.push({provider: idx.providers.get(p.rpId)?.name ?? String(p.rpId), resource_class: p.rc, amount: p.amount})
    }
    const next = consumeHost(claimed.hs, spec, ctx.numaFits.get(claimed.hs.key) ?? null, outcome.instanceUuid)
    state.hosts.set(next.key, next)
    hosts = hosts.map((h) => (h === claimed.hs ? next : h))
    if (spec.group) spec.group.hosts.push(claimed.hs.host)
    outcome.host = claimed.hs.host
    outcome.node = claimed.hs.nodename
    state.placed++
    if (i === 0) firstSelected = claimed.hs
  }
  result.timings.filtersMs = performance.now() - tf
  const placedCount = result.instances.filter((o) => o.host !== null).length
  if (explain || placedCount < spec.numInstances) {
    firstWeighed.forEach((w, rank) => verdicts.set(w.hs.key, {host: w.hs.host, node: w.hs.nodename, stage: 'weigher', reason: `passed all filters; weighed ${w.weight.toFixed(4)} (rank ${rank + 1} of ${firstWeighed.length})`, label: 'outweighed'}))
    if (firstSelected) verdicts.set(firstSelected.key, {host: firstSelected.host, node: firstSelected.nodename, stage: 'selected', reason: 'selected', label: 'selected'})
  }
  // Placement-stage verdicts for every other compute node: for --explain/--why and for the summary.
  if (explain || placedCount < spec.numInstances) collectPlacementVerdicts(model, idx, cands, spec, verdicts)
  result.verdicts = explain ? [...verdicts.values()] : []
  const placed = result.instances.filter((o) => o.host !== null).length
  result.placedAll = placed === spec.numInstances
  result.noValidHost = !result.placedAll
  result.summary = summarize(model, result, verdicts, cands, spec)
  result.timings.totalMs = performance.now() - t0
  return result
}

function emptyResult(spec: RequestSpec, seed: number): SimulationResult {
  return {
    seed,
    request: {
      flavor: spec.flavor.name,
      flavorid: spec.flavor.flavorid,
      vcpus: spec.vcpus,
      memory_mb: spec.memoryMb,
      disk_gb: 0,
      extra_specs: spec.extraSpecs,
      image_properties: spec.image.properties,
      availability_zone: spec.availabilityZone,
      num_instances: spec.numInstances,
      project_id: spec.projectId,
      boot_from_volume: spec.isBfv,
      numa: spec.numaTopology
        ? spec.numaTopology.cells.map((c) => `cell ${c.id}: ${c.pcpuset.length ? `${c.pcpuset.length} dedicated` : ''}${c.pcpuset.length && c.cpuset.length ? ' + ' : ''}${c.cpuset.length ? `${c.cpuset.length} shared` : ''} vCPU, ${c.memory} MB${c.threadPolicy ? `, thread policy ${c.threadPolicy}` : ''}`).join('; ') + (spec.numaTopology.emulatorThreadsIsolated ? '; +1 pCPU for emulator threads' : '')
        : null,
    },
    prefilters: [],
    query: null,
    queryEncoded: null,
    warnings: [],
    placement: {candidates: 0, kept: 0, cutByLimit: 0, limit: null, providerSummaries: 0, stoppedAt: null, notes: []},
    hostStates: {count: 0, unavailableCells: [], withoutService: [], withoutComputeNode: 0},
    instances: [],
    weighed: [],
    verdicts: [],
    placedAll: false,
    noValidHost: true,
    summary: '',
    timings: {totalMs: 0, placementMs: 0, filtersMs: 0},
  }
}

function finishNoValidHost(result: SimulationResult, why: string, t0: number): SimulationResult {
  result.noValidHost = true
  result.placedAll = false
  result.summary = `NoValidHost: ${why}`
  result.timings.totalMs = performance.now() - t0
  return result
}

/** BaseFilterHandler.get_filtered_objects: filter by filter, stop at the first empty result. */
function runFilters(filters: HostFilter[], hosts: HostState[], spec: RequestSpec, ctx: FilterContext, index: number, steps: FilterStep[], verdicts: Map<string, HostVerdict> | null): HostState[] {
  let list = hosts
  for (const f of filters) {
    if (f.runOncePerRequest && index > 0) {
      steps.push({name: f.name, start: list.length, end: list.length, skipped: true})
      continue
    }
    const start = list.length
    const next: HostState[] = []
    for (const hs of list) {
      const r = f.hostPasses(hs, spec, ctx)
      if (r === null) next.push(hs)
      else if (verdicts) verdicts.set(hs.key, filterVerdict(hs, f, r))
    }
    list = next
    steps.push({name: f.name, start, end: list.length})
    if (list.length === 0) break
  }
  return list
}

function filterVerdict(hs: HostState, f: HostFilter, r: Reason): HostVerdict {
  return {host: hs.host, node: hs.nodename, stage: 'filter', filter: f.name, reason: r.message, label: `${f.name}: ${r.label}`, need: r.need, have: r.have}
}

/** _get_sorted_hosts after weighing: shuffle best ties, pick one of the subset, chosen first. */
function chooseHost(weighed: WeighedHost[], cfg: SchedulerConfig, rng: Rng): HostState[] {
  let list = weighed
  if (cfg.shuffle_best_same_weighed_hosts && list.length > 0) {
    const top = (list[0] as WeighedHost).weight
    let k = 0
    while (k < list.length && (list[k] as WeighedHost).weight === top) k++
    const best = list.slice(0, k)
    shuffleInPlace(best, rng)
    list = [...best, ...list.slice(k)]
  }
  const hosts = list.map((w) => w.hs)
  const size = cfg.host_subset_size < hosts.length ? Math.max(cfg.host_subset_size, 1) : hosts.length
  const pick = rng.int(size)
  const chosen = hosts[pick] as HostState
  hosts.splice(pick, 1)
  return [chosen, ...hosts]
}

/** PUT /allocations: every part must fit the provider's current usage. */
function claimFits(idx: ProviderIndex, areq: AllocationRequest, usage: UsageView): boolean {
  for (const p of areq.parts) {
    const inv = idx.providers.get(p.rpId)?.inventories.get(p.rcId)
    if (!checkClaimCapacity(inv, usage.used(p.rpId, p.rcId), p.amount)) return false
  }
  return true
}

/** HostState.consume_from_request, returning a new state. */
export function consumeHost(hs: HostState, spec: RequestSpec, numaFit: FittedCell[] | null, instanceUuid: string): HostState {
  const next: HostState = {...hs, instances: new Set(hs.instances)}
  next.freeRamMb -= spec.memoryMb
  next.freeDiskMb -= (spec.rootGb + spec.ephemeralGb) * 1024
  next.vcpusUsed += spec.vcpus
  next.numInstances += 1
  if (hs.numa && numaFit) {
    try {
      next.numa = consumeNuma(hs.numa, numaFit)
    } catch (error) {
      // set_update_time_on_success swallows it: the counters above stay consumed, the NUMA, PCI
      // and io_ops updates below are skipped
      if (!(error instanceof CpuPinningError)) throw error
      next.instances.add(instanceUuid)
      return next
    }
  }
  next.numIoOps += 1
  if (spec.pciRequests.length > 0) {
    const r = pciSupports(hs.pciPools, spec.pciRequests)
    if (r.ok) next.pciPools = r.pools
  }
  next.instances.add(instanceUuid)
  return next
}

// ---------------------------------------------------------------- explanation

function collectPlacementVerdicts(model: CloudModel, idx: ProviderIndex, cands: CandidateResult, spec: RequestSpec, verdicts: Map<string, HostVerdict>): void {
  const keptRoots = new Set<number>()
  for (const a of cands.kept) keptRoots.add(a.anchorRootId)
  const allRoots = new Set<number>()
  for (const a of cands.all) allRoots.add(a.anchorRootId)
  for (const cn of model.liveComputeNodes) {
    const key = `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`
    if (verdicts.has(key)) continue
    const base = {host: cn.host ?? '', node: cn.hypervisor_hostname ?? ''}
    if (!model.isCellAvailable(cn.cell_uuid)) {
      verdicts.set(key, {...base, stage: 'host_state', reason: `cell ${model.cellLabel(cn.cell_uuid)} could not be read: the host is unknown`, label: 'in an unavailable cell (unknown)'})
      continue
    }
    const rp = cn.uuid ? idx.byUuid.get(cn.uuid) : undefined
    if (!rp) {
      verdicts.set(key, {...base, stage: 'placement', reason: 'the compute node has no resource provider in placement', label: 'no resource provider'})
      continue
    }
    if (keptRoots.has(rp.rootId)) continue
    if (allRoots.has(rp.rootId)) {
      verdicts.set(key, {...base, stage: 'placement', reason: `a candidate, but cut by limit=${cands.kept.length} (max_placement_results)`, label: 'cut by max_placement_results'})
      continue
    }
    const rej = cands.diagnostics.rejectedRoots.get(rp.rootId)
    let label = rej?.label ?? 'not a placement candidate'
    if (label === 'not in requested aggregate' && spec.availabilityZone && spec.requiredAggregates.length > 0) label = `not in AZ ${spec.availabilityZone}`
    verdicts.set(key, {...base, stage: 'placement', reason: rej?.message ?? cands.diagnostics.stoppedAt ?? 'not returned by placement', label, need: rej?.need, have: rej?.have})
  }
}

/** "0/120 hosts are available: 80 insufficient PCPU (need 4, best has 2), 30 not in AZ az2, 10 disabled." */
function summarize(model: CloudModel, result: SimulationResult, verdicts: Map<string, HostVerdict>, cands: CandidateResult, spec: RequestSpec): string {
  const placed = result.instances.filter((o) => o.host !== null)
  if (result.placedAll) {
    const hosts = [...new Set(placed.map((o) => o.host))]
    return `${placed.length}/${spec.numInstances} instance(s) placed on ${hosts.length} host(s): ${hosts.slice(0, 5).join(', ')}${hosts.length > 5 ? ', ...' : ''}`
  }
  const total = model.liveComputeNodes.length
  const groups = new Map<string, {n: number; need?: number; best?: number}>()
  {
    for (const v of verdicts.values()) {
      if (v.stage === 'selected') continue
      const g = groups.get(v.label) ?? {n: 0}
      g.n++
      if (v.need !== undefined) g.need = v.need
      if (v.have !== undefined) g.best = Math.max(g.best ?? -Infinity, v.have)
      groups.set(v.label, g)
    }
  }
  const parts = [...groups.entries()]
    .sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1))
    .map(([label, g]) => `${g.n} ${label}${g.need !== undefined ? ` (need ${g.need}, best has ${g.best})` : ''}`)
  const unknown = model.unavailableCells.length > 0 ? ` ${model.unavailableCells.map((c) => c.name ?? c.uuid).join(', ')} could not be read: its hosts are unknown.` : ''
  const firstFail = result.instances.find((o) => o.host === null)
  const head = placed.length > 0 ? `NoValidHost: only ${placed.length}/${spec.numInstances} instances could be placed (${firstFail?.reason ?? ''}).` : 'NoValidHost.'
  const detail = parts.length > 0 ? ` 0/${total} hosts are available: ${parts.join(', ')}.` : cands.all.length === 0 ? ` Placement returned no allocation candidates: ${cands.diagnostics.stoppedAt ?? 'no provider satisfies the request'}.` : firstFail?.reason ? ` ${firstFail.reason}.` : ''
  return `${head}${detail}${unknown}`
}

export type {PlacementRequest}
