/**
 * What the stages of the candidate search (placement.ts) pass each other: allocation requests,
 * the per-group context, the diagnostics of why roots produced nothing.
 */
import type {PlacementGroup} from './placement-request.js'

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
export class OneProviderRequest implements AllocationRequest {
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

export function rootRejection(message: string, need?: number, have?: number): RootRejection {
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

export const MAX_COMBINATIONS_PER_TREE = 10000

export interface GroupCtx {
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

/** Every combination of one element per list (none when a list is empty), the last list varying fastest. */
export function* product<T>(lists: T[][]): Generator<T[]> {
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

/** Identity of a request: its parts and group mappings, with or without its anchor root. */
export function areqKey(a: AllocationRequest, withAnchor = true): string {
  const parts = a.parts
    .map((p) => `${p.rpId}:${p.rcId}:${p.amount}`)
    .sort()
    .join(',')
  const maps = [...a.mappings]
    .map(([s, ids]) => `${s}=${[...ids].sort((x, y) => x - y).join('+')}`)
    .sort()
    .join(';')
  return `${withAnchor ? a.anchorRootId : ''}|${parts}|${maps}`
}

export function suffixText(g: PlacementGroup): string {
  return g.suffix === '' ? '' : ` (group ${g.suffix})`
}

export function memberOfText(m: string[][]): string {
  return m.map((l) => `in:${l.join(',')}`).join(' and ')
}
