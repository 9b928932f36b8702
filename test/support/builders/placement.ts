/**
 * Builder family: placement. Resource providers (root, nested, sharing), inventories, traits,
 * provider aggregates, consumers and allocations, written as placement's API writes them (each PUT
 * bumps the generations it touches), and the resolution of an instance's resources to providers.
 */
import type {Consumer, Inventory} from '../../../src/lib/domain/snapshot.js'
import {floatStored} from '../../../src/lib/domain/placement-capacity.js'
import {type ChildProviderSpec, type HostRec, type ProviderRec, type SharingProviderSpec, CONSUMER_TYPE_INSTANCE} from './specs.js'
import {BuilderState} from './state.js'

export abstract class PlacementFamily extends BuilderState {
  protected newProvider(uuid: string, name: string, parent: ProviderRec | null): ProviderRec {
    if (this.providers.has(uuid)) throw new Error(`provider ${uuid} exists`)
    const id = ++this.seq.rp
    const rec: ProviderRec = {
      row: {id, uuid, name, generation: 0, root_provider_id: parent ? parent.row.root_provider_id : id, parent_provider_id: parent ? parent.row.id : null},
      inventories: new Map(),
      used: new Map(),
      traits: new Set(),
      aggregates: new Set(),
      children: [],
      sharing: false,
    }
    if (parent) parent.children.push(rec)
    this.providers.set(uuid, rec)
    this.providerList.push(rec)
    return rec
  }

