/**
 * The derived, indexed view of a snapshot that checks, planners and the scheduler engine read.
 * Pure: built from a Snapshot alone, in one pass per table. Blobs are parsed lazily and cached, and
 * a blob that cannot be read is recorded (blobErrors) instead of failing the whole model.
 */
import {push} from '../util/multimap.js'
import {ModelBlobs} from './model-blobs.js'
import {ResourceClassRegistry} from './resource-classes.js'
import {StringIndex} from '../util/string-index.js'
import {brokenProviderTrees} from './provider-tree.js'
import {providersWithTrait, traitNamesByProvider, traitRowsFor} from './trait-sets.js'
import {ConsumerRuns, InstanceRows, locateMappings, type MappingPositions} from './instance-joins.js'
import type {Allocation, CellInfo, ComputeNode, Consumer, Flavor, Instance, Inventory, Migration, ResourceProvider, Service, Snapshot} from './snapshot.js'

export {type BlobError, type BlobReaders, type UnreadableBlob, blobSubject} from './model-blobs.js'
export type {InstanceRows, MappingPositions} from './instance-joins.js'

export const nodeKey = (host: string | null, node: string | null): string => `${host ?? ''}\u0000${node ?? ''}`

export class CloudModel extends ModelBlobs {
  readonly rc: ResourceClassRegistry
  readonly cellsByUuid = new Map<string, CellInfo>()
  readonly cellsById = new Map<number, CellInfo>()

  /**
   * Every instance row by uuid: an instance may (wrongly) be live in two cells, or soft-deleted.
   * Built on first use: the audits group instances through consumerIndex instead.
   */
  get instancesByUuid(): Map<string, Instance[]> {
    if (!this.instancesMap) {
      const map = new Map<string, Instance[]>()
      const rows = this.snapshot.nova.instances
      // A uuid has one row, but for an instance live in two cells or a cross-cell resize copy: insert
      // without looking first, and only when the map comes out smaller than the rows, start again and group.
      for (const inst of rows) map.set(inst.uuid, [inst])
      if (map.size !== rows.length) {
        map.clear()
        for (const inst of rows) push(map, inst.uuid, inst)
      }
      this.instancesMap = map
    }
    return this.instancesMap
  }

  private instancesMap?: Map<string, Instance[]>

  /** Instance rows grouped by uuid through consumerIndex (instance-joins.ts), built on first use. */
  get instanceRows(): InstanceRows {
    this.rowsIndex ??= new InstanceRows(this)
    return this.rowsIndex
  }

  private rowsIndex?: InstanceRows
  /** Where each instance uuid's (last) mapping is in nova_api.instance_mappings, built on first use. */
  get mappingPositions(): MappingPositions {
    this.mappingIndex ??= locateMappings(this)
    return this.mappingIndex
  }

  private mappingIndex?: MappingPositions
  /**
   * Live (deleted = 0), non-hidden instances per compute node key (host + node). An instance whose
   * compute_id (nova 2023.2+) names a live node of its cell is listed under that node's key, whatever
   * its host/node names say (they go stale when a hypervisor renames itself); otherwise by its names.
   */
  readonly liveInstancesByNode = new Map<string, Instance[]>()
  /** For the instance row at each position of snapshot.nova.instances, its liveInstancesByNode list (undefined: not listed). */
  readonly liveNodeListAt: Array<Instance[] | undefined> = []
  readonly liveComputeNodes: ComputeNode[] = []
  readonly computeNodesByUuid = new Map<string, ComputeNode[]>()
  readonly liveComputeNodesByKey = new Map<string, ComputeNode>()
  readonly liveComputeNodesByHostname = new Map<string, ComputeNode[]>()
  /** Live compute nodes by cell uuid, then compute_nodes.id: what instances.compute_id and migrations.dest_compute_id name. */
  readonly liveComputeNodesById = new Map<string, Map<number, ComputeNode>>()
  readonly servicesById = new Map<string, Service>() // `${cell_uuid}/${id}`
  readonly liveServicesByHost = new Map<string, Service[]>() // nova-compute and others, deleted = 0
  /** Live hidden copies (a pending cross-cell move's source) per compute node key, by host/node names. */
  readonly hiddenInstancesByNode = new Map<string, Instance[]>()
  readonly migrationsByUuid = new Map<string, Migration>()
  readonly migrationsByInstance = new Map<string, Migration[]>()

