/**
 * The per-host fast path: for one flavor, how many more instances fit on each host, evaluated with
 * the engine's own filters, capacity rules and consume step, without booting them one by one.
 *
 * Why the sum of per-host counts is what booting one after another gives (docs/capacity.md):
 * - everything host-independent (request spec, request filters, the placement request) is computed
 *   once, exactly as simulateBoot computes it;
 * - on a flat cloud (no nested or sharing providers) an instance placed on host A changes nothing
 *   that any filter, candidate check or claim reads for host B, so each host's count depends only
 *   on its own state; weighers and host_subset_size decide the order hosts fill in, not how many
 *   fit on each; a host that refuses an instance refuses every later one (its state only changes
 *   when something lands on it), so booting stops exactly when every host has reached its count;
 * - per host: filters that never read consumed state are evaluated once (those that do not depend
 *   on the flavor either, once per run for all flavors); the placement capacity and the counter
 *   filters (RAM/Core/Disk/NumInstances/IoOps and their aggregate variants) are monotone in the
 *   number placed and are evaluated on the exact state after k instances (integer arithmetic, the
 *   engine's own filter functions) with a binary search; NUMA, PCI and capability checks on consumed
 *   attributes are stepped instance by instance with the engine's consumeHost.
 * Not per-host independent, so handled apart (index.ts): an affinity group with no member yet (its
 * first instance is placed through the engine, then only that host counts), and nested or sharing
 * providers (counted through the engine).
 */
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode} from '../domain/snapshot.js'
import {consumeHost, type EngineState, type SchedulerConfig} from '../engine/index.js'
import {type FilterContext, type HostFilter, type Reason} from '../engine/filters.js'
import {buildHostState, hostStateBase, type HostState} from '../engine/host-state.js'
import {type ProviderIndex, type ProviderInfo, type UsageView} from '../engine/provider-index.js'
import {type ProviderInventory} from '../engine/placement-capacity-check.js'
import {type PlacementRequest} from '../engine/placement-request.js'
import type {RequestSpec} from '../engine/request-spec.js'
import {flatPlacement, placementCount, staticPlacementReason} from './flat-placement.js'

export {flatPlacement, type FlatPlacement} from './flat-placement.js'

export interface FlavorPlan {
  spec: RequestSpec
  request: PlacementRequest
  filters: HostFilter[]
  cfg: SchedulerConfig
}

export interface HostRow {
  cn: ComputeNode
  key: string
  rp: ProviderInfo | undefined
  hs: HostState | null
  /** Why the host takes nothing whatever the flavor (unavailable cell, no provider, no service). */
  gone: string | null
}

export interface HostCount {
  fits: number
  naive: number
  limit: string
}

/** Host states, providers and flavor-independent verdicts for one capacity run. */
export class CapacityContext {
  readonly rows: HostRow[] = []
  readonly usage: UsageView
  readonly ctx: FilterContext
  private readonly requestVerdicts = new Map<string, Array<Reason | null>>()

  constructor(
    readonly model: CloudModel,
    readonly idx: ProviderIndex,
    readonly cfg: SchedulerConfig,
    readonly state: EngineState,
    nodes: ComputeNode[],
  ) {
    this.usage = state.usageView(idx)
    this.ctx = {cfg, now: new Date(model.snapshot.captured_at), numaFits: new Map()}
    const base = hostStateBase(model, cfg)
    const seen = new Map<number, string>()
    for (const cn of nodes) {
      const key = `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`
      const rp = cn.uuid ? idx.byUuid.get(cn.uuid) : undefined
      let gone: string | null = null
      let hs: HostState | null = null
      if (!model.isCellAvailable(cn.cell_uuid)) gone = `cell ${model.cellLabel(cn.cell_uuid)} unavailable`
      else if (!rp) gone = 'no resource provider'
      else if (seen.has(rp.id)) gone = `shares resource provider ${rp.name ?? rp.uuid} with ${seen.get(rp.id)} (duplicate compute node)`
      else {
        seen.set(rp.id, cn.hypervisor_hostname ?? cn.host ?? '?')
        hs = state.hosts.get(key) ?? buildHostState(model, cn, cfg, base)
        if (!hs.service) gone = 'no nova-compute service'
      }
      this.rows.push({cn, key, rp, hs, gone})
    }
  }

