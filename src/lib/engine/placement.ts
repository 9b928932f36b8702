/**
 * Placement's GET /allocation_candidates, reproduced over a snapshot (placement 8, Zed).
 *
 * Capacity is computed the way placement computes it, which is not the same in every place:
 * - candidate search (SQL in research_context._capacity_check_clause):
 *     used + amount <= (total - reserved) * allocation_ratio
 *   evaluated by MySQL, where the FLOAT column widens to the double of its single-precision value
 *   (0.9 -> 0.8999999761581421): an exact fit at ratio 0.9 is excluded;
 * - provider summaries / consolidated groups (allocation_candidate._build_provider_summaries):
 *     capacity = int((total - reserved) * ratio) in Python, with the ratio read back as text ("0.9");
 * - the claim (allocation._check_capacity_exceeded) also works in Python on the text value.
 * The formulas and the two readings of the FLOAT live in domain/placement-capacity.ts.
 *
 * One algorithm, hence one file over 400 lines: AllocationCandidates.get_by_requests, i.e. per
 * group a capacity scan then a one-provider or tree-spreading search, then per anchor the merge of
 * the groups (group_policy, same_subtree, the combined capacity re-check) and the limit. The stages
 * share the provider index, the per-group context and the lazily built request objects that keep a
 * boot on a big cloud fast; apart they would be one data flow read across files. The query string
 * and placement's 400s for it are placement-query.ts.
 */
import type {CloudModel} from '../domain/model.js'
import {capacityOf, floatRead, floatStored, SHARING_TRAIT, sqlCapacityOf, summaryCapacityOf} from '../domain/placement-capacity.js'
import type {Inventory, ResourceProvider} from '../domain/snapshot.js'
import {push} from '../util/multimap.js'
import {placementBadRequest, rootRequiredText} from './placement-query.js'
import type {PlacementGroup, PlacementRequest} from './placement-request.js'

export interface ProviderInventory {
  rcId: number
  total: number
  reserved: number
  minUnit: number
  maxUnit: number
  stepSize: number
  ratio: number
  /** (total - reserved) * float32(ratio): the SQL bound (a double, not rounded). */
  sqlCapacity: number
  /** (total - reserved) * text(ratio): the Python bound used by claims. */
  pyCapacity: number
  /** int(pyCapacity): provider summary capacity. */
  summaryCapacity: number
  /** The ratio as a client reads the FLOAT back (0.9), computed once: messages use it. */
  ratioText: number
}

export function inventoryOf(inv: Inventory): ProviderInventory {
  return {
    rcId: inv.resource_class_id,
    total: inv.total,
    reserved: inv.reserved,
    minUnit: inv.min_unit,
    maxUnit: inv.max_unit,
    stepSize: inv.step_size,
    ratio: inv.allocation_ratio,
    sqlCapacity: sqlCapacityOf(inv),
    pyCapacity: capacityOf(inv),
    summaryCapacity: summaryCapacityOf(inv),
    ratioText: floatRead(inv.allocation_ratio),
  }
}

export type CapacityVerdict = {ok: true} | {ok: false; why: 'no_inventory' | 'capacity' | 'min_unit' | 'max_unit' | 'step_size'; detail: string}

/** The candidate-search rule (SQL): why a provider cannot give `amount`, or ok. */
const FITS: CapacityVerdict = {ok: true}

/**
 * research_context._capacity_check_clause: the SQL capacity bound and the unit constraints. The one
 * spelling of the test: the candidate scan's hot loop calls it, checkCandidateCapacity explains a no.
 */
export function candidateFits(inv: ProviderInventory, used: number, amount: number): boolean {
  return used + amount <= inv.sqlCapacity && inv.minUnit <= amount && inv.maxUnit >= amount && inv.stepSize > 0 && amount % inv.stepSize === 0
}

export function checkCandidateCapacity(inv: ProviderInventory | undefined, used: number, amount: number, rc: string): CapacityVerdict {
  if (inv && candidateFits(inv, used, amount)) return FITS
  if (!inv) return {ok: false, why: 'no_inventory', detail: `no ${rc} inventory`}
  if (!(used + amount <= inv.sqlCapacity)) {
    return {ok: false, why: 'capacity', detail: capacityDetail(inv, used, amount, rc)}
  }
  if (inv.minUnit > amount) return {ok: false, why: 'min_unit', detail: `${rc} ${amount} is below min_unit ${inv.minUnit}`}
  if (inv.maxUnit < amount) return {ok: false, why: 'max_unit', detail: `${rc} ${amount} exceeds max_unit ${inv.maxUnit}`}
  if (inv.stepSize <= 0 || amount % inv.stepSize !== 0) return {ok: false, why: 'step_size', detail: `${rc} ${amount} is not a multiple of step_size ${inv.stepSize}`}
  return FITS
}

/** The claim rule (PUT /allocations): constraints first, then Python capacity. */
export function checkClaimCapacity(inv: ProviderInventory | undefined, used: number, amount: number): boolean {
  if (!inv) return false
  if (amount === 0) return true
  if (amount < inv.minUnit || amount > inv.maxUnit || inv.stepSize <= 0 || amount % inv.stepSize !== 0) return false
  return used + amount <= inv.pyCapacity
}