  readonly providersById = new Map<number, ResourceProvider>()
  readonly providersByUuid = new Map<string, ResourceProvider>()
  readonly providersByName = new Map<string, ResourceProvider[]>()
  readonly childrenByProvider = new Map<number, ResourceProvider[]>()
  readonly inventoriesByProvider = new Map<number, Inventory[]>()
  /**
   * Allocation consumers in first-seen order: consumer uuid -> position in consumerIds and of its
   * rows (allocationsOf). One uuid-keyed map that the audits join every other table against
   * (instances, consumers, mappings), with per-consumer results in plain arrays.
   */
  readonly consumerIndex = new StringIndex()
  readonly consumerIds: readonly string[] = this.consumerIndex.keys
  private readonly consumerRuns: ConsumerRuns
  /** The allocation rows of consumer i (consumerIds[i]), in snapshot order: a new array each call. */
  allocationsOf = (i: number): Allocation[] => this.consumerRuns.of(i)
  /** Allocation rows per consumer uuid; built on first use. */
  get allocationsByConsumer(): Map<string, Allocation[]> {
    if (!this.allocsByConsumer) {
      this.allocsByConsumer = new Map()
      for (let i = 0; i < this.consumerIds.length; i++) this.allocsByConsumer.set(this.consumerIds[i], this.consumerRuns.of(i))
    }
    return this.allocsByConsumer
  }

  private allocsByConsumer?: Map<string, Allocation[]>
  /** Allocation rows per provider id; built on first use (the audits read it for a few providers only). */
  get allocationsByProvider(): Map<number, Allocation[]> {
    if (!this.allocsByProvider) {
      this.allocsByProvider = new Map()
      for (const a of this.snapshot.placement.allocations) push(this.allocsByProvider, a.resource_provider_id, a)
    }
    return this.allocsByProvider
  }

  private allocsByProvider?: Map<number, Allocation[]>
  /** provider id -> resource class id -> sum(used) */
  readonly usageByProvider = new Map<number, Map<number, number>>()
  /** placement.consumers rows by uuid; built on first use (the audits reach them through consumerIndex). */
  get consumersByUuid(): Map<string, Consumer> {
    if (!this.consumersMap) {
      this.consumersMap = new Map()
      for (const c of this.snapshot.placement.consumers) this.consumersMap.set(c.uuid, c)
    }
    return this.consumersMap
  }

  private consumersMap?: Map<string, Consumer>
  readonly projectsById = new Map<number, string>()
  readonly usersById = new Map<number, string>()
  readonly traitNamesById = new Map<number, string>()
  /** Trait names per provider (rows naming no known trait left out), built on first use (trait-sets.ts). */
  get traitsByProvider(): Map<number, Set<string>> {
    this.traitNameSets ??= traitNamesByProvider(this.traitNamesById, traitRowsFor(this.snapshot, undefined))
    return this.traitNameSets
  }

  private traitNameSets?: Map<number, Set<string>>
  /** The ids of the providers that hold a trait: one pass over the rows, no per-provider sets. */
  providersWithTrait(name: string): Set<number> {
    return providersWithTrait(this.traitNamesById, traitRowsFor(this.snapshot, name), name)
  }
  readonly placementAggregateUuidById = new Map<number, string>()
  readonly aggregatesByProvider = new Map<number, Set<string>>()

  readonly flavorsById = new Map<number, Flavor>()
  readonly flavorsByFlavorid = new Map<string, Flavor>()
  readonly flavorsByName = new Map<string, Flavor>()

