/**
 * Whether a consumer holds what its flavor asks, answered without building the sums for the common
 * case: each wanted class held once with its amount, other checked classes at zero.
 */
import type {ResourceClassRegistry} from '../../domain/resource-classes.js'
import type {ResourceAmounts} from '../flavor-resources.js'
import {CHECKED_CLASSES, type Group} from './shared.js'

interface CompiledWant {
  ids: number[]
  amounts: number[]
  checkedElsewhere: number[]
}

export class AmountMatcher {
  // Class ids whose name leads back to them: sums by id are then sums by name, as the long way adds.
  private readonly roundTrip = new Map<number, boolean>()
  // The wanted amounts by resource class id, per shared expected result (a few dozen for 300k instances).
  private readonly wantById = new Map<ResourceAmounts, CompiledWant | null>()

  constructor(private readonly rc: ResourceClassRegistry) {}

  /** true: held exactly as asked. false: decide the long way (sameAmounts on the sums). */
  holdsAsAsked(want: ResourceAmounts, groups: Group[]): boolean {
    let w = this.wantById.get(want)
    if (w === undefined) this.wantById.set(want, (w = this.compile(want)))
    if (!w) return false
    let seen = 0
    let matched = 0
    // Indexed: once per consumer, mostly before the JIT optimises it (a for-of allocates per row).
    for (let gi = 0; gi < groups.length; gi++) {
      const allocations = groups[gi].allocations
      for (let ai = 0; ai < allocations.length; ai++) {
        const a = allocations[ai]
        if (!this.namedOnce(a.resource_class_id)) return false
        const k = w.ids.indexOf(a.resource_class_id)
        if (k >= 0) {
          if (seen & (1 << k) || a.used !== w.amounts[k]) return false
          seen |= 1 << k
          matched++
        } else if (a.used !== 0 && w.checkedElsewhere.includes(a.resource_class_id)) return false
      }
    }
    return matched === w.ids.length
  }

  private namedOnce(id: number): boolean {
    let ok = this.roundTrip.get(id)
    if (ok === undefined) this.roundTrip.set(id, (ok = this.rc.id(this.rc.name(id)) === id))
    return ok
  }

  private compile(want: ResourceAmounts): CompiledWant | null {
    const ids: number[] = []
    const amounts: number[] = []
    for (const c in want) {
      const id = this.rc.id(c)
      if (id === undefined) return null // a class placement does not know: never allocated, never equal
      ids.push(id)
      amounts.push(want[c])
    }
    const checkedElsewhere = CHECKED_CLASSES.filter((c) => !(c in want)).flatMap((c) => this.rc.id(c) ?? [])
    return ids.length > 30 ? null : {ids, amounts, checkedElsewhere}
  }
}

/** The diff of the amount check is empty: every asked class allocated as asked, no other checked class allocated. */
export function sameAmounts(want: ResourceAmounts, actual: ResourceAmounts): boolean {
  for (const c in want) if (want[c] !== (actual[c] ?? 0)) return false
  for (const c of CHECKED_CLASSES) if (!(c in want) && (actual[c] ?? 0) !== 0) return false
  return true
}