function capacityDetail(inv: ProviderInventory, used: number, amount: number, rc: string): string {
  return `insufficient ${rc}: need ${amount}, used ${used} of ${fmtCap(inv.sqlCapacity)} ((${inv.total} - ${inv.reserved}) x ${fmtRatio(inv.ratio)})`
}

function fmtCap(c: number): string {
  return Number.isInteger(c) ? String(c) : c.toFixed(6).replace(/0+$/, '')
}
function fmtRatio(r: number): string {
  const f = floatStored(r)
  return f === floatRead(r) ? String(floatRead(r)) : `${floatRead(r)} (float ${f})`
}

export interface ProviderInfo {
  /** Dense position in provider id order (0..n-1): index into typed arrays. */
  ord: number
  id: number
  uuid: string
  name: string | null
  rootId: number
  parentId: number | null
  inventories: Map<number, ProviderInventory>
  traits: Set<string>
  aggregates: Set<string>
}

/**
 * Everything the candidate search needs, computed once per model: provider capacities, usage,
 * traits, aggregates, and reverse indexes (class -> providers, aggregate -> providers).
 */
export class ProviderIndex {
  readonly providers = new Map<number, ProviderInfo>()
  readonly byUuid = new Map<string, ProviderInfo>()
  /** Providers with an inventory of a class, in provider id order. */
  readonly byResourceClass = new Map<number, ProviderInfo[]>()
  readonly byAggregate = new Map<string, ProviderInfo[]>()
  readonly treeMembers = new Map<number, ProviderInfo[]>()
  readonly sharing = new Set<number>()
  readonly hasTrees: boolean
  readonly knownTraits: Set<string>
  readonly baseUsage: Map<number, Map<number, number>>

  constructor(readonly model: CloudModel) {
    const rps = [...model.snapshot.placement.resource_providers].sort((a, b) => a.id - b.id)
    let trees = false
    for (const [ord, rp] of rps.entries()) {
      const root = model.rootOf(rp)
      const info: ProviderInfo = {
        ord,
        id: rp.id,
        uuid: rp.uuid,
        name: rp.name,
        rootId: root.id,
        parentId: rp.parent_provider_id,
        inventories: new Map((model.inventoriesByProvider.get(rp.id) ?? []).map((i) => [i.resource_class_id, inventoryOf(i)])),
        traits: model.traitsOf(rp.id),
        aggregates: model.aggregatesOf(rp.id),
      }
      if (rp.parent_provider_id !== null) trees = true
      this.providers.set(rp.id, info)
      this.byUuid.set(rp.uuid, info)
      for (const rcId of info.inventories.keys()) push(this.byResourceClass, rcId, info)
      for (const agg of info.aggregates) push(this.byAggregate, agg, info)
      push(this.treeMembers, info.rootId, info)
      if (info.traits.has(SHARING_TRAIT)) this.sharing.add(rp.id)
    }
    this.hasTrees = trees
    this.knownTraits = new Set(model.traitNamesById.values())
    this.baseUsage = model.usageByProvider
  }

  provider(rp: ResourceProvider | number): ProviderInfo | undefined {
    return this.providers.get(typeof rp === 'number' ? rp : rp.id)
  }

  private readonly columns = new Map<number, ResourceColumn>()
  private readonly anchorCache = new Map<string, AnchorRoots>()

  /** The providers of one resource class as parallel arrays (id order), built once per model. */
  column(rcId: number): ResourceColumn {
    let col = this.columns.get(rcId)
    if (col) return col
    const infos = this.byResourceClass.get(rcId) ?? []
    const invs = infos.map((i) => i.inventories.get(rcId) as ProviderInventory)
    const summaryCap = new Float64Array(infos.length)
    const base = new Float64Array(infos.length)
    infos.forEach((info, i) => {
      const inv = invs[i] as ProviderInventory
      summaryCap[i] = inv.summaryCapacity
      base[i] = this.baseUsage.get(info.id)?.get(rcId) ?? 0
    })
    col = {rcId, infos, invs, summaryCap, base}
    this.columns.set(rcId, col)
    return col
  }

  /** Roots satisfying root_required / root_forbidden, and why the others do not; cached per trait set. */
  anchorRoots(required: Set<string>, forbidden: Set<string>): AnchorRoots {
    const key = `${[...required].sort().join(',')}|${[...forbidden].sort().join(',')}`
    let got = this.anchorCache.get(key)
    if (got) return got
    const roots = new Set<number>()
    const rejected: Array<[number, RootRejection]> = []
    for (const info of this.providers.values()) {
      if (info.rootId !== info.id) continue
      let ok = true
      for (const t of required) if (!info.traits.has(t)) ok = false
      for (const t of forbidden) if (info.traits.has(t)) ok = false
      if (ok) roots.add(info.id)
      else {
        const missing = [...required].filter((t) => !info.traits.has(t))
        const present = [...forbidden].filter((t) => info.traits.has(t))
        rejected.push([info.id, rootRejection(present.length > 0 ? `root provider has forbidden trait ${present.join(', ')}` : `root provider lacks required trait ${missing.join(', ')}`)])
      }
    }
    got = {roots, rejected}
    this.anchorCache.set(key, got)
    return got
  }
}

