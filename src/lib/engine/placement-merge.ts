/**
 * The merge stage of the candidate search (placement.ts): per anchor root, one request of every
 * group combined (group_policy, same_subtree), consolidated, and its capacity checked again as
 * placement does once the groups are summed.
 */
import type {PlacementRequest} from './placement-request.js'
import {
  type AllocationPart,
  type AllocationRequest,
  areqKey,
  type CandidateDiagnostics,
  MAX_COMBINATIONS_PER_TREE,
  OneProviderRequest,
  product,
  rootRejection,
} from './placement-result.js'
import type {ProviderIndex, UsageView} from './provider-index.js'

/**
 * One group: nothing to combine. Requests are final once their capacity is re-checked, in anchor
 * order (a stable sort keeps each anchor's requests in the order they were found).
 */
export function oneGroupCandidates(idx: ProviderIndex, found: AllocationRequest[], usage: UsageView, diag: CandidateDiagnostics): AllocationRequest[] {
  const areqs = found.slice()
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
  return all
}

/** Merge groups per anchor, apply group_policy, consolidate, re-check capacity. */
export function mergeGroups(
  idx: ProviderIndex,
  req: PlacementRequest,
  perGroup: Map<string, AllocationRequest[]>,
  usage: UsageView,
  diag: CandidateDiagnostics,
): {all: AllocationRequest[]; truncated: boolean} {
  const suffixes = req.groups.map((g) => g.suffix)
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
  let truncated = false
  for (const anchor of anchors) {
    const m = byAnchor.get(anchor) as Map<string, AllocationRequest[]>
    if (m.size !== suffixes.length) {
      if (!diag.rejectedRoots.has(anchor))
        diag.rejectedRoots.set(
          anchor,
          rootRejection(
            `tree cannot satisfy request group(s) ${suffixes
              .filter((s) => !m.has(s))
              .map((s) => s || '(unsuffixed)')
              .join(', ')}`,
          ),
        )
      continue
    }
    if (suffixes.length === 1) {
      // One group: nothing to combine; each request is final once its capacity is re-checked.
      keepFitting(idx, usage, m.get(suffixes[0] as string) as AllocationRequest[], anchor, all, diag)
      continue
    }
    const r = combineAnchor(
      idx,
      req,
      suffixes.map((s) => m.get(s) as AllocationRequest[]),
      usage,
      all,
    )
    truncated ||= r.truncated
    if (r.found === 0 && r.rejectedWhy && !diag.rejectedRoots.has(anchor)) diag.rejectedRoots.set(anchor, rootRejection(r.rejectedWhy))
  }
  return {all, truncated}
}

/** One anchor's combinations of a request per group (lists in req.groups order), the distinct fitting ones pushed to `into`. */
function combineAnchor(
  idx: ProviderIndex,
  req: PlacementRequest,
  lists: AllocationRequest[][],
  usage: UsageView,
  into: AllocationRequest[],
): {found: number; rejectedWhy: string | null; truncated: boolean} {
  const suffixes = req.groups.map((g) => g.suffix)
  const sameSubtree = req.sameSubtree && req.sameSubtree.length > 0 ? req.sameSubtree : null
  const numGranular = suffixes.filter((s) => s !== '').length
  const seen = new Set<string>()
  let rejectedWhy: string | null = null
  let count = 0
  for (const combo of product(lists)) {
    if (++count > MAX_COMBINATIONS_PER_TREE) return {found: seen.size, rejectedWhy, truncated: true}
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
    into.push(merged)
  }
  return {found: seen.size, rejectedWhy, truncated: false}
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
function keepFitting(
  idx: ProviderIndex,
  usage: UsageView,
  areqs: AllocationRequest[],
  anchor: number,
  into: AllocationRequest[],
  diag: CandidateDiagnostics,
): void {
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
