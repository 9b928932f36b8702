/**
 * The model's trait questions, answered from placement's rows without a Set of names per provider
 * up front: real libvirt computes report 60-100 traits, 700k resource_provider_traits rows on a 10k
 * cloud, while the audit asks about one trait (MISC_SHARES_VIA_AGGREGATE) and builds the per-provider
 * names only when a check or the engine asks for them.
 */
import {SHARING_TRAIT} from './placement-capacity.js'
import type {Snapshot} from './snapshot.js'

type TraitRow = {resource_provider_id: number; trait_id: number}

/**
 * The traits the audits ask about. A live audit (Snapshot.scope 'audit') reads the
 * resource_provider_traits rows of these only, and the model refuses any other trait question on
 * such a snapshot (refuseTraitQuestion): a check that starts asking about a trait adds it here.
 */
export const AUDIT_TRAITS: ReadonlySet<string> = new Set([SHARING_TRAIT])

/**
 * The snapshot's resource_provider_traits rows to answer a question about `name` (undefined: every
 * trait); throws when an audit view's rows cannot answer it.
 */
export function traitRowsFor(snapshot: Pick<Snapshot, 'scope' | 'placement'>, name: string | undefined): readonly TraitRow[] {
  if (snapshot.scope === 'audit' && (name === undefined || !AUDIT_TRAITS.has(name)))
    throw new Error(`the audit view holds the trait rows of ${[...AUDIT_TRAITS].join(', ')} only, not of ${name ?? 'every trait'}: add it to AUDIT_TRAITS`)
  return snapshot.placement.resource_provider_traits
}

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
