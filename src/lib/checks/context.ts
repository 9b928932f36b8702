/**
 * Indexes the audits share, built once per run in one pass over the rows (CloudModel's own indexes
 * are reused, not rebuilt). Everything here is derived from the snapshot alone.
 */
import type {CheckName, Finding, FindingSubject, Severity, UndecidedCode} from '../domain/finding.js'
import {type CloudModel, type InstanceRows, nodeKey} from '../domain/model.js'

export type {InstanceRows} from '../domain/model.js'
import {type InstanceWhereabouts, OutageRule} from '../domain/outage.js'
import {ProviderNodes} from '../domain/provider-nodes.js'
import {serviceUp} from '../domain/service-state.js'
import {
  type HostNumaTopology,
  type InstanceFlavors,
  type InstanceNumaTopology,
  type Parsed,
  parseHostNumaTopology,
  parseInstanceFlavors,
  parseInstanceNumaTopology,
} from '../domain/nova-objects.js'
import type {CellInfo, ComputeNode, HostMapping, Instance, InstanceMapping, Migration, ResourceProvider} from '../domain/snapshot.js'
import {push} from '../util/multimap.js'
import {type ExpectedResult, bootsFromVolume, expectedResources} from './flavor-resources.js'
import {TextMemo} from '../util/text-memo.js'

/** Migration statuses nova treats as over (db api `migration_get_in_progress_by_host_and_node`). */
export const MIGRATION_DONE_STATUSES = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'])
/** placement's [placement] incomplete_consumer_project_id / _user_id default. */
export const INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'

/** A node's residents (AuditContext.residentsOf): parallel lists. */
export interface Residents {
  list: Instance[]
  numa: Array<Parsed<InstanceNumaTopology | null>>
  flavors: Array<Parsed<InstanceFlavors | null>>
  bootsFromVolume: boolean[]
}

const newResidents = (): Residents => ({list: [], numa: [], flavors: [], bootsFromVolume: []})
const sizedResidents = (n: number): Residents => ({list: new Array(n), numa: new Array(n), flavors: new Array(n), bootsFromVolume: new Array(n)})

export const isMigrationInProgress = (m: Migration): boolean => m.deleted === 0 && !MIGRATION_DONE_STATUSES.has(m.status ?? '')

/** vm_state / task_state combinations whose resources nova frees (vm_states.allow_resource_removal). */
export function holdsResources(inst: Instance): boolean {
  if (inst.vm_state === 'deleted') return false
  if (inst.vm_state === 'shelved_offloaded' && inst.task_state !== 'spawning') return false
  return true
}

/**
 * An instance whose allocations are still the scheduler's: nova-compute has not claimed them on a
 * host (or its build is under way), so where they sit is no fault. Nova's own rules, read from its
 * boot flow:
 * - vm_state building, whatever the rest: the conductor creates the row (task scheduling, no host)
 *   before it maps the instance and deletes the build request; nova-compute then saves task None and
 *   only sets host and node inside the resource tracker's instance_claim, after waiting for
 *   max_concurrent_builds and the tracker's lock; a reschedule clears host and node, deletes the
 *   allocations and the conductor claims on an alternate host. A failed build deletes the
 *   allocations itself (build_and_run_instance), a build interrupted before its claim is put in
 *   ERROR when nova-compute starts.
 * - no host while a task is in flight (unshelve of an offloaded server: the scheduler claims on the
 *   destination before nova-compute sets host there): the resource tracker skips allocations of
 *   instances with no host ("yet to start"), and heal_allocations skips instances in a task and
 *   those with no node.
 */
export function awaitsClaim(inst: Instance): boolean {
  return inst.vm_state === 'building' || (inst.host === null && inst.task_state !== null)
}