  /** The verdict of a filter that reads neither flavor nor consumed state, per row (cached). */
  requestVerdict(f: HostFilter, spec: RequestSpec, i: number): Reason | null {
    let list = this.requestVerdicts.get(f.name)
    if (!list) {
      list = this.rows.map((r) => (r.hs && !r.gone ? f.hostPasses(r.hs, spec, this.ctx) : null))
      this.requestVerdicts.set(f.name, list)
    }
    return list[i] ?? null
  }
}

/** Number of leading j in [0, n) with pred(j) true, for a predicate that stays false once false. */
export function leadingTrue(n: number, pred: (j: number) => boolean): number {
  let lo = 0
  let hi = n
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2)
    if (pred(mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The state after k more instances, for the fields consumeHost changes arithmetically. */
function stateAfter(hs: HostState, spec: RequestSpec, k: number): HostState {
  if (k === 0) return hs
  return {
    ...hs,
    freeRamMb: hs.freeRamMb - k * spec.memoryMb,
    freeDiskMb: hs.freeDiskMb - k * (spec.rootGb + spec.ephemeralGb) * 1024,
    vcpusUsed: hs.vcpusUsed + k * spec.vcpus,
    numInstances: hs.numInstances + k,
    numIoOps: hs.numIoOps + k,
  }
}

export function numaLabel(spec: RequestSpec, r: {label: string}): string {
  const req = spec.numaTopology
  if (req && r.label.startsWith('insufficient free pCPUs')) {
    const perCell = Math.max(...req.cells.map((c) => c.pcpuset.length)) + (req.emulatorThreadsIsolated ? 1 : 0)
    return `NUMA: no cell with ${perCell} free dedicated CPUs`
  }
  return `NUMA: ${r.label}`
}

function filterLabel(f: HostFilter, spec: RequestSpec, r: Reason): string {
  if (f.name === 'NUMATopologyFilter') return numaLabel(spec, r)
  if (f.name === 'ServerGroupAntiAffinityFilter' && spec.group) return antiAffinityLabel(spec)
  return `${f.name}: ${r.label}`
}

function antiAffinityLabel(spec: RequestSpec): string {
  const g = spec.group
  return g ? `anti-affinity group ${g.name ?? g.uuid} (max_server_per_host=${g.rules.max_server_per_host ?? 1})` : 'anti-affinity group'
}

// ---------------------------------------------------------------- per flavor

/**
 * Per-row counts for one flavor. `onlyHostKey`: an affinity group whose first member went there
 * (null: it went nowhere).
 */
export function countPerHost(cc: CapacityContext, plan: FlavorPlan, opts: {onlyHostKey?: string | null; affinityNote?: string} = {}): HostCount[] {
  const {spec, filters} = plan
  const {idx, usage, ctx} = cc
  const fp = flatPlacement(idx, plan.request)

  const requestLevel: number[] = []
  const flavorStatic: number[] = []
  const counters: HostFilter[] = []
  const stepped: HostFilter[] = []
  let antiAffinity = false
  filters.forEach((f, i) => {
    const reads = f.reads(spec)
    if (reads === 'counters') counters.push(f)
    else if (reads === 'group') antiAffinity = true
    else if (reads === 'placed') stepped.push(f)
    else if (reads === 'request') requestLevel.push(i)
    else flavorStatic.push(i)
  })
  const maxPerHost = spec.group?.rules.max_server_per_host ?? 1

  const out: HostCount[] = new Array(cc.rows.length)
  for (let i = 0; i < cc.rows.length; i++) {
    const row = cc.rows[i] as HostRow
    const rp = row.rp
    // naive: free placement capacity / flavor, per class, minimum (os-capacity's estimate).
    let naive = 0
    if (rp && fp.parts.length > 0) {
      naive = Number.POSITIVE_INFINITY
      for (const p of fp.parts) {
        const inv = rp.inventories.get(p.rcId)
        const n = inv ? Math.max(0, Math.floor((inv.summaryCapacity - usage.used(rp.id, p.rcId)) / p.total)) : 0
        if (n < naive) naive = n
      }
    }
    const hs = row.hs
    if (row.gone || !hs || !rp) {
      out[i] = {fits: 0, naive, limit: row.gone ?? 'no host state'}
      continue
    }
    if (opts.onlyHostKey !== undefined && row.key !== opts.onlyHostKey) {
      out[i] = {fits: 0, naive, limit: opts.affinityNote ?? 'affinity group placed elsewhere'}
      continue
    }
    if (fp.fatal) {
      out[i] = {fits: 0, naive, limit: `placement: ${fp.fatal}`}
      continue
    }
    const pr = staticPlacementReason(fp, rp)
    if (pr) {
      out[i] = {fits: 0, naive, limit: pr.startsWith('max_unit') ? pr : `placement: ${pr}`}
      continue
    }
    // Static filters, reported in configured order: the first that refuses.
    let refused: string | null = null
    let firstAt = filters.length
    for (const fi of requestLevel) {
      const r = cc.requestVerdict(filters[fi] as HostFilter, spec, i)
      if (r) {
        firstAt = fi
        refused = filterLabel(filters[fi] as HostFilter, spec, r)
        break
      }
    }
    for (const fi of flavorStatic) {
      if (fi > firstAt) break
      const f = filters[fi] as HostFilter
      const r = f.hostPasses(hs, spec, ctx)
      if (r) {
        refused = filterLabel(f, spec, r)
        break
      }
    }
    if (refused) {
      out[i] = {fits: 0, naive, limit: refused}
      continue
    }

    let bound = Number.POSITIVE_INFINITY
    let limit = 'no limit'
    for (const p of fp.parts) {
      const k = placementCount(rp.inventories.get(p.rcId) as ProviderInventory, p, usage.used(rp.id, p.rcId))
      if (k < bound) {
        bound = k
        limit = `${p.rc} exhausted`
      }
    }
    if (!Number.isFinite(bound)) bound = 0
    for (const f of counters) {
      let lo = 0
      let hi = bound
      while (lo < hi) {
        const mid = lo + ((hi - lo) >> 1)
        if (f.hostPasses(stateAfter(hs, spec, mid), spec, ctx) === null) lo = mid + 1
        else hi = mid
      }
      if (lo < bound) {
        bound = lo
        limit = filterLabel(f, spec, f.hostPasses(stateAfter(hs, spec, lo), spec, ctx) as Reason)
      }
    }
    if (antiAffinity && spec.group) {
      let on = 0
      for (const u of hs.instances) if (spec.group.members.has(u)) on++
      const k = Math.max(0, maxPerHost - on)
      if (k < bound) {
        bound = k
        limit = antiAffinityLabel(spec)
      }
    }
    if (stepped.length > 0) {
      let cur = hs
      let j = 0
      for (; j < bound; j++) {
        ctx.numaFits = new Map()
        let why: string | null = null
        for (const f of stepped) {
          const r = f.hostPasses(cur, spec, ctx)
          if (r) {
            why = filterLabel(f, spec, r)
            break
          }
        }
        if (why) {
          limit = why
          break
        }
        cur = consumeHost(cur, spec, ctx.numaFits.get(cur.key) ?? null, `capacity-${j}`)
      }
      bound = j
    }
    out[i] = {fits: bound, naive, limit}
  }
  return out
}
