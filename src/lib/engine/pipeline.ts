/**
 * The whole of nova's select_destinations for a boot or a move, offline:
 *   request -> request filters -> placement query -> allocation candidates (limit) -> host states
 *   (database order) -> filters -> weighers -> host_subset_size choice -> claim -> consume
 * repeated per instance, with an EngineState that a capacity planner can clone and keep using.
 */
import type {CloudModel} from '../domain/model.js'
import {notInRelease, type SchedulerConfig} from './config.js'
import {collectPlacementVerdicts, summarize} from './explain.js'
import {FILTERS, resolveFilters, type FilterContext, type HostFilter, type Reason, pciSupports} from './filters.js'
import {candidateHostStates, narrowHosts} from './host-list.js'
import type {HostState} from './host-state.js'
import {consumeNuma, CpuPinningError, type FittedCell} from './numa.js'
import {allocationCandidates} from './placement.js'
import {checkClaimCapacity} from './placement-capacity-check.js'
import {providerIndex, type ProviderIndex, type UsageView} from './provider-index.js'
import {toQueryString} from './placement-query.js'
import {type AllocationRequest, type CandidateResult} from './placement-result.js'
import {type PlacementRequest} from './placement-request.js'
import {buildRequestSpec, placementRequestFor, RequestFilterFailed, RequestRefused, runRequestFilters, unreadSpecs} from './request.js'
import {type BootRequest, type RequestSpec} from './request-spec.js'
import {emptyResult, finishNoValidHost, type FilterStep, type HostVerdict, type InstanceOutcome, type SimulateOptions, type SimulationResult} from './result.js'
import {createRng, DEFAULT_SEED, shuffleInPlace, type Rng} from './rng.js'
import {createEngineState, type EngineState} from './state.js'
import {resolveWeighers, weighHosts, type Weigher, type WeighedHost} from './weighers.js'
import {ConfigError} from '../errors.js'

export {createEngineState, EngineState} from './state.js'
export type {FilterStep, HostVerdict, InstanceOutcome, Refusal, SimulateOptions, SimulationResult, WeighedView} from './result.js'

/** What the stages after placement share. */
interface Run {
  model: CloudModel
  cfg: SchedulerConfig
  spec: RequestSpec
  idx: ProviderIndex
  state: EngineState
  result: SimulationResult
  verdicts: Map<string, HostVerdict>
  rng: Rng
  topWeighed: number
}

function resolvePlugins(cfg: SchedulerConfig): {filters: HostFilter[]; weighers: Weigher[]} {
  const {filters, unknown: unknownFilters} = resolveFilters(cfg.enabled_filters)
  if (unknownFilters.length > 0)
    throw new ConfigError(`unknown scheduler filter(s): ${unknownFilters.join(', ')}`, `Known filters: ${Object.keys(FILTERS).join(', ')}`)
  const {weighers, unknown: unknownWeighers} = resolveWeighers(cfg.weight_classes)
  if (unknownWeighers.length > 0) throw new ConfigError(`unknown weigher(s): ${unknownWeighers.join(', ')}`)
  const absent = notInRelease(cfg)
  if (absent.length > 0)
    throw new ConfigError(
      `nova ${cfg.release} has no ${absent.join(', ')}`,
      'Drop it from enabled_filters / weight_classes, or simulate the release that has it (--release).',
    )
  return {filters, weighers}
}