export class AuditContext implements InstanceWhereabouts {
  readonly buildRequestUuids = new Set<string>()
  readonly hostMappingsByHost = new Map<string, HostMapping[]>()
  /** In-progress migrations by source and by destination node key (host + node). */
  readonly inProgressByNode = new Map<string, Migration[]>()
  readonly inProgressByInstance = new Map<string, Migration[]>()
  /** Which provider stands for which live compute node. */
  private readonly nodes: ProviderNodes
  /** The outage rule, read through this audit's instance indexes. */
  readonly outage: OutageRule
  /** Values derived once per audit, keyed by the function that derives them (once). */
  private readonly derived = new Map<(ctx: AuditContext) => unknown, unknown>()
  // Blobs keyed by their text: instances of one flavor carry the same flavor blob, parsed once.
  private readonly flavorByText = new TextMemo<Parsed<InstanceFlavors | null>>()
  private readonly numaByText = new TextMemo<Parsed<InstanceNumaTopology | null>>()
  // Hosts of one hardware model report the same topology text until something is pinned: 10k nodes, a few hundred texts.
  private readonly hostNumaByText = new TextMemo<Parsed<HostNumaTopology | null>>()
  // Expected amounts by flavor blob, NUMA blob and boot-from-volume: a few dozen distinct answers for 300k instances.
  private readonly expectedByBlob = new TextMemo<TextMemo<ExpectedResult[]>>()

  constructor(readonly model: CloudModel) {
    const s = model.snapshot
    for (const br of s.nova_api.build_requests) if (br.instance_uuid) this.buildRequestUuids.add(br.instance_uuid)
    for (const hm of s.nova_api.host_mappings) push(this.hostMappingsByHost, hm.host, hm)
    for (const m of s.nova.migrations) {
      if (!isMigrationInProgress(m)) continue
      push(this.inProgressByNode, nodeKey(m.source_compute, m.source_node), m)
      // The destination by dest_compute_id where it names a live node (2023.2+), else by its names.
      const destKey = model.migrationDestKey(m)
      if (destKey !== nodeKey(m.source_compute, m.source_node)) push(this.inProgressByNode, destKey, m)
      if (m.instance_uuid) push(this.inProgressByInstance, m.instance_uuid, m)
    }
    this.nodes = new ProviderNodes(model)
    this.outage = new OutageRule(model, this.nodes, this)
  }

  /**
   * The live instances a node's resource tracker counts that hold resources (model.trackedOnNode,
   * holdsResources), once per node for the pinning and usage checks. Shared: callers must not modify it.
   */
  residentOn(cn: ComputeNode): Instance[] {
    return this.residentsOf(cn).list
  }

  /**
   * residentOn(cn) with, at the same positions, each instance's NUMA topology and flavors blobs
   * (instanceNumaTopology, instanceFlavors) and whether it boots from volume. Shared: read-only.
   */
  residentsOf(cn: ComputeNode): Residents {
    let r = this.residents.get(cn)
    if (!r) {
      const key = nodeKey(cn.host, cn.hypervisor_hostname)
      const nodeList = this.model.liveInstancesByNode.get(key)
      r = (nodeList && this.residentsByList().get(nodeList)) ?? newResidents()
      const hidden = this.model.hiddenInstancesByNode.get(key)
      if (hidden) {
        const base = r
        r = {list: [...base.list], numa: [...base.numa], flavors: [...base.flavors], bootsFromVolume: [...base.bootsFromVolume]}
        for (const inst of hidden) if (inst.cell_uuid === cn.cell_uuid && holdsResources(inst)) this.addResident(r, inst)
      }
      this.residents.set(cn, r)
    }
    return r
  }

  private readonly residents = new Map<ComputeNode, Residents>()

