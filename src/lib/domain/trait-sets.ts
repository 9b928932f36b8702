/**
 * Provider traits as integer sets: per provider, its trait ids sorted, each once, in one Int32Array.
 * Real libvirt computes report 60-100 traits (CPU flags, VIF models, bus and image types): 700k
 * resource_provider_traits rows on a 10k cloud, which as a Set of names per provider cost a hash
 * table of strings each (~2.5 KB) while most questions are about one trait (sharing, same-host
 * migration) or compare against a handful of required ids.
 */
import type {NamedRow} from './snapshot.js'

const NONE = new Int32Array(0)

export class TraitSets {
  private readonly ids = new Map<string, number>()
  private readonly byProvider = new Map<number, Int32Array>()

  constructor(traits: readonly NamedRow[], rows: readonly TraitRow[]) {
    for (const t of traits) this.ids.set(t.name, t.id)
    const known = new Set(this.ids.values())
    // Rows come grouped by provider (its traits are written together): collect runs, then sort each.
    const lists = new Map<number, number[]>()
    for (const r of rows) {
      if (!known.has(r.trait_id)) continue
      const list = lists.get(r.resource_provider_id)
      if (list) list.push(r.trait_id)
      else lists.set(r.resource_provider_id, [r.trait_id])
    }
    for (const [rpId, list] of lists) {
      const sorted = Int32Array.from(list).sort()
      let n = 0
      for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i]
      this.byProvider.set(rpId, n === sorted.length ? sorted : sorted.slice(0, n))
    }
  }

  /** The id of a trait name, undefined when placement has no such trait. */
  idOf(name: string): number | undefined {
    return this.ids.get(name)
  }

  /** A provider's trait ids, ascending, each once (empty when it has none). */
  idsOf(rpId: number): Int32Array {
    return this.byProvider.get(rpId) ?? NONE
  }

  has(rpId: number, traitId: number | undefined): boolean {
    if (traitId === undefined) return false
    const ids = this.byProvider.get(rpId)
    if (!ids) return false
    let lo = 0
    let hi = ids.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (ids[mid] === traitId) return true
      if (ids[mid] < traitId) lo = mid + 1
      else hi = mid - 1
    }
    return false
  }

  hasNamed(rpId: number, name: string): boolean {
    return this.has(rpId, this.ids.get(name))
  }

  /** Providers holding a trait, in no particular order. */
  providersWith(name: string): number[] {
    const id = this.ids.get(name)
    const out: number[] = []
    if (id === undefined) return out
    for (const rpId of this.byProvider.keys()) if (this.has(rpId, id)) out.push(rpId)
    return out
  }
}

type TraitRow = {resource_provider_id: number; trait_id: number}

/** Trait names per provider, in row order, rows naming no trait left out. */
export function traitNamesByProvider(names: ReadonlyMap<number, string>, rows: readonly TraitRow[]): Map<number, Set<string>> {
  const map = new Map<number, Set<string>>()
  for (const rt of rows) {
    const name = names.get(rt.trait_id)
    if (name === undefined) continue
    let set = map.get(rt.resource_provider_id)
    if (!set) map.set(rt.resource_provider_id, (set = new Set()))
    set.add(name)
  }
  return map
}

/** The providers holding a trait (under any id that bears its name): one pass over the rows. */
export function providersWithTrait(names: ReadonlyMap<number, string>, rows: readonly TraitRow[], name: string): Set<number> {
  const out = new Set<number>()
  const ids = new Set<number>()
  for (const [id, n] of names) if (n === name) ids.add(id)
  if (ids.size === 0) return out
  for (const rt of rows) if (ids.has(rt.trait_id)) out.add(rt.resource_provider_id)
  return out
}

const bySnapshot = new WeakMap<object, TraitSets>()

/** The trait sets of a snapshot's placement rows, built once per snapshot. */
export function traitSetsOf(placement: {traits: readonly NamedRow[]; resource_provider_traits: readonly TraitRow[]}): TraitSets {
  let sets = bySnapshot.get(placement)
  if (!sets) bySnapshot.set(placement, (sets = new TraitSets(placement.traits, placement.resource_provider_traits)))
  return sets
}