export function simulateBoot(model: CloudModel, req: BootRequest, cfg: SchedulerConfig, opts: SimulateOptions = {}): SimulationResult {
  const seed = opts.seed ?? DEFAULT_SEED
  const {filters, weighers} = resolvePlugins(cfg)
  const spec = buildRequestSpec(model, req, cfg)
  const result = emptyResult(spec, seed)
  // The instances of this request are members of their server group, as nova-api records them; a
  // move schedules the instance itself (already a member).
  const uuids = spec.instanceUuid
    ? [spec.instanceUuid]
    : Array.from({length: spec.numInstances}, (_, i) => `simulated-instance-${String(i + 1).padStart(4, '0')}`)
  if (spec.group) for (const u of uuids) spec.group.members.add(u)
  try {
    result.prefilters = runRequestFilters(model, spec, cfg)
  } catch (error) {
    if (error instanceof RequestRefused) return refused(result, error)
    if (!(error instanceof RequestFilterFailed)) throw error
    result.prefilters = error.trace
    return finishNoValidHost(result, `request filter failed: ${error.message}`)
  }
  if (spec.numaTopology && !filters.some((f) => f.name === 'NUMATopologyFilter')) {
    result.warnings.push(
      'the request has a NUMA topology (pinning / hw:numa_nodes / page size) but NUMATopologyFilter is not in enabled_filters: nova would pick a host without checking NUMA cells, and the build could then fail on the compute node (add it with --filters or --nova-conf)',
    )
  }
  const pr = placementRequestFor(model, spec, cfg)
  result.warnings.push(...unreadSpecs(spec), ...pr.warnings)
  result.query = toQueryString(pr.request)
  result.queryEncoded = toQueryString(pr.request, {encoded: true})
  result.request.disk_gb = [...(pr.request.groups.find((g) => g.suffix === '')?.resources ?? [])].find(([rc]) => rc === 'DISK_GB')?.[1] ?? 0
  if (pr.fatal) return finishNoValidHost(result, pr.fatal)

  const idx = providerIndex(model)
  const state = opts.state ?? createEngineState()
  const cands = allocationCandidates(idx, pr.request, state.usageView(idx), {
    maxCandidates: cfg.max_allocation_candidates,
    strategy: cfg.allocation_candidates_generation_strategy,
  })
  recordPlacement(result, cands, pr.request)
  const run: Run = {model, cfg, spec, idx, state, result, verdicts: new Map(), rng: createRng(seed), topWeighed: opts.topWeighed ?? 5}
  const hosts = narrowHosts(candidateHostStates(model, idx, cands, spec, cfg, state, result, run.verdicts), spec, run.verdicts)
  const first = placeInstances(run, hosts, cands, uuids, filters, weighers)
  const explain = Boolean(opts.explain)
  const placed = result.instances.filter((o) => o.host !== null).length
  if (explain || placed < spec.numInstances) {
    first.weighed.forEach((w, rank) =>
      run.verdicts.set(w.hs.key, {
        host: w.hs.host,
        node: w.hs.nodename,
        stage: 'weigher',
        reason: `passed all filters; weighed ${w.weight.toFixed(4)} (rank ${rank + 1} of ${first.weighed.length})`,
        label: 'outweighed',
      }),
    )
    if (first.selected)
      run.verdicts.set(first.selected.key, {host: first.selected.host, node: first.selected.nodename, stage: 'selected', reason: 'selected', label: 'selected'})
    // Placement-stage verdicts for every other compute node: for --explain/--why and for the summary.
    collectPlacementVerdicts(model, idx, cands, spec, run.verdicts)
  }
  result.verdicts = explain ? [...run.verdicts.values()] : []
  result.placedAll = placed === spec.numInstances
  result.noValidHost = !result.placedAll
  result.summary = summarize(model, result, run.verdicts, cands, spec)
  return result
}

function refused(result: SimulationResult, error: RequestRefused): SimulationResult {
  result.prefilters = error.trace
  result.refusal = {stage: error.stage, status: error.status, message: error.message, hint: error.hint}
  result.noValidHost = false
  result.placedAll = false
  result.summary = `nova-api refuses the request (${error.status}): ${error.message}`
  return result
}

function recordPlacement(result: SimulationResult, cands: CandidateResult, request: PlacementRequest): void {
  result.placement = {
    candidates: cands.all.length,
    kept: cands.kept.length,
    cutByLimit: cands.all.length - cands.kept.length,
    limit: request.limit,
    providerSummaries: cands.summaryProviderIds.size,
    stoppedAt: cands.diagnostics.stoppedAt,
    notes: [
      ...cands.diagnostics.notes,
      ...(cands.combinationsTruncated ? [`more than 10000 combinations in a provider tree: the engine stopped enumerating (placement would not)`] : []),
    ],
  }
}