  /**
   * Every node's residents, made in one pass over the instances in snapshot order, keyed by the
   * node's model.liveInstancesByNode list. Walking each node's list instead reaches 300k instance
   * rows and their blobs in scattered order, several cache misses each: the pinning and usage checks
   * spent most of their time there.
   */
  private residentsByList(): Map<readonly Instance[], Residents> {
    if (this.byNodeList) return this.byNodeList
    const byList = new Map<readonly Instance[], Residents>()
    const instances = this.model.snapshot.nova.instances
    const at = this.model.liveNodeListAt
    const blobs = this.liveInstanceBlobsAt()
    // Four lists of each node's size, filled by index: pushed one by one, each would keep up to half
    // again its length in spare slots for the whole audit (10k nodes, 300k residents).
    const filled = new Map<Residents, number>()
    for (let pos = 0; pos < instances.length; pos++) {
      const nodeList = at[pos]
      if (nodeList === undefined) continue
      const inst = instances[pos]
      if (!holdsResources(inst)) continue
      let r = byList.get(nodeList)
      if (!r) byList.set(nodeList, (r = sizedResidents(nodeList.length)))
      const k = filled.get(r) ?? 0
      filled.set(r, k + 1)
      // Listed rows are live: their blobs were read by position.
      r.list[k] = inst
      r.numa[k] = blobs.numa[pos] as Parsed<InstanceNumaTopology | null>
      r.flavors[k] = blobs.flavors[pos] as Parsed<InstanceFlavors | null>
      r.bootsFromVolume[k] = bootsFromVolume(inst)
    }
    // A node's list counts its residents and those that hold nothing (shelved-offloaded): trimmed.
    for (const [r, k] of filled) if (k < r.list.length) r.list.length = r.numa.length = r.flavors.length = r.bootsFromVolume.length = k
    this.byNodeList = byList
    return byList
  }

  private byNodeList?: Map<readonly Instance[], Residents>

  /**
   * The parsed NUMA topology and flavors blobs of each live row (deleted = 0), by position in
   * snapshot.nova.instances, read in one pass in snapshot order. A lookup by text reads the whole
   * text (its hash, or a comparison with the text of the same length): each of 300k blobs is read
   * once here, not once per check that asks.
   */
  liveInstanceBlobsAt(): {
    numa: ReadonlyArray<Parsed<InstanceNumaTopology | null> | undefined>
    flavors: ReadonlyArray<Parsed<InstanceFlavors | null> | undefined>
  } {
    if (!this.blobsAt) {
      const instances = this.model.snapshot.nova.instances
      // Sized once and filled by index: no regrowth, no iterator results while unoptimised.
      const numa = new Array<Parsed<InstanceNumaTopology | null> | undefined>(instances.length)
      const flavors = new Array<Parsed<InstanceFlavors | null> | undefined>(instances.length)
      for (let pos = 0; pos < instances.length; pos++) {
        const inst = instances[pos]
        const live = inst.deleted === 0
        numa[pos] = live ? this.instanceNumaTopology(inst) : undefined
        flavors[pos] = live ? this.instanceFlavors(inst) : undefined
      }
      this.blobsAt = {numa, flavors}
    }
    return this.blobsAt
  }

  private blobsAt?: ReturnType<AuditContext['liveInstanceBlobsAt']>

  private addResident(r: Residents, inst: Instance): void {
    r.list.push(inst)
    r.numa.push(this.instanceNumaTopology(inst))
    r.flavors.push(this.instanceFlavors(inst))
    r.bootsFromVolume.push(bootsFromVolume(inst))
  }

  /**
   * Whether the node's nova-compute is not up (serviceUp of model.serviceOf): its row is then only
   * stale. Once per node for the pinning and usage checks (four date parses and a service lookup each).
   */
  rowIsStale(cn: ComputeNode): boolean {
    let stale = this.staleRows.get(cn)
    if (stale === undefined) this.staleRows.set(cn, (stale = !serviceUp(this.model.serviceOf(cn), this.model.snapshot.captured_at)))
    return stale
  }

  private readonly staleRows = new Map<ComputeNode, boolean>()

  /** model.instanceRows: instance rows grouped by uuid through the consumer index. */
  get instanceRows(): InstanceRows {
    return this.model.instanceRows
  }

