/**
 * The placement half of capacity's per-host fast path (fast.ts) on a flat cloud: what
 * allocation_candidates asks of one root provider, checked once per host for what never changes
 * (traits, aggregates, units) and counted by binary search for what does (capacity, as the claim
 * checks it).
 */
import {checkClaimCapacity, type ProviderInventory} from '../engine/placement-capacity-check.js'
import {placementBadRequest} from '../engine/placement-query.js'
import {type ProviderIndex, type ProviderInfo} from '../engine/provider-index.js'
import {type PlacementRequest} from '../engine/placement-request.js'

interface Part {
  rc: string
  rcId: number
  /** Amount of each request group on this class (flat cloud: every group lands on the root). */
  groupAmounts: number[]
  /** Consolidated amount. */
  total: number
}

interface GroupShape {
  required: string[]
  /** `in:` lists (1.39): one trait of each. same_subtree needs nothing here: on a flat cloud every group of a candidate is the host itself. */
  anyOf: string[][]
  forbidden: string[]
  memberOf: Array<Set<string>>
  forbiddenAggregates: Set<string>
}

/** The placement request as a flat-cloud check: what allocation_candidates asks of one root provider. */
export interface FlatPlacement {
  parts: Part[]
  groups: GroupShape[]
  rootRequired: string[]
  rootForbidden: string[]
  /** The whole request fails (unknown trait or class, group_policy=isolate on a flat cloud). */
  fatal: string | null
}

export function flatPlacement(idx: ProviderIndex, req: PlacementRequest): FlatPlacement {
  const byRc = new Map<string, Part>()
  // placement's 400s (unknown traits incl. forbidden ones, T and !T, ...), as the engine's search has them
  let fatal: string | null = placementBadRequest(idx, req)
  for (const t of req.rootRequired) if (!idx.knownTraits.has(t)) fatal ??= `trait ${t} does not exist in placement`
  for (const g of req.groups) {
    for (const [rc, amount] of g.resources) {
      const rcId = idx.model.rc.id(rc)
      if (rcId === undefined) {
        fatal ??= `resource class ${rc} does not exist in placement`
        continue
      }
      const p = byRc.get(rc) ?? {rc, rcId, groupAmounts: [], total: 0}
      p.groupAmounts.push(amount)
      p.total += amount
      byRc.set(rc, p)
    }
    for (const t of g.required) if (!idx.knownTraits.has(t)) fatal ??= `trait ${t} does not exist in placement`
  }
  const granular = req.groups.filter((g) => g.suffix !== '').length
  if (req.groupPolicy === 'isolate' && granular > 1) fatal ??= 'group_policy=isolate not satisfiable'
  return {
    parts: [...byRc.values()],
    groups: req.groups.map((g) => ({
      required: [...g.required],
      anyOf: g.requiredAnyOf ?? [],
      forbidden: [...g.forbidden],
      memberOf: g.memberOf.map((l) => new Set(l)),
      forbiddenAggregates: g.forbiddenAggregates,
    })),
    rootRequired: [...req.rootRequired],
    rootForbidden: [...req.rootForbidden],
    fatal,
  }
}

/**
 * allocation_candidates for one root provider of a flat cloud, in the engine's order of checks
 * (root traits, then capacity per group and class, then the group's traits and aggregates): null
 * when it is a candidate, else the engine's label for the rejection.
 */
export function staticPlacementReason(fp: FlatPlacement, rp: ProviderInfo): string | null {
  for (const t of fp.rootForbidden)
    if (rp.traits.has(t)) return t === 'COMPUTE_STATUS_DISABLED' ? 'disabled (COMPUTE_STATUS_DISABLED)' : `has forbidden trait ${t}`
  for (const t of fp.rootRequired) if (!rp.traits.has(t)) return `lacks trait ${t}`
  for (const p of fp.parts) {
    const inv = rp.inventories.get(p.rcId)
    if (!inv) return `no ${p.rc} inventory`
    for (const a of p.groupAmounts) {
      if (inv.minUnit > a) return `max_unit: ${p.rc} ${a} is below min_unit ${inv.minUnit}`
      if (inv.maxUnit < a) return `max_unit: ${p.rc} ${a} exceeds max_unit ${inv.maxUnit}`
      if (inv.stepSize <= 0 || a % inv.stepSize !== 0) return `max_unit: ${p.rc} ${a} is not a multiple of step_size ${inv.stepSize}`
    }
  }
  for (const g of fp.groups) {
    for (const t of g.required) if (!rp.traits.has(t)) return `lacks trait ${t}`
    for (const l of g.anyOf) if (!l.some((t) => rp.traits.has(t))) return `lacks trait in:${l.join(',')}`
    for (const any of g.memberOf) {
      let hit = false
      for (const a of rp.aggregates) if (any.has(a)) hit = true
      if (!hit) return 'not in requested aggregate'
    }
    for (const a of rp.aggregates) if (g.forbiddenAggregates.has(a)) return 'in an isolated aggregate'
    for (const t of g.forbidden) if (rp.traits.has(t)) return `has forbidden trait ${t}`
  }
  // Groups combined (provider summaries): the consolidated amount against max_unit; the claim's unit checks.
  for (const p of fp.parts) {
    const inv = rp.inventories.get(p.rcId) as ProviderInventory
    if (p.total > inv.maxUnit || p.total < inv.minUnit || p.total % inv.stepSize !== 0)
      return `max_unit: ${p.rc} ${p.total} (groups combined) outside min_unit ${inv.minUnit} / max_unit ${inv.maxUnit} / step_size ${inv.stepSize}`
  }
  return null
}

/**
 * After j more instances (used = used0 + j x total): every group's candidate check (SQL bound,
 * `used + amount <= (total - reserved) x float32(ratio)`, placement.ts checkCandidateCapacity), the
 * provider summary's int bound, and the claim (checkClaimCapacity). Units were checked statically.
 */
function placementFitsAt(inv: ProviderInventory, p: Part, used0: number, j: number): boolean {
  const used = used0 + j * p.total
  for (let g = 0; g < p.groupAmounts.length; g++) if (!(used + (p.groupAmounts[g] as number) <= inv.sqlCapacity)) return false
  if (used + p.total > inv.summaryCapacity) return false
  return checkClaimCapacity(inv, used, p.total)
}

export function placementCount(inv: ProviderInventory, p: Part, used0: number): number {
  let lo = 0
  let hi = Math.max(0, Math.floor((inv.pyCapacity - used0) / p.total) + 2)
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1)
    if (placementFitsAt(inv, p, used0, mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}