export interface ResourceColumn {
  rcId: number
  infos: ProviderInfo[]
  invs: ProviderInventory[]
  /** int((total - reserved) x text(ratio)), per provider */
  summaryCap: Float64Array
  /** the snapshot's usage of the class, per provider */
  base: Float64Array
}

interface AnchorRoots {
  roots: Set<number>
  rejected: Array<[number, RootRejection]>
}

const indexCache = new WeakMap<CloudModel, ProviderIndex>()

export function providerIndex(model: CloudModel): ProviderIndex {
  let idx = indexCache.get(model)
  if (!idx) indexCache.set(model, (idx = new ProviderIndex(model)))
  return idx
}

/** Usage seen by the engine: the snapshot's allocations plus what this simulation has claimed. */
export interface UsageView {
  used(rpId: number, rcId: number): number
  /**
   * Optional fast path: when `base` is the index's own baseUsage, used = base + delta (rp -> rc ->
   * amount), and the candidate search reads the base from its per-class columns.
   */
  base?: Map<number, Map<number, number>>
  delta?: Map<number, Map<number, number>>
}

// ---------------------------------------------------------------- results

export interface AllocationPart {
  rpId: number
  rc: string
  rcId: number
  amount: number
}

export interface AllocationRequest {
  anchorRootId: number
  parts: AllocationPart[]
  /** group suffix -> provider ids */
  mappings: Map<string, Set<number>>
}

/**
 * A request served by one provider. A boot on a big cloud makes one per candidate host, so the
 * suffix -> providers mapping (needed only to combine groups) is built on first use.
 */
class OneProviderRequest implements AllocationRequest {
  private builtMappings: Map<string, Set<number>> | null = null
  private builtParts: AllocationPart[] | null = null
  constructor(
    readonly anchorRootId: number,
    /** shared by every request of the group */
    readonly resources: ReadonlyArray<{rc: string; rcId: number; amount: number}>,
    readonly suffix: string,
    readonly rpId: number,
    /** Every class also fits the provider-summary bound (see GroupCtx.summaryHits). */
    readonly fitsSummary: boolean,
  ) {}

  get parts(): AllocationPart[] {
    return (this.builtParts ??= this.resources.map((r) => ({rpId: this.rpId, rc: r.rc, rcId: r.rcId, amount: r.amount})))
  }

  get mappings(): Map<string, Set<number>> {
    return (this.builtMappings ??= new Map([[this.suffix, new Set([this.rpId])]]))
  }
}

export interface RootRejection {
  label: string
  message: string
  need?: number
  have?: number
}

function labelOf(message: string): string {
  if (message.includes('COMPUTE_STATUS_DISABLED')) return 'disabled (COMPUTE_STATUS_DISABLED)'
  if (/not in aggregate/.test(message)) return 'not in requested aggregate'
  if (/forbidden \(isolated\) aggregate/.test(message)) return 'in an isolated aggregate'
  const t = /(lacks required trait|has forbidden trait|carries required trait) (\S+)/.exec(message)
  if (t) return `${t[1] === 'has forbidden trait' ? 'has forbidden trait' : 'lacks trait'} ${t[2]}`
  if (/group_policy=isolate/.test(message)) return 'group_policy=isolate not satisfiable'
  return message.replace(/:.*$/, '')
}

function rootRejection(message: string, need?: number, have?: number): RootRejection {
  return {label: labelOf(message), message, need, have}
}

export interface CandidateDiagnostics {
  /** Why the search stopped early, e.g. "no providers with 4 PCPU". */
  stoppedAt: string | null
  /** Per root provider id, the first reason it produced no candidate (for --why and the summary). */
  rejectedRoots: Map<number, RootRejection>
  /** Counters for the "0/N" summary: reason label -> number of roots. */
  notes: string[]
}

export interface CandidateResult {
  /** All allocation requests, before the limit, in the engine's order (anchor root id). */
  all: AllocationRequest[]
  /** After `limit`. */
  kept: AllocationRequest[]
  /** Providers of the provider summaries after the limit (whole trees of kept requests). */
  summaryProviderIds: Set<number>
  diagnostics: CandidateDiagnostics
  combinationsTruncated: boolean
}

const MAX_COMBINATIONS_PER_TREE = 10000

interface GroupCtx {
  group: PlacementGroup
  useSameProvider: boolean
  resources: Array<{rc: string; rcId: number; amount: number}>
  rpsInAggs: Set<number> | null
  badAggRps: Set<number> | null
  /**
   * Per provider (by ord), how many of the group's classes also pass the provider-summary bound
   * (used + amount <= int capacity): a one-provider request needs no re-check when all do.
   */
  summaryHits: Uint8Array
}

/**
 * Allocation candidates for a request. Placement iterates Python sets, so its own order (and thus
 * which candidates survive `limit`) depends on per-process hash seeds; the engine orders by anchor
 * root provider id, then provider id, which is the InnoDB primary-key order the SQL returns.
 */
/**
 * placement 13's [placement] options (2025.1); placement 8 (Zed) has neither, which is the default
 * here: no cap.
 */
export interface CandidateGeneration {
  /** max_allocation_candidates: -1 is no cap. */
  maxCandidates: number
  strategy: 'depth-first' | 'breadth-first'
}