  constructor(readonly snapshot: Snapshot) {
    super()
    const s = snapshot
    this.rc = new ResourceClassRegistry(s.placement.resource_classes)
    for (const c of s.cells) {
      this.cellsByUuid.set(c.uuid, c)
      this.cellsById.set(c.id, c)
    }

    for (const svc of s.nova.services) {
      this.servicesById.set(`${svc.cell_uuid}/${svc.id}`, svc)
      if (svc.deleted === 0 && svc.host !== null) push(this.liveServicesByHost, svc.host, svc)
    }
    for (const cn of s.nova.compute_nodes) {
      if (cn.uuid) push(this.computeNodesByUuid, cn.uuid, cn)
      if (cn.deleted !== 0) continue
      this.liveComputeNodes.push(cn)
      this.liveComputeNodesByKey.set(nodeKey(cn.host, cn.hypervisor_hostname), cn)
      if (cn.hypervisor_hostname !== null) push(this.liveComputeNodesByHostname, cn.hypervisor_hostname, cn)
      let byId = this.liveComputeNodesById.get(cn.cell_uuid)
      if (!byId) this.liveComputeNodesById.set(cn.cell_uuid, (byId = new Map()))
      byId.set(cn.id, cn)
    }
    const instances = s.nova.instances
    this.liveNodeListAt.length = instances.length
    // By host, then node: a capture holds one string per distinct host and node, whose hash is
    // kept, so a pair's key string is made and hashed once, not once per instance.
    const byNames = new Map<string, Map<string | null, Instance[]>>()
    for (let i = 0; i < instances.length; i++) {
      const inst = instances[i]
      if (inst.deleted !== 0 || inst.host === null) continue
      if (inst.hidden) {
        push(this.hiddenInstancesByNode, nodeKey(inst.host, inst.node), inst)
        continue
      }
      // Zed snapshots have no compute_id at all: one property miss per instance on the hot path.
      const cid = inst.compute_id
      const byId = cid == null ? undefined : this.liveComputeNodesById.get(inst.cell_uuid)?.get(cid)
      let list: Instance[] | undefined
      if (byId === undefined) {
        let nodes = byNames.get(inst.host)
        if (!nodes) byNames.set(inst.host, (nodes = new Map()))
        list = nodes.get(inst.node)
        if (!list) nodes.set(inst.node, (list = this.nodeList(nodeKey(inst.host, inst.node))))
      } else list = this.nodeList(nodeKey(byId.host, byId.hypervisor_hostname))
      ;(this.liveNodeListAt[i] = list).push(inst)
    }
    for (const m of s.nova.migrations) {
      // One uuid, a row per cell (cross-cell moves), soft-deleted ones too: a live row speaks for it.
      if (m.uuid && (m.deleted === 0 || (this.migrationsByUuid.get(m.uuid)?.deleted ?? 1) !== 0)) this.migrationsByUuid.set(m.uuid, m)
      if (m.instance_uuid) push(this.migrationsByInstance, m.instance_uuid, m)
    }

    const p = s.placement
    for (const rp of p.resource_providers) {
      this.providersById.set(rp.id, rp)
      this.providersByUuid.set(rp.uuid, rp)
      if (rp.name !== null) push(this.providersByName, rp.name, rp)
      if (rp.parent_provider_id !== null) push(this.childrenByProvider, rp.parent_provider_id, rp)
    }
    // Indexed loops over long tables: run once, unoptimised, a for-of allocates a result per row.
    for (let i = 0; i < p.inventories.length; i++) push(this.inventoriesByProvider, p.inventories[i].resource_provider_id, p.inventories[i])
    this.consumerRuns = new ConsumerRuns(p.allocations, this.consumerIndex)
    // A scheduler view carries the sums; its few allocation rows are already counted in them.
    const used = p.usages ?? p.allocations
    // A consumer's rows come together, mostly on one provider: its map is looked up once per run of them.
    let usage = new Map<number, number>()
    let usageOf = Number.NaN
    for (let i = 0; i < used.length; i++) {
      const a = used[i]
      if (a.resource_provider_id !== usageOf) {
        usageOf = a.resource_provider_id
        const known = this.usageByProvider.get(usageOf)
        if (known) usage = known
        else this.usageByProvider.set(usageOf, (usage = new Map()))
      }
      usage.set(a.resource_class_id, (usage.get(a.resource_class_id) ?? 0) + a.used)
    }
    for (const r of p.projects) this.projectsById.set(r.id, r.external_id)
    for (const r of p.users) this.usersById.set(r.id, r.external_id)
    for (const t of p.traits) this.traitNamesById.set(t.id, t.name)
    for (const a of p.placement_aggregates) if (a.uuid) this.placementAggregateUuidById.set(a.id, a.uuid)
    const providerAggregates = p.resource_provider_aggregates
    for (let i = 0; i < providerAggregates.length; i++) {
      const ra = providerAggregates[i]
      const uuid = this.placementAggregateUuidById.get(ra.aggregate_id)
      if (uuid === undefined) continue
      let set = this.aggregatesByProvider.get(ra.resource_provider_id)
      if (!set) this.aggregatesByProvider.set(ra.resource_provider_id, (set = new Set()))
      set.add(uuid)
    }

    for (const f of s.nova_api.flavors) {
      this.flavorsById.set(f.id, f)
      this.flavorsByFlavorid.set(f.flavorid, f)
      this.flavorsByName.set(f.name, f)
    }
  }

