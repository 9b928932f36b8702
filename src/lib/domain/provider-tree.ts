/**
 * Provider trees as placement's rows say they are, including the ones placement itself never writes:
 * a parent_provider_id chain that comes back on itself (a self-parent, two providers that are each
 * other's parent, a longer cycle). placement refuses to create such a loop ("creating loop in the
 * provider tree is not allowed"), but rows edited by hand or restored from a bad backup can hold one,
 * and every walk up or down such a tree would never end.
 */
import type {ResourceProvider} from './snapshot.js'

/**
 * Every provider whose tree is broken, with the cycle that breaks it (its ids in parent order,
 * starting at the smallest): the members of a cycle, the providers whose parent chain runs into one,
 * the providers whose root_provider_id names any of those, and the providers under those.
 */
export function brokenProviderTrees(providers: readonly ResourceProvider[], byId: ReadonlyMap<number, ResourceProvider>): Map<number, readonly number[]> {
  const broken = new Map<number, readonly number[]>()
  const settled = new Set<number>()
  for (const start of providers) {
    if (settled.has(start.id)) continue
    const path: number[] = []
    const at = new Map<number, number>()
    let cycle: readonly number[] | undefined
    let cur: ResourceProvider | undefined = start
    while (cur !== undefined && !settled.has(cur.id)) {
      const seen = at.get(cur.id)
      if (seen !== undefined) {
        cycle = fromSmallest(path.slice(seen))
        break
      }
      at.set(cur.id, path.length)
      path.push(cur.id)
      cur = cur.parent_provider_id === null ? undefined : byId.get(cur.parent_provider_id)
    }
    // The chain reached a provider already judged: it shares that provider's fate.
    if (cycle === undefined && cur !== undefined && settled.has(cur.id)) cycle = broken.get(cur.id)
    for (const id of path) {
      settled.add(id)
      if (cycle) broken.set(id, cycle)
    }
  }
  // A root_provider_id naming a broken provider breaks its tree too, and so everything under it:
  // repeated until nothing changes, so that the answer does not depend on the order of the rows.
  for (let changed = broken.size > 0; changed;) {
    changed = false
    for (const rp of providers) {
      if (broken.has(rp.id)) continue
      const cycle =
        (rp.root_provider_id === null ? undefined : broken.get(rp.root_provider_id)) ??
        (rp.parent_provider_id === null ? undefined : broken.get(rp.parent_provider_id))
      if (cycle) {
        broken.set(rp.id, cycle)
        changed = true
      }
    }
  }
  return broken
}

function fromSmallest(ids: number[]): number[] {
  let min = 0
  for (let i = 1; i < ids.length; i++) if (ids[i] < ids[min]) min = i
  return [...ids.slice(min), ...ids.slice(0, min)]
}