/**
 * Placement 13 stops generating once max_allocation_candidates distinct candidates passed every
 * check, before exclude_nested_providers and `limit`. depth-first takes all of one anchor root's
 * candidates before the next root's; breadth-first takes one from each viable root in turn. The
 * survivors keep the engine's order (anchor root, then provider).
 */
export function capCandidates<T extends {anchorRootId: number}>(all: T[], gen: CandidateGeneration): T[] {
  const max = gen.maxCandidates
  if (max < 0 || all.length <= max) return all
  if (gen.strategy === 'depth-first') return all.slice(0, max)
  const byAnchor = new Map<number, number[]>()
  all.forEach((a, i) => {
    const l = byAnchor.get(a.anchorRootId)
    if (l) l.push(i)
    else byAnchor.set(a.anchorRootId, [i])
  })
  const queues = [...byAnchor.values()]
  const picked: number[] = []
  for (let round = 0; picked.length < max; round++) {
    let any = false
    for (const q of queues) {
      if (round >= q.length) continue
      any = true
      picked.push(q[round] as number)
      if (picked.length === max) break
    }
    if (!any) break
  }
  return picked.sort((a, b) => a - b).map((i) => all[i] as T)
}

const NO_CAP: CandidateGeneration = {maxCandidates: -1, strategy: 'depth-first'}