  /** model.instancesByUuid.get(uuid), read through instanceRows. */
  rowsOf(uuid: string): Instance[] | undefined {
    const index = this.model.consumerIndex.get(uuid)
    return index === undefined ? this.instanceRows.other.get(uuid) : this.instanceRows.ofConsumer(index)
  }

  /** The live, non-hidden rows of an instance uuid (several: live in several cells), read through instanceRows. */
  liveRows(uuid: string): Instance[] | undefined {
    const rows = this.rowsOf(uuid)
    return rows && this.liveOf(uuid, rows)
  }

  /** The live, non-hidden rows among `rows` (all rows of `uuid`), undefined when none. */
  liveOf(uuid: string, rows: Instance[]): Instance[] | undefined {
    if (rows.length === 1) return rows[0].deleted === 0 && !rows[0].hidden ? rows : undefined
    let live = this.severalLive.get(uuid)
    if (live === undefined) {
      const found = rows.filter((i) => i.deleted === 0 && !i.hidden)
      this.severalLive.set(uuid, (live = found.length > 0 ? found : null))
    }
    return live ?? undefined
  }

  private readonly severalLive = new Map<string, Instance[] | null>()

  /** The instance_mapping of an instance uuid (the last one of the uuid), read through model.mappingPositions. */
  mappingOf(uuid: string): InstanceMapping | undefined {
    const m = this.model.mappingPositions
    const index = this.model.consumerIndex.get(uuid)
    const at = index === undefined ? (m.other.get(uuid) ?? -1) : m.ofConsumer[index]
    return at < 0 ? undefined : this.model.snapshot.nova_api.instance_mappings[at]
  }

  /**
   * One derived value per audit (e.g. the leak classification the usage check re-reads), keyed by
   * the function that derives it, so its type is that function's: no string keys to collide or cast.
   */
  once<T>(of: (ctx: AuditContext) => T, make: () => T): T {
    if (!this.derived.has(of)) this.derived.set(of, make())
    return this.derived.get(of) as T
  }

  instanceFlavors(inst: Instance): Parsed<InstanceFlavors | null> {
    return this.flavorByText.get(inst.extra?.flavor ?? '', parseFlavorText)
  }

  instanceNumaTopology(inst: Instance): Parsed<InstanceNumaTopology | null> {
    return this.numaByText.get(inst.extra?.numa_topology ?? '', parseNumaText)
  }

  /** model.statsReadable(cn): only readability is asked (unreadableBlobs). */
  statsReadable(cn: ComputeNode): {ok: true} | {ok: false; error: string} {
    return this.model.statsReadable(cn)
  }

  /** model.hostNumaTopology(cn), shared between nodes with the same text. Read-only: the value is shared. */
  hostNumaTopology(cn: ComputeNode): Parsed<HostNumaTopology | null> {
    // By node too: unreadableBlobs and the pinning checks each ask for every node, and finding a
    // 3.6 KB text again in the memo (a hash or a compare of the whole text) costs more than this.
    let v = this.hostNumaByNode.get(cn)
    if (v === undefined) this.hostNumaByNode.set(cn, (v = this.hostNumaByText.get(cn.numa_topology ?? '', parseHostNumaText)))
    return v
  }

  private readonly hostNumaByNode = new Map<ComputeNode, Parsed<HostNumaTopology | null>>()

  /**
   * expectedResources(this, inst) for the current flavor, shared between instances with the same blobs.
   * Only answers read from instance_extra.flavor are shared (the fallback reads the instance row).
   * The result is shared: callers must not modify it.
   */
  expected(inst: Instance): ExpectedResult {
    const flavor = inst.extra?.flavor
    if (!flavor) return expectedResources(this, inst)
    const bfv = bootsFromVolume(inst) ? 1 : 0
    const pair = this.expectedByBlob.get(flavor, newTextMemo).get(inst.extra?.numa_topology ?? '', newPair)
    const hit = pair[bfv]
    if (hit) return hit
    const r = expectedResources(this, inst)
    if (r.ok && r.value.flavorSource === 'instance_extra.flavor') pair[bfv] = r
    return r
  }

