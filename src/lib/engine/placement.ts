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
 * AllocationCandidates.get_by_requests, in stages that each have their module:
 * - provider-index.ts: the providers, their inventories, traits and aggregates, once per model;
 * - placement-capacity-check.ts: the capacity rules on one inventory;
 * - placement-scan.ts: per group, the capacity scan then a one-provider or tree-spreading search;
 * - placement-merge.ts: per anchor, the groups combined (group_policy, same_subtree) and re-checked;
 * - placement-choose.ts: the generation cap, the sharing-only duplicates, `limit`, the summaries.
 * They pass each other the types of placement-result.ts. The query string and placement's 400s for
 * it are placement-query.ts.
 */
import {placementBadRequest, rootRequiredText} from './placement-query.js'
import type {PlacementGroup, PlacementRequest} from './placement-request.js'
import {type CandidateGeneration, capCandidates, classesOfSeveralGroups, finish, NO_CAP} from './placement-choose.js'
import {mergeGroups, oneGroupCandidates} from './placement-merge.js'
import type {AllocationRequest, CandidateDiagnostics, CandidateResult} from './placement-result.js'
import {scanGroup} from './placement-scan.js'
import type {ProviderIndex, UsageView} from './provider-index.js'

/**
 * Allocation candidates for a request. Placement iterates Python sets, so its own order (and thus
 * which candidates survive `limit`) depends on per-process hash seeds; the engine orders by anchor
 * root provider id, then provider id, which is the InnoDB primary-key order the SQL returns.
 */
export function allocationCandidates(idx: ProviderIndex, req: PlacementRequest, usage: UsageView, gen: CandidateGeneration = NO_CAP): CandidateResult {
  const diag: CandidateDiagnostics = {stoppedAt: null, rejectedRoots: new Map(), notes: []}
  const empty = (why: string): CandidateResult => {
    diag.stoppedAt = why
    return {all: [], kept: [], summaryProviderIds: new Set(), diagnostics: diag, combinationsTruncated: false}
  }
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
  for (const group of req.groups) {
    const scan = scanGroup(idx, group, usage, anchorRoots, diag)
    if ('stop' in scan) return empty(scan.stop)
    truncated ||= scan.truncated
    perGroup.set(group.suffix, scan.areqs)
  }
  const multiGroupRcs = classesOfSeveralGroups(req)
  if (req.groups.length === 1) {
    const all = oneGroupCandidates(idx, perGroup.get((req.groups[0] as PlacementGroup).suffix) as AllocationRequest[], usage, diag)
    return finish(idx, req, capCandidates(all, gen), diag, truncated, multiGroupRcs)
  }
  const merged = mergeGroups(idx, req, perGroup, usage, diag)
  return finish(idx, req, capCandidates(merged.all, gen), diag, truncated || merged.truncated, multiGroupRcs)
}