export function allocationCandidates(idx: ProviderIndex, req: PlacementRequest, usage: UsageView, gen: CandidateGeneration = NO_CAP): CandidateResult {
  const diag: CandidateDiagnostics = {stoppedAt: null, rejectedRoots: new Map(), notes: []}
  const empty = (why: string): CandidateResult => {
    diag.stoppedAt = why
    return {all: [], kept: [], summaryProviderIds: new Set(), diagnostics: diag, combinationsTruncated: false}
  }
  const rcReg = idx.model.rc
  const delta = usage.delta ?? new Map<number, Map<number, number>>()
  const fastUsage = usage.base === idx.baseUsage && usage.delta !== undefined
  const bad = placementBadRequest(idx, req)
  if (bad !== null) return empty(`placement answers 400 "${bad}" (nova: NoValidHost)`)

  // Request-wide: root_required / root_forbidden select the anchor roots.
  let anchorRoots: Set<number> | null = null
  if (req.rootRequired.size > 0 || req.rootForbidden.size > 0) {
    const cached = idx.anchorRoots(req.rootRequired, req.rootForbidden)
    anchorRoots = cached.roots
    for (const [id, why] of cached.rejected) diag.rejectedRoots.set(id, why)
    if (anchorRoots.size === 0) return empty(`no root provider matches root_required=${rootRequiredText(req)}`)
  }

  let truncated = false
  const perGroup = new Map<string, AllocationRequest[]>()
  const multiGroupRcs = new Set<string>()
  const seenRcs = new Set<string>()
  for (const group of req.groups) {
    const ctx: GroupCtx = {group, useSameProvider: group.suffix !== '', resources: [], rpsInAggs: null, badAggRps: null, summaryHits: new Uint8Array(idx.providers.size)}
    for (const [rc, amount] of group.resources) {
      const rcId = rcReg.id(rc) as number
      ctx.resources.push({rc, rcId, amount})
      if (seenRcs.has(rc)) multiGroupRcs.add(rc)
      seenRcs.add(rc)
    }
    if (group.memberOf.length > 0) {
      ctx.rpsInAggs = providersInAllAggregates(idx, group.memberOf)
      if (ctx.rpsInAggs.size === 0) return empty(`no providers in aggregate(s) ${memberOfText(group.memberOf)}${suffixText(group)}`)
    }
    if (group.forbiddenAggregates.size > 0) ctx.badAggRps = providersInAllAggregates(idx, [[...group.forbiddenAggregates]])
    let treeRoot: number | null = null
    if (group.inTree) {
      const p = idx.byUuid.get(group.inTree)
      if (!p) return empty(`in_tree provider ${group.inTree} does not exist`)
      treeRoot = p.rootId
    }
    // Providers with capacity for each requested class (SQL capacity clause).
    const withResource = new Map<number, ProviderInfo[]>()
    for (const r of ctx.resources) {
      const list: ProviderInfo[] = []
      let best: {free: number; rp: ProviderInfo} | null = null
      // The hot loop of a boot on a big cloud: typed columns, no allocation unless a provider fails.
      const col = idx.column(r.rcId)
      const {infos, invs, summaryCap} = col
      const amount = r.amount
      const summaryHits = ctx.summaryHits
      for (let i = 0; i < infos.length; i++) {
        const info = infos[i] as ProviderInfo
        if (treeRoot !== null && info.rootId !== treeRoot) continue
        let used: number
        if (fastUsage) {
          used = col.base[i] as number
          if (delta.size > 0) used += delta.get(info.id)?.get(r.rcId) ?? 0
        } else used = usage.used(info.id, r.rcId)
        const inv = invs[i] as ProviderInventory
        if (candidateFits(inv, used, amount)) {
          list.push(info)
          if (used + amount <= (summaryCap[i] as number)) summaryHits[info.ord] = (summaryHits[info.ord] as number) + 1
          continue
        }
        const free = Math.max(0, Math.floor(inv.sqlCapacity - used))
        if (!diag.rejectedRoots.has(info.rootId)) {
          const v = checkCandidateCapacity(inv, used, amount, r.rc) as Extract<CapacityVerdict, {ok: false}>
          diag.rejectedRoots.set(info.rootId, v.why === 'capacity' ? {label: `insufficient ${r.rc}`, message: v.detail + suffixText(group), need: amount, have: free} : rootRejection(v.detail + suffixText(group)))
        }
        if (!best || free > best.free) best = {free, rp: info}
      }
      if (list.length === 0) {
        const bestText = best ? `, best has ${Math.max(0, best.free)} free on ${best.rp.name ?? best.rp.uuid}` : ''
        return empty(`no providers with ${r.amount} ${r.rc}${suffixText(group)}${treeRoot !== null ? ` in tree ${group.inTree}` : ''}${bestText}`)
      }
      withResource.set(r.rcId, list)
    }
    let areqs: AllocationRequest[]
    if (ctx.useSameProvider || (idx.sharing.size === 0 && !idx.hasTrees)) {
      areqs = singleProvider(idx, ctx, withResource, anchorRoots, diag)
    } else {
      const r = multipleProviders(idx, ctx, withResource, anchorRoots, treeRoot, diag)
      areqs = r.areqs
      truncated ||= r.truncated
    }
    if (areqs.length === 0) return empty(diag.stoppedAt ?? `no provider tree satisfies request group${suffixText(group) || ' (unsuffixed)'}`)
    perGroup.set(group.suffix, areqs)
  }

  if (req.groups.length === 1) {
    // One group: nothing to combine. Requests are final once their capacity is re-checked, in
    // anchor order (a stable sort keeps each anchor's requests in the order they were found).
    const areqs = (perGroup.get((req.groups[0] as PlacementGroup).suffix) as AllocationRequest[]).slice()
    areqs.sort((a, b) => a.anchorRootId - b.anchorRootId)
    const all: AllocationRequest[] = []
    let k = 0
    while (k < areqs.length) {
      const anchor = (areqs[k] as AllocationRequest).anchorRootId
      let end = k
      while (end < areqs.length && (areqs[end] as AllocationRequest).anchorRootId === anchor) end++
      keepFitting(idx, usage, areqs.slice(k, end), anchor, all, diag)
      k = end
    }
    return finish(idx, req, capCandidates(all, gen), diag, truncated, multiGroupRcs)
  }

  // Merge groups per anchor, apply group_policy, consolidate, re-check capacity.
  const suffixes = req.groups.map((g) => g.suffix)
  const sameSubtree = req.sameSubtree && req.sameSubtree.length > 0 ? req.sameSubtree : null
  const numGranular = suffixes.filter((s) => s !== '').length
  const byAnchor = new Map<number, Map<string, AllocationRequest[]>>()
  for (const [suffix, areqs] of perGroup) {
    for (const a of areqs) {
      let m = byAnchor.get(a.anchorRootId)
      if (!m) byAnchor.set(a.anchorRootId, (m = new Map()))
      const l = m.get(suffix)
      if (l) l.push(a)
      else m.set(suffix, [a])
    }
  }
  const anchors = [...byAnchor.keys()].sort((a, b) => a - b)
  const all: AllocationRequest[] = []
  for (const anchor of anchors) {
    const m = byAnchor.get(anchor) as Map<string, AllocationRequest[]>
    if (m.size !== suffixes.length) {
      if (!diag.rejectedRoots.has(anchor)) diag.rejectedRoots.set(anchor, rootRejection(`tree cannot satisfy request group(s) ${suffixes.filter((s) => !m.has(s)).map((s) => s || '(unsuffixed)').join(', ')}`))
      continue
    }
    if (suffixes.length === 1) {
      // One group: nothing to combine; each request is final once its capacity is re-checked.
      keepFitting(idx, usage, m.get(suffixes[0] as string) as AllocationRequest[], anchor, all, diag)
      continue
    }
    const lists = suffixes.map((s) => m.get(s) as AllocationRequest[])
    const seen = new Set<string>()
    let rejectedWhy: string | null = null
    let count = 0
    for (const combo of product(lists)) {
      if (++count > MAX_COMBINATIONS_PER_TREE) {
        truncated = true
        break
      }
      if (req.groupPolicy === 'isolate' && numGranular > 0) {
        const provs = new Set<number>()
        combo.forEach((a, i) => {
          if (suffixes[i] !== '') for (const p of a.mappings.values()) for (const id of p) provs.add(id)
        })
        if (provs.size !== numGranular) {
          rejectedWhy ??= 'group_policy=isolate: granular groups would share a provider'
          continue
        }
      }
      if (sameSubtree && !satisfiesSameSubtree(idx, combo, sameSubtree)) {
        rejectedWhy ??= `same_subtree: the providers of ${sameSubtree.map((l) => l.join(',')).join(' / ')} are not all under one of them`
        continue
      }
      const merged = consolidate(combo)
      const over = exceedsCapacity(idx, merged, usage)
      if (over) {
        rejectedWhy ??= over
        continue
      }
      const key = areqKey(merged)
      if (seen.has(key)) continue
      seen.add(key)
      all.push(merged)
    }
    if (seen.size === 0 && rejectedWhy && !diag.rejectedRoots.has(anchor)) diag.rejectedRoots.set(anchor, rootRejection(rejectedWhy))
  }
  return finish(idx, req, capCandidates(all, gen), diag, truncated, multiGroupRcs)
}