  cellName(cellUuid: string): string {
    return this.model.cellLabel(cellUuid)
  }

  cellById(id: number | null): CellInfo | undefined {
    return id === null ? undefined : this.model.cellsById.get(id)
  }

  isSharing(rp: ResourceProvider): boolean {
    return this.nodes.isSharing(rp)
  }

  /** The provider nova uses for a compute node: same uuid. */
  providerOf(cn: ComputeNode): ResourceProvider | undefined {
    return this.nodes.providerOf(cn)
  }

  /** The live compute node a (root) provider stands for. */
  computeNodeOf(rp: ResourceProvider): ComputeNode | undefined {
    return this.nodes.computeNodeOf(rp)
  }

  liveComputeNodeAt(host: string | null, node: string | null): ComputeNode | undefined {
    return this.model.liveComputeNodesByKey.get(nodeKey(host, node))
  }

  /**
   * Whether a migration goes to this node: dest_compute_id where it names a live node (nova 2023.2+
   * rows; the names go stale when a hypervisor renames itself), else dest_compute and dest_node (Zed).
   */
  movesTo(m: Migration, cn: ComputeNode): boolean {
    const byId = this.model.liveComputeNodeById(m.cell_uuid, m.dest_compute_id)
    return byId === undefined ? m.dest_compute === cn.host && m.dest_node === cn.hypervisor_hostname : byId === cn
  }

  /** Whether a migration leaves this node (migrations carry no source compute id: by the names). */
  movesFrom(m: Migration, cn: ComputeNode): boolean {
    return m.source_compute === cn.host && m.source_node === cn.hypervisor_hostname
  }

  nodeSubject(cn: ComputeNode): FindingSubject {
    const subject: FindingSubject = {cell: this.cellName(cn.cell_uuid), cell_uuid: cn.cell_uuid}
    if (cn.host !== null) subject.host = cn.host
    if (cn.hypervisor_hostname !== null) subject.node = cn.hypervisor_hostname
    return subject
  }

  /** The "unknown" finding a check emits for every cell it could not read. */
  undecided(check: CheckName, code: UndecidedCode, what: string, skipped: Record<string, unknown> = {}): Finding[] {
    return this.model.unavailableCells.map((cell) => ({
      check,
      code,
      severity: 'unknown' as Severity,
      subject: {cell: cell.name ?? cell.uuid, cell_uuid: cell.uuid},
      message: `Cell ${cell.name ?? cell.uuid} could not be read: ${what} not decided for it.`,
      evidence: {cell_status: cell.status, cell_error: cell.error ?? null, ...skipped},
      repair: 'Make the cell database reachable and audit again (nothing is concluded from its absence).',
    }))
  }
}

const parseFlavorText = (text: string) => parseInstanceFlavors(text === '' ? null : text)
const parseNumaText = (text: string) => parseInstanceNumaTopology(text === '' ? null : text)
const parseHostNumaText = (text: string) => parseHostNumaTopology(text === '' ? null : text)
const newTextMemo = () => new TextMemo<ExpectedResult[]>()
const newPair = (): ExpectedResult[] => []

export function sortedNumbers(values: Iterable<number>): number[] {
  return [...values].sort((a, b) => a - b)
}

/** A host name without its domain (nova's FQDN versus short-name renames); addresses are kept whole. */
export function shortHostName(name: string): string {
  const dot = name.indexOf('.')
  // An IPv4 address or a uuid-like ironic node name has no domain part to strip.
  return dot > 0 && !/^\d+\.\d+\.\d+\.\d+$/.test(name) ? name.slice(0, dot) : name
}