  /** The live instances of a node key, filed under it on first use. */
  private nodeList(key: string): Instance[] {
    let list = this.liveInstancesByNode.get(key)
    if (!list) this.liveInstancesByNode.set(key, (list = []))
    return list
  }

  // ---------------------------------------------------------------- cells

  cellOf(cellUuid: string): CellInfo | undefined {
    return this.cellsByUuid.get(cellUuid)
  }

  isCellAvailable(cellUuid: string): boolean {
    return this.cellsByUuid.get(cellUuid)?.status === 'available'
  }

  get unavailableCells(): CellInfo[] {
    return this.snapshot.cells.filter((c) => c.status !== 'available')
  }

  /** True when every cell was read: absence of a row then means the row does not exist. */
  get allCellsAvailable(): boolean {
    return this.snapshot.cells.every((c) => c.status === 'available')
  }

  cellLabel(cellUuid: string): string {
    const c = this.cellsByUuid.get(cellUuid)
    return c?.name ?? cellUuid
  }

  // ---------------------------------------------------------------- nova rows

  liveInstances(uuid: string): Instance[] {
    return (this.instancesByUuid.get(uuid) ?? []).filter((i) => i.deleted === 0)
  }

  instancesOnNode(host: string | null, node: string | null): Instance[] {
    return this.liveInstancesByNode.get(nodeKey(host, node)) ?? []
  }

  /** What nova's resource tracker counts on a node: InstanceList.get_by_host_and_node, in its cell (hidden too). */
  trackedOnNode(cn: ComputeNode): Instance[] {
    const hidden = (this.hiddenInstancesByNode.get(nodeKey(cn.host, cn.hypervisor_hostname)) ?? []).filter((i) => i.cell_uuid === cn.cell_uuid)
    return [...this.instancesOnNode(cn.host, cn.hypervisor_hostname), ...hidden]
  }

  /** The live compute node of this cell with this compute_nodes.id (a NULL or stale id: undefined). */
  liveComputeNodeById(cellUuid: string, id: number | null | undefined): ComputeNode | undefined {
    return id == null ? undefined : this.liveComputeNodesById.get(cellUuid)?.get(id)
  }

  /** The node an instance is on: by compute_id where it names a live node, else by host and node names. */
  nodeOfInstance(inst: Instance): ComputeNode | undefined {
    return this.liveComputeNodeById(inst.cell_uuid, inst.compute_id) ?? this.liveComputeNodesByKey.get(nodeKey(inst.host, inst.node))
  }

  /** The key of the node an instance is on, as liveInstancesByNode files it. */
  nodeKeyOfInstance(inst: Instance): string {
    const cn = this.liveComputeNodeById(inst.cell_uuid, inst.compute_id)
    return cn === undefined ? nodeKey(inst.host, inst.node) : nodeKey(cn.host, cn.hypervisor_hostname)
  }