/**
 * same_subtree: for each listed set of groups, the providers the combination maps them to (a
 * resourceless group's too) must include one that is an ancestor-or-self of all the others.
 */
function satisfiesSameSubtree(idx: ProviderIndex, combo: AllocationRequest[], sameSubtree: string[][]): boolean {
  for (const suffixes of sameSubtree) {
    const rps = new Set<number>()
    for (const a of combo) for (const s of suffixes) for (const id of a.mappings.get(s) ?? []) rps.add(id)
    if (rps.size <= 1) continue
    let rooted = false
    for (const top of rps) {
      if ([...rps].every((id) => isAncestorOrSelf(idx, top, id))) {
        rooted = true
        break
      }
    }
    if (!rooted) return false
  }
  return true
}

function isAncestorOrSelf(idx: ProviderIndex, ancestor: number, id: number): boolean {
  // A parent_provider_id loop (rows placement never writes) must not spin: no chain is longer than the providers.
  let steps = idx.providers.size
  for (let cur: number | null = id; cur !== null && steps-- >= 0; cur = idx.providers.get(cur)?.parentId ?? null) if (cur === ancestor) return true
  return false
}

/**
 * Re-checks capacity of one anchor's requests, keeping those that fit; when none does, the anchor
 * is rejected with the first reason found.
 */
function keepFitting(idx: ProviderIndex, usage: UsageView, areqs: AllocationRequest[], anchor: number, into: AllocationRequest[], diag: CandidateDiagnostics): void {
  let any = false
  let why: string | null = null
  for (const a of areqs) {
    const over = exceedsCapacity(idx, a, usage)
    if (over) {
      why ??= over
      continue
    }
    any = true
    into.push(a)
  }
  if (!any && why && !diag.rejectedRoots.has(anchor)) diag.rejectedRoots.set(anchor, rootRejection(why))
}

/** Apply the limit (after ordering, as placement does) and collect the provider summaries. */
function finish(idx: ProviderIndex, req: PlacementRequest, all: AllocationRequest[], diag: CandidateDiagnostics, truncated: boolean, multiGroupRcs: Set<string>): CandidateResult {
  if (multiGroupRcs.size > 0) diag.notes.push(`resource class(es) ${[...multiGroupRcs].join(', ')} requested by several groups: amounts are summed per provider`)
  all = dedupeSharingOnly(idx, all)
  const kept = req.limit !== null && req.limit < all.length ? all.slice(0, req.limit) : all
  const keptRoots = new Set<number>()
  for (const a of kept) for (const p of a.parts) keptRoots.add((idx.providers.get(p.rpId) as ProviderInfo).rootId)
  const summaryProviderIds = new Set<number>()
  for (const root of keptRoots) for (const p of idx.treeMembers.get(root) ?? []) summaryProviderIds.add(p.id)
  if (all.length === 0 && !diag.stoppedAt) diag.stoppedAt = 'no provider tree satisfies all request groups together'
  return {all, kept, summaryProviderIds, diagnostics: diag, combinationsTruncated: truncated}
}

function singleProvider(idx: ProviderIndex, ctx: GroupCtx, withResource: Map<number, ProviderInfo[]>, anchorRoots: Set<number> | null, diag: CandidateDiagnostics): AllocationRequest[] {
  const g = ctx.group
  // Providers that have capacity for every class (lists are in provider id order).
  let pool: ProviderInfo[]
  if (ctx.resources.length === 0) pool = [...idx.providers.values()]
  else {
    const lists = ctx.resources.map((r) => withResource.get(r.rcId) ?? [])
    // Count per provider how many classes it can serve; lists are in id order, so is the pool.
    const hits = new Uint8Array(idx.providers.size)
    for (const l of lists) for (const p of l) hits[p.ord] = (hits[p.ord] as number) + 1
    const n = lists.length
    pool = (lists[0] as ProviderInfo[]).filter((p) => hits[p.ord] === n)
  }
  const out: AllocationRequest[] = []
  const constrained = g.required.size > 0 || (g.requiredAnyOf ?? []).length > 0 || g.forbidden.size > 0 || ctx.rpsInAggs !== null || ctx.badAggRps !== null
  const nRes = ctx.resources.length
  for (const info of pool) {
    const why = constrained ? providerTraitAggReason(info, g, ctx) : null
    if (why) {
      if (!diag.rejectedRoots.has(info.rootId)) diag.rejectedRoots.set(info.rootId, rootRejection(why + suffixText(g)))
      continue
    }
    const fits = ctx.summaryHits[info.ord] === nRes
    if (anchorRoots === null || anchorRoots.has(info.rootId)) out.push(new OneProviderRequest(info.rootId, ctx.resources, g.suffix, info.id, fits))
    if (idx.sharing.has(info.id)) {
      for (const anchor of sharingAnchors(idx, info)) {
        if (anchor === info.rootId) continue
        if (anchorRoots !== null && !anchorRoots.has(anchor)) continue
        out.push(new OneProviderRequest(anchor, ctx.resources, g.suffix, info.id, fits))
      }
    }
  }
  return out
}