/** alloc_reqs_by_rp_uuid: every provider of a kept request -> its requests, in order. */
function requestsByProvider(idx: ProviderIndex, cands: CandidateResult): Map<string, AllocationRequest[]> {
  const out = new Map<string, AllocationRequest[]>()
  for (const a of cands.kept) {
    for (const p of a.parts) {
      const uuid = idx.providers.get(p.rpId)?.uuid as string
      const l = out.get(uuid)
      if (l) {
        if (!l.includes(a)) l.push(a)
      } else out.set(uuid, [a])
    }
  }
  return out
}

/**
 * FilterScheduler._schedule per instance: filter, weigh, choose, claim, consume. Returns the first
 * instance's weighing and choice (turned into verdicts only when they are reported).
 */
function placeInstances(
  run: Run,
  start: HostState[],
  cands: CandidateResult,
  uuids: string[],
  filters: HostFilter[],
  weighers: Weigher[],
): {weighed: WeighedHost[]; selected: HostState | null} {
  const {spec, result, state, idx, cfg} = run
  const forced = spec.forceHosts.length > 0 || spec.forceNodes.length > 0
  const areqsByRp = requestsByProvider(idx, cands)
  const ctx: FilterContext = {cfg, now: new Date(run.model.snapshot.captured_at), numaFits: new Map()}
  const first: {weighed: WeighedHost[]; selected: HostState | null} = {weighed: [], selected: null}
  let hosts = start
  for (let i = 0; i < uuids.length; i++) {
    const outcome: InstanceOutcome = {index: i, instanceUuid: uuids[i] as string, host: null, node: null, allocations: [], filters: [], claimFailures: []}
    result.instances.push(outcome)
    ctx.numaFits = new Map()
    const filtered = forced ? [...hosts] : runFilters(filters, hosts, spec, ctx, i, outcome.filters, i === 0 ? run.verdicts : null)
    if (filtered.length === 0) {
      outcome.reason = hosts.length === 0 ? 'no hosts left after placement' : `filter ${outcome.filters.find((f) => f.end === 0)?.name ?? '?'} returned 0 hosts`
      break
    }
    const weighed = weighHosts(filtered, spec, weighers, cfg, i === 0)
    if (i === 0) {
      result.weighed = weighed.slice(0, run.topWeighed).map((w) => ({host: w.hs.host, node: w.hs.nodename, weight: w.weight, parts: w.parts ?? []}))
      first.weighed = weighed
    }
    const sorted = chooseHost(weighed, cfg, run.rng)
    const claimed = claimFirst(run, sorted, areqsByRp, outcome)
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
    if (i === 0) first.selected = claimed.hs
  }
  return first
}

/** The first host (in the chosen order) whose first allocation request still fits placement. */
function claimFirst(
  run: Run,
  sorted: HostState[],
  areqsByRp: Map<string, AllocationRequest[]>,
  outcome: InstanceOutcome,
): {hs: HostState; areq: AllocationRequest} | null {
  for (const hs of sorted) {
    const list = areqsByRp.get(hs.uuid)
    if (!list || list.length === 0) continue
    const areq = list[0] as AllocationRequest
    if (claimFits(run.idx, areq, run.state.usageView(run.idx))) return {hs, areq}
    outcome.claimFailures.push(`${hs.host}/${hs.nodename}`)
  }
  return null
}

/** BaseFilterHandler.get_filtered_objects: filter by filter, stop at the first empty result. */
function runFilters(
  filters: HostFilter[],
  hosts: HostState[],
  spec: RequestSpec,
  ctx: FilterContext,
  index: number,
  steps: FilterStep[],
  verdicts: Map<string, HostVerdict> | null,
): HostState[] {
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

export type {PlacementRequest}