  /** A migration's destination node: by dest_compute_id where it names a live node, else by dest_compute and dest_node. */
  migrationDestNode(m: Migration): ComputeNode | undefined {
    return this.liveComputeNodeById(m.cell_uuid, m.dest_compute_id) ?? this.liveComputeNodesByKey.get(nodeKey(m.dest_compute, m.dest_node))
  }

  /** The node key of a migration's destination (dest_compute_id first, then the names). */
  migrationDestKey(m: Migration): string {
    const cn = this.liveComputeNodeById(m.cell_uuid, m.dest_compute_id)
    return cn === undefined ? nodeKey(m.dest_compute, m.dest_node) : nodeKey(cn.host, cn.hypervisor_hostname)
  }

  /**
   * The nova-compute service of a compute node, found as nova finds it: the live service of the
   * node's host (and binary) in the node's cell. nova's resource tracker leaves service_id NULL on
   * every node it creates, so service_id is only a fallback for old rows: it names the (possibly
   * deleted) service a node was once created for. Indexed, no closure: provider.stale asks for each node, mostly unoptimised.
   */
  serviceOf(cn: ComputeNode): Service | undefined {
    const onHost = cn.host === null ? undefined : this.liveServicesByHost.get(cn.host)
    if (onHost) for (let i = 0; i < onHost.length; i++) if (onHost[i].binary === 'nova-compute' && onHost[i].cell_uuid === cn.cell_uuid) return onHost[i]
    return cn.service_id === null ? undefined : this.servicesById.get(`${cn.cell_uuid}/${cn.service_id}`)
  }

  /** The live nova-compute service on a host, if any (there is at most one per cell). */
  computeServiceOn(host: string): Service | undefined {
    return this.liveServicesByHost.get(host)?.find((svc) => svc.binary === 'nova-compute')
  }

  // ---------------------------------------------------------------- placement

  /**
   * Providers whose parent_provider_id chain loops (or runs into, or whose root_provider_id names, a
   * loop), with the loop: placement never writes one, and nothing is concluded about such a tree.
   */
  get brokenTrees(): ReadonlyMap<number, readonly number[]> {
    this.brokenTreeMap ??= brokenProviderTrees(this.snapshot.placement.resource_providers, this.providersById)
    return this.brokenTreeMap
  }

  private brokenTreeMap?: Map<number, readonly number[]>

  /** The root of a provider's tree; a provider of a broken tree (brokenTrees) is its own root. */
  rootOf(rp: ResourceProvider): ResourceProvider {
    if (this.brokenTrees.has(rp.id)) return rp
    if (rp.root_provider_id !== null) return this.providersById.get(rp.root_provider_id) ?? rp
    let cur = rp
    while (cur.parent_provider_id !== null) {
      const parent = this.providersById.get(cur.parent_provider_id)
      if (!parent) break
      cur = parent
    }
    return cur
  }

  /** A provider and all its descendants, parents before children, each once (a loop is not followed round). */
  tree(root: ResourceProvider): ResourceProvider[] {
    const out: ResourceProvider[] = []
    const seen = new Set<number>()
    const queue = [root]
    for (let i = 0; i < queue.length; i++) {
      const rp = queue[i]
      if (seen.has(rp.id)) continue
      seen.add(rp.id)
      out.push(rp)
      for (const child of this.childrenByProvider.get(rp.id) ?? []) if (!seen.has(child.id)) queue.push(child)
    }
    return out
  }

  inventory(rpId: number, rcId: number): Inventory | undefined {
    return this.inventoriesByProvider.get(rpId)?.find((i) => i.resource_class_id === rcId)
  }

  usage(rpId: number, rcId: number): number {
    return this.usageByProvider.get(rpId)?.get(rcId) ?? 0
  }

  traitsOf(rpId: number): Set<string> {
    return this.traitsByProvider.get(rpId) ?? new Set()
  }

  aggregatesOf(rpId: number): Set<string> {
    return this.aggregatesByProvider.get(rpId) ?? new Set()
  }
}

export function buildModel(snapshot: Snapshot): CloudModel {
  return new CloudModel(snapshot)
}