function providerTraitAggReason(info: ProviderInfo, g: PlacementGroup, ctx: GroupCtx): string | null {
  for (const t of g.required) if (!info.traits.has(t)) return `provider ${info.name ?? info.uuid} lacks required trait ${t}`
  for (const anyOf of g.requiredAnyOf ?? []) if (!anyOf.some((t) => info.traits.has(t))) return `provider ${info.name ?? info.uuid} lacks required trait in:${anyOf.join(',')}`
  if (ctx.rpsInAggs && !ctx.rpsInAggs.has(info.id)) return `provider ${info.name ?? info.uuid} is not in aggregate(s) ${memberOfText(g.memberOf)}`
  if (ctx.badAggRps && ctx.badAggRps.has(info.id)) return `provider ${info.name ?? info.uuid} is in a forbidden (isolated) aggregate`
  for (const t of g.forbidden) if (info.traits.has(t)) return `provider ${info.name ?? info.uuid} has forbidden trait ${t}`
  return null
}

/** Roots of every tree that shares an aggregate with a sharing provider, its own root included. */
function sharingAnchors(idx: ProviderIndex, sp: ProviderInfo): Set<number> {
  const out = new Set<number>()
  for (const agg of sp.aggregates) for (const member of idx.byAggregate.get(agg) ?? []) out.add(member.rootId)
  return out
}

interface RpCandidate {
  rp: ProviderInfo
  rootId: number
}

function multipleProviders(
  idx: ProviderIndex,
  ctx: GroupCtx,
  withResource: Map<number, ProviderInfo[]>,
  anchorRoots: Set<number> | null,
  treeRoot: number | null,
  diag: CandidateDiagnostics,
): {areqs: AllocationRequest[]; truncated: boolean} {
  const g = ctx.group
  const perRc = new Map<number, RpCandidate[]>()
  let trees: Set<number> | null = null
  for (const r of ctx.resources) {
    let cands: RpCandidate[] = (withResource.get(r.rcId) ?? []).map((rp) => ({rp, rootId: rp.rootId}))
    if (treeRoot === null) {
      for (const rp of withResource.get(r.rcId) ?? []) {
        if (!idx.sharing.has(rp.id)) continue
        if (ctx.rpsInAggs && !ctx.rpsInAggs.has(rp.id)) continue
        for (const anchor of sharingAnchors(idx, rp)) if (anchor !== rp.rootId) cands.push({rp, rootId: anchor})
      }
    }
    if (anchorRoots) cands = cands.filter((c) => (anchorRoots as Set<number>).has(c.rootId))
    if (ctx.rpsInAggs) {
      const s = ctx.rpsInAggs
      cands = cands.filter((c) => s.has(c.rp.id) || s.has(c.rootId))
    }
    if (ctx.badAggRps) {
      const s = ctx.badAggRps
      cands = cands.filter((c) => !(s.has(c.rp.id) || s.has(c.rootId)))
    }
    if (cands.length === 0) {
      diag.stoppedAt = `no providers with ${r.amount} ${r.rc}${suffixText(g)} left after root trait / aggregate filters`
      return {areqs: [], truncated: false}
    }
    const roots = new Set(cands.map((c) => c.rootId))
    trees = trees === null ? roots : new Set([...(trees as Set<number>)].filter((t) => roots.has(t)))
    perRc.set(r.rcId, cands)
  }
  const out: AllocationRequest[] = []
  let truncated = false
  if (ctx.resources.length === 0) {
    // A traits-only unsuffixed group: every root whose tree carries the traits.
    for (const info of idx.providers.values()) {
      if (info.rootId !== info.id) continue
      if (anchorRoots && !anchorRoots.has(info.id)) continue
      const why = providerTraitAggReason(info, g, ctx)
      if (why) continue
      out.push({anchorRootId: info.id, parts: [], mappings: new Map([[g.suffix, new Set([info.id])]])})
    }
    return {areqs: out, truncated}
  }
  const treeList = [...(trees ?? new Set<number>())].sort((a, b) => a - b)
  const rcOrder = [...ctx.resources].sort((a, b) => a.rcId - b.rcId)
  for (const root of treeList) {
    const lists = rcOrder.map((r) => (perRc.get(r.rcId) as RpCandidate[]).filter((c) => c.rootId === root).sort((a, b) => a.rp.id - b.rp.id))
    let count = 0
    let why: string | null = null
    for (const combo of product(lists)) {
      if (++count > MAX_COMBINATIONS_PER_TREE) {
        truncated = true
        break
      }
      const t = traitsReason(combo.map((c) => c.rp), g)
      if (t) {
        why ??= t
        continue
      }
      const parts = combo.map((c, i) => {
        const r = rcOrder[i] as {rc: string; rcId: number; amount: number}
        return {rpId: c.rp.id, rc: r.rc, rcId: r.rcId, amount: r.amount}
      })
      out.push({anchorRootId: root, parts, mappings: new Map([[g.suffix, new Set(combo.map((c) => c.rp.id))]])})
    }
    if (why && !out.some((a) => a.anchorRootId === root) && !diag.rejectedRoots.has(root)) diag.rejectedRoots.set(root, rootRejection(why + suffixText(g)))
  }
  return {areqs: out, truncated}
}

