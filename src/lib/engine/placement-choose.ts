/**
 * The last stage of the candidate search (placement.ts): which of the requests found are returned,
 * in what order (placement 13's generation cap, the sharing-only duplicates, `limit`), and the
 * provider summaries that go with them.
 */
import type {PlacementRequest} from './placement-request.js'
import {type AllocationRequest, areqKey, type CandidateDiagnostics, type CandidateResult, OneProviderRequest} from './placement-result.js'
import type {ProviderIndex, ProviderInfo} from './provider-index.js'

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

export const NO_CAP: CandidateGeneration = {maxCandidates: -1, strategy: 'depth-first'}

/** Resource classes requested by more than one group (their amounts are summed per provider). */
export function classesOfSeveralGroups(req: PlacementRequest): Set<string> {
  const multiGroupRcs = new Set<string>()
  const seenRcs = new Set<string>()
  for (const group of req.groups) {
    for (const rc of group.resources.keys()) {
      if (seenRcs.has(rc)) multiGroupRcs.add(rc)
      seenRcs.add(rc)
    }
  }
  return multiGroupRcs
}

/** Apply the limit (after ordering, as placement does) and collect the provider summaries. */
export function finish(
  idx: ProviderIndex,
  req: PlacementRequest,
  all: AllocationRequest[],
  diag: CandidateDiagnostics,
  truncated: boolean,
  multiGroupRcs: Set<string>,
): CandidateResult {
  if (multiGroupRcs.size > 0)
    diag.notes.push(`resource class(es) ${[...multiGroupRcs].join(', ')} requested by several groups: amounts are summed per provider`)
  all = dedupeSharingOnly(idx, all)
  const kept = req.limit !== null && req.limit < all.length ? all.slice(0, req.limit) : all
  const keptRoots = new Set<number>()
  for (const a of kept) for (const p of a.parts) keptRoots.add((idx.providers.get(p.rpId) as ProviderInfo).rootId)
  const summaryProviderIds = new Set<number>()
  for (const root of keptRoots) for (const p of idx.treeMembers.get(root) ?? []) summaryProviderIds.add(p.id)
  if (all.length === 0 && !diag.stoppedAt) diag.stoppedAt = 'no provider tree satisfies all request groups together'
  return {all, kept, summaryProviderIds, diagnostics: diag, combinationsTruncated: truncated}
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
