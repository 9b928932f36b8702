/**
 * The candidate search's view of placement (placement.ts), built once per model: every provider's
 * inventories, traits and aggregates, reverse indexes, and per-class typed columns for the scan.
 */
import type {CloudModel} from '../domain/model.js'
import {SHARING_TRAIT} from '../domain/placement-capacity.js'
import type {ResourceProvider} from '../domain/snapshot.js'
import {push} from '../util/multimap.js'
import {inventoryOf, type ProviderInventory} from './placement-capacity-check.js'
import {type RootRejection, rootRejection} from './placement-result.js'

export interface ProviderInfo {
  /** Dense position in provider id order (0..n-1): index into typed arrays. */
  ord: number
  id: number
  uuid: string
  name: string | null
  rootId: number
  parentId: number | null
  inventories: Map<number, ProviderInventory>
  traits: Set<string>
  aggregates: Set<string>
}

/**
 * Everything the candidate search needs, computed once per model: provider capacities, usage,
 * traits, aggregates, and reverse indexes (class -> providers, aggregate -> providers).
 */
export class ProviderIndex {
  readonly providers = new Map<number, ProviderInfo>()
  readonly byUuid = new Map<string, ProviderInfo>()
  /** Providers with an inventory of a class, in provider id order. */
  readonly byResourceClass = new Map<number, ProviderInfo[]>()
  readonly byAggregate = new Map<string, ProviderInfo[]>()
  readonly treeMembers = new Map<number, ProviderInfo[]>()
  readonly sharing = new Set<number>()
  readonly hasTrees: boolean
  readonly knownTraits: Set<string>
  readonly baseUsage: Map<number, Map<number, number>>

  constructor(readonly model: CloudModel) {
    const rps = [...model.snapshot.placement.resource_providers].sort((a, b) => a.id - b.id)
    let trees = false
    for (const [ord, rp] of rps.entries()) {
      const root = model.rootOf(rp)
      const info: ProviderInfo = {
        ord,
        id: rp.id,
        uuid: rp.uuid,
        name: rp.name,
        rootId: root.id,
        parentId: rp.parent_provider_id,
        inventories: new Map((model.inventoriesByProvider.get(rp.id) ?? []).map((i) => [i.resource_class_id, inventoryOf(i)])),
        traits: model.traitsOf(rp.id),
        aggregates: model.aggregatesOf(rp.id),
      }
      if (rp.parent_provider_id !== null) trees = true
      this.providers.set(rp.id, info)
      this.byUuid.set(rp.uuid, info)
      for (const rcId of info.inventories.keys()) push(this.byResourceClass, rcId, info)
      for (const agg of info.aggregates) push(this.byAggregate, agg, info)
      push(this.treeMembers, info.rootId, info)
      if (info.traits.has(SHARING_TRAIT)) this.sharing.add(rp.id)
    }
    this.hasTrees = trees
    this.knownTraits = new Set(model.traitNamesById.values())
    this.baseUsage = model.usageByProvider
  }

  provider(rp: ResourceProvider | number): ProviderInfo | undefined {
    return this.providers.get(typeof rp === 'number' ? rp : rp.id)
  }

  private readonly columns = new Map<number, ResourceColumn>()
  private readonly anchorCache = new Map<string, AnchorRoots>()

  /** The providers of one resource class as parallel arrays (id order), built once per model. */
  column(rcId: number): ResourceColumn {
    let col = this.columns.get(rcId)
    if (col) return col
    const infos = this.byResourceClass.get(rcId) ?? []
    const invs = infos.map((i) => i.inventories.get(rcId) as ProviderInventory)
    const summaryCap = new Float64Array(infos.length)
    const base = new Float64Array(infos.length)
    infos.forEach((info, i) => {
      const inv = invs[i] as ProviderInventory
      summaryCap[i] = inv.summaryCapacity
      base[i] = this.baseUsage.get(info.id)?.get(rcId) ?? 0
    })
    col = {rcId, infos, invs, summaryCap, base}
    this.columns.set(rcId, col)
    return col
  }

  /** Roots satisfying root_required / root_forbidden, and why the others do not; cached per trait set. */
  anchorRoots(required: Set<string>, forbidden: Set<string>): AnchorRoots {
    const key = `${[...required].sort().join(',')}|${[...forbidden].sort().join(',')}`
    let got = this.anchorCache.get(key)
    if (got) return got
    const roots = new Set<number>()
    const rejected: Array<[number, RootRejection]> = []
    for (const info of this.providers.values()) {
      if (info.rootId !== info.id) continue
      let ok = true
      for (const t of required) if (!info.traits.has(t)) ok = false
      for (const t of forbidden) if (info.traits.has(t)) ok = false
      if (ok) roots.add(info.id)
      else {
        const missing = [...required].filter((t) => !info.traits.has(t))
        const present = [...forbidden].filter((t) => info.traits.has(t))
        rejected.push([
          info.id,
          rootRejection(
            present.length > 0 ? `root provider has forbidden trait ${present.join(', ')}` : `root provider lacks required trait ${missing.join(', ')}`,
          ),
        ])
      }
    }
    got = {roots, rejected}
    this.anchorCache.set(key, got)
    return got
  }
}

export interface ResourceColumn {
  rcId: number
  infos: ProviderInfo[]
  invs: ProviderInventory[]
  /** int((total - reserved) x text(ratio)), per provider */
  summaryCap: Float64Array
  /** the snapshot's usage of the class, per provider */
  base: Float64Array
}

interface AnchorRoots {
  roots: Set<number>
  rejected: Array<[number, RootRejection]>
}

const indexCache = new WeakMap<CloudModel, ProviderIndex>()

export function providerIndex(model: CloudModel): ProviderIndex {
  let idx = indexCache.get(model)
  if (!idx) indexCache.set(model, (idx = new ProviderIndex(model)))
  return idx
}

/** Usage seen by the engine: the snapshot's allocations plus what this simulation has claimed. */
export interface UsageView {
  used(rpId: number, rcId: number): number
  /**
   * Optional fast path: when `base` is the index's own baseUsage, used = base + delta (rp -> rc ->
   * amount), and the candidate search reads the base from its per-class columns.
   */
  base?: Map<number, Map<number, number>>
  delta?: Map<number, Map<number, number>>
}