/**
 * The providers of one combination must, together, carry every required trait, one of each any-of
 * list, and none forbidden.
 */
function traitsReason(rps: ProviderInfo[], g: PlacementGroup): string | null {
  const union = new Set<string>()
  for (const rp of rps) {
    for (const t of g.forbidden) if (rp.traits.has(t)) return `provider ${rp.name ?? rp.uuid} has forbidden trait ${t}`
    for (const t of rp.traits) union.add(t)
  }
  const missing = [...g.required].filter((t) => !union.has(t))
  for (const anyOf of g.requiredAnyOf ?? []) if (!anyOf.some((t) => union.has(t))) missing.push(`in:${anyOf.join(',')}`)
  return missing.length > 0 ? `no provider of the allocation carries required trait ${missing.join(', ')}` : null
}

function* product<T>(lists: T[][]): Generator<T[]> {
  if (lists.some((l) => l.length === 0)) return
  const idx = lists.map(() => 0)
  while (true) {
    yield lists.map((l, i) => l[idx[i] as number] as T)
    let k = lists.length - 1
    while (k >= 0) {
      idx[k] = (idx[k] as number) + 1
      if ((idx[k] as number) < (lists[k] as T[]).length) break
      idx[k] = 0
      k--
    }
    if (k < 0) return
  }
}

function consolidate(areqs: AllocationRequest[]): AllocationRequest {
  const byKey = new Map<string, AllocationPart>()
  const mappings = new Map<string, Set<number>>()
  for (const a of areqs) {
    for (const p of a.parts) {
      const key = `${p.rpId}/${p.rcId}`
      const cur = byKey.get(key)
      if (cur) cur.amount += p.amount
      else byKey.set(key, {...p})
    }
    for (const [s, ids] of a.mappings) {
      const m = mappings.get(s) ?? new Set<number>()
      for (const id of ids) m.add(id)
      mappings.set(s, m)
    }
  }
  return {anchorRootId: (areqs[0] as AllocationRequest).anchorRootId, parts: [...byKey.values()], mappings}
}

/** rw_ctx.exceeds_capacity: used + amount > int capacity, or amount > max_unit. */
function exceedsCapacity(idx: ProviderIndex, a: AllocationRequest, usage: UsageView): string | null {
  // Known from the candidate scan (the SQL bound already checked max_unit): no need to look again.
  if (a instanceof OneProviderRequest && a.fitsSummary) return null
  for (const p of a.parts) {
    const inv = idx.providers.get(p.rpId)?.inventories.get(p.rcId)
    if (!inv) return `no ${p.rc} inventory`
    const used = usage.used(p.rpId, p.rcId)
    if (used + p.amount > inv.summaryCapacity) return `insufficient ${p.rc} once groups are combined: need ${p.amount}, used ${used} of ${inv.summaryCapacity}`
    if (p.amount > inv.maxUnit) return `${p.rc} ${p.amount} (groups combined) exceeds max_unit ${inv.maxUnit}`
  }
  return null
}

/**
 * Placement collects allocation requests in a set whose equality ignores the anchor: a request
 * served only by sharing providers is found once per tree sharing their aggregate, and returned
 * once. Only such requests can repeat (any other part pins the request to its own tree), so the
 * rest is passed through without building keys.
 */
function dedupeSharingOnly(idx: ProviderIndex, all: AllocationRequest[]): AllocationRequest[] {
  if (idx.sharing.size === 0) return all
  const seen = new Set<string>()
  const out: AllocationRequest[] = []
  for (const a of all) {
    // a one-provider request keeps its parts unbuilt unless it is a sharing provider's
    const sharingOnly = a instanceof OneProviderRequest ? idx.sharing.has(a.rpId) : a.parts.length > 0 && a.parts.every((p) => idx.sharing.has(p.rpId))
    if (sharingOnly) {
      const key = areqKey(a, false)
      if (seen.has(key)) continue
      seen.add(key)
    }
    out.push(a)
  }
  return out
}

function areqKey(a: AllocationRequest, withAnchor = true): string {
  const parts = a.parts.map((p) => `${p.rpId}:${p.rcId}:${p.amount}`).sort().join(',')
  const maps = [...a.mappings].map(([s, ids]) => `${s}=${[...ids].sort((x, y) => x - y).join('+')}`).sort().join(';')
  return `${withAnchor ? a.anchorRootId : ''}|${parts}|${maps}`
}

function providersInAllAggregates(idx: ProviderIndex, memberOf: string[][]): Set<number> {
  let result: Set<number> | null = null
  for (const anyOf of memberOf) {
    const s = new Set<number>()
    for (const agg of anyOf) for (const p of idx.byAggregate.get(agg) ?? []) s.add(p.id)
    result = result === null ? s : new Set([...(result as Set<number>)].filter((x) => s.has(x)))
  }
  return result ?? new Set()
}

function suffixText(g: PlacementGroup): string {
  return g.suffix === '' ? '' : ` (group ${g.suffix})`
}

function memberOfText(m: string[][]): string {
  return m.map((l) => `in:${l.join(',')}`).join(' and ')
}

export {placementBadRequest, queryParams, toQueryString} from './placement-query.js'
