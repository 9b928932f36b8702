/**
 * The scan stage of the candidate search (placement.ts), per request group: the providers with
 * capacity for each class (placement's SQL capacity clause), then the requests of one provider or
 * spread over a tree and its sharing providers.
 */
import type {PlacementGroup} from './placement-request.js'
import {candidateFits, checkCandidateCapacity, type CapacityVerdict, type ProviderInventory} from './placement-capacity-check.js'
import {
  type AllocationRequest,
  type CandidateDiagnostics,
  type GroupCtx,
  MAX_COMBINATIONS_PER_TREE,
  memberOfText,
  OneProviderRequest,
  product,
  rootRejection,
  suffixText,
} from './placement-result.js'
import type {ProviderIndex, ProviderInfo, UsageView} from './provider-index.js'

/** A group's requests, or why the whole search stops at it (nova: NoValidHost). */
export type GroupScan = {areqs: AllocationRequest[]; truncated: boolean} | {stop: string}

const NO_DELTA = new Map<number, Map<number, number>>()

export function scanGroup(idx: ProviderIndex, group: PlacementGroup, usage: UsageView, anchorRoots: Set<number> | null, diag: CandidateDiagnostics): GroupScan {
  const rcReg = idx.model.rc
  const ctx: GroupCtx = {
    group,
    useSameProvider: group.suffix !== '',
    resources: [],
    rpsInAggs: null,
    badAggRps: null,
    summaryHits: new Uint8Array(idx.providers.size),
  }
  for (const [rc, amount] of group.resources) ctx.resources.push({rc, rcId: rcReg.id(rc) as number, amount})
  if (group.memberOf.length > 0) {
    ctx.rpsInAggs = providersInAllAggregates(idx, group.memberOf)
    if (ctx.rpsInAggs.size === 0) return {stop: `no providers in aggregate(s) ${memberOfText(group.memberOf)}${suffixText(group)}`}
  }
  if (group.forbiddenAggregates.size > 0) ctx.badAggRps = providersInAllAggregates(idx, [[...group.forbiddenAggregates]])
  let treeRoot: number | null = null
  if (group.inTree) {
    const p = idx.byUuid.get(group.inTree)
    if (!p) return {stop: `in_tree provider ${group.inTree} does not exist`}
    treeRoot = p.rootId
  }
  // Providers with capacity for each requested class (SQL capacity clause).
  const withResource = new Map<number, ProviderInfo[]>()
  for (const r of ctx.resources) {
    const list = providersWithCapacity(idx, ctx, r, treeRoot, usage, diag)
    if (typeof list === 'string') return {stop: list}
    withResource.set(r.rcId, list)
  }
  let areqs: AllocationRequest[]
  let truncated = false
  if (ctx.useSameProvider || (idx.sharing.size === 0 && !idx.hasTrees)) {
    areqs = singleProvider(idx, ctx, withResource, anchorRoots, diag)
  } else {
    const r = multipleProviders(idx, ctx, withResource, anchorRoots, treeRoot, diag)
    areqs = r.areqs
    truncated = r.truncated
  }
  if (areqs.length === 0) return {stop: diag.stoppedAt ?? `no provider tree satisfies request group${suffixText(group) || ' (unsuffixed)'}`}
  return {areqs, truncated}
}

/** The providers (in id order) that can give one class's amount, or why none can. */
function providersWithCapacity(
  idx: ProviderIndex,
  ctx: GroupCtx,
  r: {rc: string; rcId: number; amount: number},
  treeRoot: number | null,
  usage: UsageView,
  diag: CandidateDiagnostics,
): ProviderInfo[] | string {
  const group = ctx.group
  const delta = usage.delta ?? NO_DELTA
  const fastUsage = usage.base === idx.baseUsage && usage.delta !== undefined
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
      diag.rejectedRoots.set(
        info.rootId,
        v.why === 'capacity'
          ? {label: `insufficient ${r.rc}`, message: v.detail + suffixText(group), need: amount, have: free}
          : rootRejection(v.detail + suffixText(group)),
      )
    }
    if (!best || free > best.free) best = {free, rp: info}
  }
  if (list.length === 0) {
    const bestText = best ? `, best has ${Math.max(0, best.free)} free on ${best.rp.name ?? best.rp.uuid}` : ''
    return `no providers with ${r.amount} ${r.rc}${suffixText(group)}${treeRoot !== null ? ` in tree ${group.inTree}` : ''}${bestText}`
  }
  return list
}

function singleProvider(
  idx: ProviderIndex,
  ctx: GroupCtx,
  withResource: Map<number, ProviderInfo[]>,
  anchorRoots: Set<number> | null,
  diag: CandidateDiagnostics,
): AllocationRequest[] {
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
  for (const anyOf of g.requiredAnyOf ?? [])
    if (!anyOf.some((t) => info.traits.has(t))) return `provider ${info.name ?? info.uuid} lacks required trait in:${anyOf.join(',')}`
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
      const t = traitsReason(
        combo.map((c) => c.rp),
        g,
      )
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

function providersInAllAggregates(idx: ProviderIndex, memberOf: string[][]): Set<number> {
  let result: Set<number> | null = null
  for (const anyOf of memberOf) {
    const s = new Set<number>()
    for (const agg of anyOf) for (const p of idx.byAggregate.get(agg) ?? []) s.add(p.id)
    result = result === null ? s : new Set([...(result as Set<number>)].filter((x) => s.has(x)))
  }
  return result ?? new Set()
}