  /** PUT /resource_providers/{uuid}/inventories: one generation bump. */
  protected setInventories(rp: ProviderRec, invs: Record<string, Partial<Inventory> & {total: number}>): void {
    for (const [rcName, inv] of Object.entries(invs)) {
      const rc = this.rcId(rcName)
      rp.inventories.set(rc, {
        id: ++this.seq.inv,
        resource_provider_id: rp.row.id,
        resource_class_id: rc,
        total: inv.total,
        reserved: inv.reserved ?? 0,
        min_unit: inv.min_unit ?? 1,
        max_unit: inv.max_unit ?? inv.total,
        step_size: inv.step_size ?? 1,
        allocation_ratio: floatStored(inv.allocation_ratio ?? 1),
      })
    }
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  protected setTraits(rp: ProviderRec, traits: string[]): void {
    if (traits.length === 0) return
    for (const t of traits) rp.traits.add(this.traitId(t))
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  protected linkAggregate(rp: ProviderRec, aggUuid: string): void {
    let id = this.placementAggIdByUuid.get(aggUuid)
    if (id === undefined) {
      id = ++this.seq.pagg
      this.placementAggIdByUuid.set(aggUuid, id)
      this.placementAggs.push({id, uuid: aggUuid})
    }
    if (rp.aggregates.has(id)) return
    rp.aggregates.add(id)
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  /** A root provider with no compute node behind it (left by a rename, created by hand). */
  addRootProvider(spec: {name: string; uuid?: string; inventories: ChildProviderSpec['inventories']; traits?: string[]}): ProviderRec {
    const rp = this.newProvider(spec.uuid ?? this.rng.uuid(), spec.name, null)
    this.setInventories(rp, spec.inventories)
    this.setTraits(rp, spec.traits ?? [])
    return rp
  }

  /**
   * A nested provider under a host's root (PCI/SRIOV PF, VGPU pGPU), or under any provider named by
   * uuid or name (trees with no compute node behind them, for placement-only tests).
   */
  addChildProvider(parentHostOrProvider: string, spec: ChildProviderSpec): ProviderRec {
    const x = parentHostOrProvider
    const parent = this.hostsByNode.has(x) || this.hostsByHost.has(x) ? this.hostRec(x).rp : this.provider(x)
    const rp = this.newProvider(spec.uuid ?? this.rng.uuid(), spec.name, parent)
    this.setInventories(rp, spec.inventories)
    this.setTraits(rp, spec.traits ?? [])
    return rp
  }

  /** A sharing provider (shared storage) exposing DISK_GB through aggregates. */
  addSharingProvider(spec: SharingProviderSpec): ProviderRec {
    const rp = this.newProvider(spec.uuid ?? this.rng.uuid(), spec.name, null)
    rp.sharing = true
    this.setInventories(rp, {DISK_GB: {total: spec.disk_gb, allocation_ratio: spec.disk_allocation_ratio ?? 1}})
    this.setTraits(rp, ['MISC_SHARES_VIA_AGGREGATE'])
    for (const name of spec.aggregates) {
      const agg = this.aggregatesByName.get(name)
      if (!agg || !agg.uuid) throw new Error(`no aggregate ${name}`)
      this.linkAggregate(rp, agg.uuid)
    }
    return rp
  }

  /** Change one inventory field of a provider (PUT inventories: one generation bump). */
  updateInventory(uuidOrName: string, rcName: string, patch: Partial<Omit<Inventory, 'id' | 'resource_provider_id' | 'resource_class_id'>>): Inventory {
    const rp = this.provider(uuidOrName)
    const inv = rp.inventories.get(this.rcId(rcName))
    if (!inv) throw new Error(`${rp.row.name} has no ${rcName} inventory`)
    Object.assign(inv, patch)
    if (patch.allocation_ratio !== undefined) inv.allocation_ratio = floatStored(patch.allocation_ratio)
    rp.row.generation = (rp.row.generation ?? 0) + 1
    return inv
  }

  /** Link a provider to the placement aggregate of a nova aggregate (without touching the nova side). */
  linkProviderToAggregate(uuidOrName: string, aggName: string): void {
    const agg = this.aggregatesByName.get(aggName)
    if (!agg?.uuid) throw new Error(`no aggregate ${aggName}`)
    this.linkAggregate(this.provider(uuidOrName), agg.uuid)
  }

  /** Drop a provider's link to a nova aggregate's placement aggregate (the nova side keeps the host). */
  unlinkProviderFromAggregate(uuidOrName: string, aggName: string): void {
    const agg = this.aggregatesByName.get(aggName)
    const id = agg?.uuid ? this.placementAggIdByUuid.get(agg.uuid) : undefined
    const rp = this.provider(uuidOrName)
    if (id === undefined || !rp.aggregates.delete(id)) throw new Error(`${rp.row.name} is not linked to ${aggName}`)
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  /** Remove a provider (and its inventories, traits, aggregate links): DELETE /resource_providers/{uuid}. */
  removeProvider(uuidOrName: string): ProviderRec {
    const rp = this.provider(uuidOrName)
    for (const [consumer, list] of this.allocations)
      if (list.some((a) => a.rp === rp)) throw new Error(`provider ${rp.row.uuid} has allocations of ${consumer}`)
    this.providers.delete(rp.row.uuid)
    this.providerList.splice(this.providerList.indexOf(rp), 1)
    return rp
  }

  protected capacity(inv: Inventory): number {
    return (inv.total - inv.reserved) * inv.allocation_ratio
  }

  /** The provider of a host's tree (or a sharing provider of its aggregates) that can take `amount` of `rc`. */
  protected pickProvider(h: HostRec, rc: number, amount: number, force: boolean): ProviderRec {
    const fits = (rp: ProviderRec): boolean => {
      const inv = rp.inventories.get(rc)
      if (!inv) return false
      if (force) return true
      return amount >= inv.min_unit && amount <= inv.max_unit && amount % inv.step_size === 0 && (rp.used.get(rc) ?? 0) + amount <= this.capacity(inv)
    }
    const queue = [h.rp]
    const has: ProviderRec[] = []
    while (queue.length > 0) {
      const rp = queue.shift() as ProviderRec
      if (fits(rp)) return rp
      if (rp.inventories.has(rc)) has.push(rp)
      queue.push(...rp.children)
    }
    if (rc === 2 && h.rp.aggregates.size > 0) {
      for (const rp of this.providerList) {
        if (!rp.sharing) continue
        let linked = false
        for (const a of rp.aggregates) if (h.rp.aggregates.has(a)) linked = true
        if (linked && fits(rp)) return rp
      }
    }
    throw new Error(
      has.length > 0
        ? `${h.node}: no capacity for ${amount} ${this.rcName(rc)} (placement would refuse the allocation)`
        : `${h.node}: no provider with ${this.rcName(rc)} inventory`,
    )
  }

  /** Resolve an instance's resources to providers of a host. */
  protected resolve(h: HostRec, resources: Record<string, number>, force: boolean): Array<{rp: ProviderRec; rc: number; used: number}> {
    const out: Array<{rp: ProviderRec; rc: number; used: number}> = []
    for (const [name, amount] of Object.entries(resources)) {
      const rc = this.rcId(name)
      out.push({rp: this.pickProvider(h, rc, amount, force || !this.strict), rc, used: amount})
    }
    return out
  }

  /** Resolve resources to the providers of a host (strict capacity unless forced). */
  resolveOn(hostOrNode: string, resources: Record<string, number>, force = false): Array<{rp: ProviderRec; rc: number; used: number}> {
    return this.resolve(this.hostRec(hostOrNode), resources, force)
  }

  /**
   * `type` is what the consumer is (instance or migration); nova 26 does not send it (placement 1.38
   * consumer types), so placement stores consumer_type_id NULL and no consumer_types rows, as here.
   */
  protected ensureConsumer(uuid: string, project: string, user: string, _type: number): Consumer {
    let c = this.consumers.get(uuid)
    if (!c) {
      c = {id: ++this.seq.consumer, uuid, project_id: this.projectRow(project), user_id: this.userRow(user), generation: 0, consumer_type_id: null}
      this.consumers.set(uuid, c)
    }
    return c
  }

  /** PUT /allocations/{consumer}: replaces the consumer's allocations, bumps every touched provider and the consumer once. */
  putAllocations(consumer: string, project: string, user: string, type: number, allocs: Array<{rp: ProviderRec; rc: number; used: number}>): void {
    const c = this.ensureConsumer(consumer, project, user, type)
    const touched = new Set<ProviderRec>()
    for (const a of this.allocations.get(consumer) ?? []) {
      a.rp.used.set(a.rc, (a.rp.used.get(a.rc) ?? 0) - a.used)
      touched.add(a.rp)
    }
    for (const a of allocs) {
      a.rp.used.set(a.rc, (a.rp.used.get(a.rc) ?? 0) + a.used)
      touched.add(a.rp)
    }
    for (const rp of touched) rp.row.generation = (rp.row.generation ?? 0) + 1
    if (allocs.length > 0) {
      this.allocations.set(consumer, allocs)
      c.generation += 1
    } else {
      // placement deletes a consumer whose last allocation goes
      this.allocations.delete(consumer)
      this.consumers.delete(consumer)
    }
  }

  /**
   * Add allocations for a consumer on a host's providers, keeping what it already holds (one PUT
   * with the union). Used for leftovers (evacuation source, unknown consumers).
   */
  addAllocations(
    consumer: string,
    hostOrNode: string,
    resources: Record<string, number>,
    opts: {project?: string; user?: string; type?: number; force?: boolean} = {},
  ): void {
    const h = this.hostRec(hostOrNode)
    const existing = this.consumers.get(consumer)
    const project = opts.project ?? (existing ? this.externalProject(existing.project_id) : this.defaultProject)
    const user = opts.user ?? (existing ? this.externalUser(existing.user_id) : this.defaultUser)
    const allocs = this.resolve(h, resources, opts.force ?? false)
    this.putAllocations(consumer, project, user, opts.type ?? CONSUMER_TYPE_INSTANCE, [
      ...(this.allocations.get(consumer) ?? []).map((a) => ({...a})),
      ...allocs,
    ])
  }

  /** DELETE /allocations/{consumer} */
  removeAllocations(consumer: string): void {
    if (this.allocations.has(consumer)) this.putAllocations(consumer, '', '', CONSUMER_TYPE_INSTANCE, [])
  }
}
