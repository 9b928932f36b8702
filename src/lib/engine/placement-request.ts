/**
 * The shape of a GET /allocation_candidates request: its request groups and request-wide
 * parameters. Types (and the empty group) only: the query renderer and validator
 * (placement-query.ts) and the candidate search (placement.ts) both read it.
 */
export interface PlacementGroup {
  /** '' for the unsuffixed group. */
  suffix: string
  /** resource class name -> amount */
  resources: Map<string, number>
  /** Traits the group's provider(s) must all carry. */
  required: Set<string>
  /**
   * `required$S=in:A,B` (microversion 1.39): each list is any-of, and every list must be matched,
   * as `required` must; on a group spread over a tree, by the providers of an allocation together.
   */
  requiredAnyOf?: string[][]
  forbidden: Set<string>
  /** AND of ORs of aggregate uuids. */
  memberOf: string[][]
  forbiddenAggregates: Set<string>
  inTree: string | null
}

export interface PlacementRequest {
  groups: PlacementGroup[]
  /** 'none' | 'isolate'; anything else is placement's schema 400 */
  groupPolicy: string | null
  limit: number | null
  rootRequired: Set<string>
  rootForbidden: Set<string>
  /**
   * `same_subtree=_A,_B` (1.36), one list per parameter: the providers the listed groups map to
   * must all sit under one of them (see satisfiesSameSubtree).
   */
  sameSubtree?: string[][]
  /** The microversion asked for, '1.36' (nova Zed's) unless given; 1.39 accepts `in:` traits. */
  microversion?: string
  /**
   * The query string as sent, when it is not the one nova renders from these groups (a replayed
   * request): placement validates what was sent, e.g. a resourceless group without `resources$S=`.
   */
  query?: Array<[string, string]>
}

export function emptyGroup(suffix: string): PlacementGroup {
  return {suffix, resources: new Map(), required: new Set(), forbidden: new Set(), memberOf: [], forbiddenAggregates: new Set(), inTree: null}
}
