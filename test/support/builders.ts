/**
 * CloudBuilder: small (or, through the generator, very large) clouds written the way nova and
 * placement would have written them, so that a clean build is fully consistent and every test that
 * wants an inconsistency has to make it explicitly.
 *
 * What "consistent" means here, table by table:
 * - every compute host has a live nova-compute service (up relative to the builder's fixed clock),
 *   a live compute node, a host mapping and a root resource provider with uuid = compute node uuid,
 *   name = hypervisor_hostname and the inventories nova's libvirt driver reports;
 * - every instance has its instance row (+ instance_extra blobs), an instance mapping, a placement
 *   consumer (project, user) and the allocations its flavor asks for, and it is accounted in its
 *   compute node's usage columns, stats and (when pinned) in the host NUMA cell's pinned_cpus;
 * - writes bump provider and consumer generations as placement's API does.
 *
 * Usage columns follow nova's resource tracker (_update_usage / _get_usage_dict): memory_mb_used
 * starts at reserved_host_memory_mb; local_gb_used = int(sum(root_gb + ephemeral_gb) + sum(swap)/1024)
 * with root_gb 0 for volume-backed instances (but counted in full for a migration, which the tracker
 * accounts from the bare flavor); vcpus_used = sum of flavor vcpus, pinned or not; an in-progress
 * migration is counted on both its source and its destination; running_vms and stats count the
 * instances whose host/node is the node.
 *
 * Blobs are written once, in nova's own serialisation (Python json.dumps: ', ' and ': ' separators,
 * ASCII only, floats with '.0'), with the versioned-object wrappers and `nova_object.changes` lists of
 * nova 26.2.2 (see /work/shared/reference/blobs.md). Per-host blobs are written at build() time.
 */

import {type Aggregate, CELL0_UUID, type CellInfo, type ComputeNode, type Consumer, type Flavor, type HostMapping, type Instance, type InstanceGroup, type InstanceMapping, type Inventory, type Migration, type MigrationType, type ResourceProvider, type Service, type Snapshot, type Timestamp, SNAPSHOT_FORMAT_VERSION} from '../../src/lib/domain/snapshot.js'
import {CUSTOM_RESOURCE_CLASS_MIN_ID, STANDARD_RESOURCE_CLASSES} from '../../src/lib/domain/resource-classes.js'
import {
  cpuInfo,
  DEFAULT_NOW,
  formatTs,
  type HostNumaCellSpec,
  type HostNumaCellState,
  hostNumaTopologyBlob,
  instanceFlavorBlob,
  type InstanceNumaCellSpec,
  instanceNumaTopologyBlob,
  parseTs,
  PCI_STATS_EMPTY,
  pyDumps,
  requestSpecBlob,
  Rng,
  SUPPORTED_INSTANCES,
} from './builders/blobs.js'
import {type FlavorResources, flavorResources, floatColumn, parseCpuSet} from './builders/resources.js'

export {
  DEFAULT_NOW,
  flavorObject,
  formatTs,
  type HostNumaCellSpec,
  type HostNumaCellState,
  hostNumaTopologyBlob,
  instanceFlavorBlob,
  type InstanceNumaCellSpec,
  instanceNumaTopologyBlob,
  parseTs,
  PyFloat,
  pyDumps,
  pyString,
  requestSpecBlob,
  Rng,
} from './builders/blobs.js'
export {dedicatedVcpus, type FlavorResources, flavorResources, floatColumn, parseCpuSet} from './builders/resources.js'

// ---------------------------------------------------------------- public option types

export interface CloudBuilderOptions {
  seed?: number
  /** The fixed clock, MySQL DATETIME text (UTC). Services report up 10 s before it. */
  now?: string
  /** Write nova_api.request_specs (large at scale). Default true. */
  requestSpecs?: boolean
  /** Refuse allocations beyond placement capacity and pins on busy pCPUs, as placement/nova would. Default true. */
  strict?: boolean
  /** Default compute traits nova's libvirt driver reports. */
  defaultTraits?: string[]
}

export interface FlavorSpec {
  name: string
  vcpus: number
  memory_mb: number
  root_gb?: number
  ephemeral_gb?: number
  swap?: number
  extra_specs?: Record<string, string>
  flavorid?: string
  is_public?: boolean
  description?: string | null
}

export interface HostSpec {
  host: string
  /** Default: the host name (libvirt's hostname). */
  hypervisor_hostname?: string
  /** Logical CPUs of the host (shared + dedicated). */
  vcpus: number
  memory_mb: number
  local_gb: number
  cpu_allocation_ratio?: number
  ram_allocation_ratio?: number
  disk_allocation_ratio?: number
  /** Default 512: the MEMORY_MB inventory's reserved and the start of memory_mb_used. */
  reserved_host_memory_mb?: number
  reserved_host_disk_gb?: number
  /** Host NUMA cells; default: two cells splitting CPUs and memory, all CPUs shared. */
  numa?: {cells: HostNumaCellSpec[]}
  /** Shorthand for a default 2-cell topology whose dedicated CPUs are this spec ("8-15"). */
  cpu_dedicated_set?: string
  traits?: string[]
  disabled?: boolean
  disabled_reason?: string
  forced_down?: boolean
  /** The service stopped reporting (host died): last_seen_up an hour before the clock. */
  down?: boolean
  /** Availability zone: the host joins (or creates) the aggregate of that name with availability_zone metadata. */
  az?: string
  /** Names of aggregates (created by addAggregate before) to join. */
  aggregates?: string[]
  /** No DISK_GB inventory on the root provider (disk comes from a sharing provider). */
  shared_storage?: boolean
  host_ip?: string
  uuid?: string
  created_at?: string
}

export interface InstanceSpec {
  uuid?: string
  /** Keystone project id (32 hex); default: the builder's first project. */
  project?: string
  user?: string
  vm_state?: string
  task_state?: string | null
  power_state?: number
  boot_from_volume?: boolean
  /** Default: the host's AZ (nova records the AZ of the chosen host). */
  az?: string | null
  display_name?: string
  /** hw:numa_nodes for a shared guest: give it a NUMA topology on one cell. */
  numa?: boolean
  /** Explicit host pCPUs to pin (dedicated vCPUs in order, then the emulator pCPU when isolated). */
  pin?: number[]
  /** The hypervisor node when the host has several (ironic). */
  node?: string
  created_at?: string
  /** Allocate even beyond capacity / on busy pCPUs (for tests of over-commit). */
  force?: boolean
  os_type?: string
  server_group?: string
}

export interface MigrationSpec {
  type: MigrationType
  status: string
  /** Destination host (and node when it has several). */
  dest: string
  dest_node?: string
  /** For resize: the new flavor. */
  new_flavor?: string
  uuid?: string
}

export interface AggregateSpec {
  name: string
  hosts?: string[]
  metadata?: Record<string, string>
  uuid?: string
}

export interface ServerGroupSpec {
  name: string
  policy: 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity'
  rules?: Record<string, number> | null
  members?: string[]
  project?: string
  user?: string
  uuid?: string
}

export interface ChildProviderSpec {
  /** Default `${parent name}_${suffix}` e.g. compute1_pci_0000_81_00_0 */
  name: string
  inventories: Record<string, Partial<Omit<Inventory, 'id' | 'resource_provider_id' | 'resource_class_id'>> & {total: number}>
  traits?: string[]
  uuid?: string
}

export interface SharingProviderSpec {
  name: string
  disk_gb: number
  disk_allocation_ratio?: number
  /** Names of aggregates (created before) through which it shares. */
  aggregates: string[]
  uuid?: string
}

export interface IronicNodeSpec {
  /** nova-compute host running the ironic driver. Default 'ironic-compute-1'. */
  host?: string
  /** Resource class suffix: 'BAREMETAL_GOLD' -> CUSTOM_BAREMETAL_GOLD. */
  resource_class: string
  cpus: number
  memory_mb: number
  local_gb: number
  uuid?: string
  az?: string
}

// ---------------------------------------------------------------- handles

export interface ProviderRec {
  row: ResourceProvider
  inventories: Map<number, Inventory>
  used: Map<number, number>
  traits: Set<number>
  aggregates: Set<number>
  children: ProviderRec[]
  sharing: boolean
}

export interface HostRec {
  cell: CellInfo
  host: string
  node: string
  az: string | null
  ironic: boolean
  service: Service
  cn: ComputeNode
  rp: ProviderRec
  numa: HostNumaCellState[] | null
  reservedMemoryMb: number
  reservedDiskGb: number
  /** resource-tracker accumulators */
  vcpusUsed: number
  memoryUsed: number
  diskUsed: number
  swapMbUsed: number
  stats: Map<string, number>
  threads: number
}

export interface InstanceRec {
  row: Instance
  flavor: Flavor
  res: FlavorResources
  bootFromVolume: boolean
  hostRec: HostRec | null
  /** host cell id -> pCPUs pinned there (incl. emulator threads) */
  pins: Map<number, number[]>
  /** host cell id -> [shared vcpus, memory] */
  numaUsage: Map<number, [number, number]>
  mapping: InstanceMapping
  /** The cells written into instance_extra.numa_topology (null: no NUMA topology). */
  numaCells: InstanceNumaCellSpec[] | null
}

export interface MigrationRec {
  row: Migration
  inst: InstanceRec
  source: HostRec
  dest: HostRec
  newFlavor: Flavor
  /** The node whose tracker also counts the moving instance while the move is in progress. */
  alsoTrackedOn: HostRec | null
}

const IO_TASK_STATES = new Set(['resize_migrating', 'rebuilding', 'resize_prep', 'image_snapshot', 'image_backup', 'rescuing', 'unshelving'])
/** vm_states whose instances the resource tracker counts as using the host. */
const NOT_ON_HOST = new Set(['deleted', 'shelved_offloaded'])
export const CONSUMER_TYPE_INSTANCE = 1
export const CONSUMER_TYPE_MIGRATION = 2
const MIGRATION_DONE = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'])

export const DEFAULT_COMPUTE_TRAITS = [
  'COMPUTE_NET_ATTACH_INTERFACE',
  'COMPUTE_VOLUME_ATTACH_WITH_TAG',
  'COMPUTE_VOLUME_EXTEND',
  'COMPUTE_IMAGE_TYPE_QCOW2',
  'COMPUTE_IMAGE_TYPE_RAW',
  'HW_CPU_X86_AVX2',
  'HW_CPU_X86_SSE42',
]

/** Standard traits placement syncs at start (the ones cloudctl cares about, not all 345). */
export const STANDARD_TRAITS = [
  'COMPUTE_STATUS_DISABLED',
  'MISC_SHARES_VIA_AGGREGATE',
  'COMPUTE_NODE',
  'HW_CPU_HYPERTHREADING',
  'HW_NUMA_ROOT',
  'HW_CPU_X86_AVX512F',
  'HW_GPU_API_VULKAN',
  'HW_NIC_SRIOV',
  'STORAGE_DISK_SSD',
  ...DEFAULT_COMPUTE_TRAITS,
]

// ---------------------------------------------------------------- the builder

export class CloudBuilder {
  readonly rng: Rng
  readonly now: string
  readonly nowMs: number
  readonly strict: boolean
  readonly requestSpecs: boolean
  readonly defaultTraits: string[]

  readonly cells: CellInfo[] = []
  private readonly cellsByName = new Map<string, CellInfo>()
  readonly flavors = new Map<string, Flavor>()
  private readonly flavorBlobs = new Map<Flavor, string>()
  readonly hosts: HostRec[] = []
  readonly hostsByNode = new Map<string, HostRec>()
  readonly hostsByHost = new Map<string, HostRec[]>()
  readonly instances = new Map<string, InstanceRec>()
  readonly migrations = new Map<string, MigrationRec>()
  readonly providers = new Map<string, ProviderRec>()
  private readonly providerList: ProviderRec[] = []

  private readonly services: Service[] = []
  private readonly computeNodes: ComputeNode[] = []
  private readonly instanceRows: Instance[] = []
  private readonly migrationRows: Migration[] = []
  private readonly hostMappings: HostMapping[] = []
  private readonly hostMappingByHost = new Map<string, HostMapping>()
  private readonly instanceMappings: InstanceMapping[] = []
  private readonly aggregates: Aggregate[] = []
  readonly aggregatesByName = new Map<string, Aggregate>()
  private readonly aggregateHosts = new Map<Aggregate, Set<string>>()
  private readonly placementAggIdByUuid = new Map<string, number>()
  private readonly placementAggs: Array<{id: number; uuid: string | null}> = []
  private readonly groups: InstanceGroup[] = []
  private readonly requestSpecRows: Array<{instance_uuid: string; spec: string}> = []

  /** consumer uuid -> allocations (ids assigned at build()) */
  readonly allocations = new Map<string, Array<{rp: ProviderRec; rc: number; used: number}>>()
  readonly consumers = new Map<string, Consumer>()
  private readonly projects = new Map<string, number>()
  private readonly users = new Map<string, number>()
  private readonly traitIds = new Map<string, number>()
  private readonly customRcs = new Map<string, number>()

  private seq = {service: 0, cn: 0, inst: 0, mig: 0, rp: 0, inv: 0, hm: 0, im: 0, agg: 0, pagg: 0, consumer: 0, flavor: 0, group: 0, project: 0, user: 0}
  readonly defaultProject: string
  readonly defaultUser: string
  private readonly imageId: string

  constructor(opts: CloudBuilderOptions = {}) {
    this.rng = new Rng(opts.seed ?? 1)
    this.now = opts.now ?? DEFAULT_NOW
    this.nowMs = parseTs(this.now)
    this.strict = opts.strict ?? true
    this.requestSpecs = opts.requestSpecs ?? true
    this.defaultTraits = opts.defaultTraits ?? DEFAULT_COMPUTE_TRAITS
    for (const t of [...STANDARD_TRAITS, ...this.defaultTraits]) this.traitId(t)
    this.defaultProject = this.rng.hex(32)
    this.defaultUser = this.rng.hex(32)
    this.imageId = this.rng.uuid()
    this.addCellRow('cell0', CELL0_UUID)
  }

  // ------------------------------------------------------------ ids

  newUuid(): string {
    return this.rng.uuid()
  }

  /** A keystone-style id (32 hex). */
  newProjectId(): string {
    return this.rng.hex(32)
  }

  ago(seconds: number): string {
    return formatTs(this.nowMs - seconds * 1000)
  }

  traitId(name: string): number {
    let id = this.traitIds.get(name)
    if (id === undefined) this.traitIds.set(name, (id = this.traitIds.size + 1))
    return id
  }

  /** Id of a standard class, or of a CUSTOM_* class (registered on first use). */
  rcId(name: string): number {
    const std = (STANDARD_RESOURCE_CLASSES as readonly string[]).indexOf(name)
    if (std >= 0) return std
    if (!name.startsWith('CUSTOM_')) throw new Error(`unknown resource class ${name}`)
    let id = this.customRcs.get(name)
    if (id === undefined) this.customRcs.set(name, (id = CUSTOM_RESOURCE_CLASS_MIN_ID + this.customRcs.size))
    return id
  }

  rcName(id: number): string {
    if (id < CUSTOM_RESOURCE_CLASS_MIN_ID) return STANDARD_RESOURCE_CLASSES[id]
    for (const [n, i] of this.customRcs) if (i === id) return n
    return `UNKNOWN_RC_${id}`
  }

  private projectRow(external: string): number {
    let id = this.projects.get(external)
    if (id === undefined) this.projects.set(external, (id = ++this.seq.project))
    return id
  }

  private userRow(external: string): number {
    let id = this.users.get(external)
    if (id === undefined) this.users.set(external, (id = ++this.seq.user))
    return id
  }

  // ------------------------------------------------------------ cells

  private addCellRow(name: string, uuid: string): CellInfo {
    const id = this.cells.length + 1
    const cell0 = uuid === CELL0_UUID
    const db = cell0 ? 'nova_cell0' : `nova_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`
    const cell: CellInfo = {
      id,
      uuid,
      name,
      database_connection: `mysql+pymysql://nova:***@10.0.0.${4 + id}/${db}?charset=utf8`,
      transport_url: cell0 ? 'none:///' : `rabbit://nova:***@10.0.0.${4 + id}:5672/`,
      disabled: false,
      is_cell0: cell0,
      status: 'available',
    }
    this.cells.push(cell)
    this.cellsByName.set(name, cell)
    return cell
  }

  addCell(name: string, opts: {uuid?: string} = {}): CellInfo {
    if (this.cellsByName.has(name)) throw new Error(`cell ${name} exists`)
    return this.addCellRow(name, opts.uuid ?? this.rng.uuid())
  }

  cell(name: string): CellInfo {
    const c = this.cellsByName.get(name) ?? this.cells.find((x) => x.uuid === name)
    if (!c) throw new Error(`no cell ${name}`)
    return c
  }

  get cell0(): CellInfo {
    return this.cells[0]
  }

  // ------------------------------------------------------------ flavors

  addFlavor(spec: FlavorSpec): Flavor {
    if (this.flavors.has(spec.name)) throw new Error(`flavor ${spec.name} exists`)
    const f: Flavor = {
      id: ++this.seq.flavor,
      flavorid: spec.flavorid ?? this.rng.uuid(),
      name: spec.name,
      memory_mb: spec.memory_mb,
      vcpus: spec.vcpus,
      swap: spec.swap ?? 0,
      root_gb: spec.root_gb ?? 0,
      ephemeral_gb: spec.ephemeral_gb ?? 0,
      rxtx_factor: 1,
      // The API never sets it: NULL in the row (the embedded flavor object says 0).
      vcpu_weight: null,
      disabled: false,
      is_public: spec.is_public ?? true,
      description: spec.description ?? null,
      extra_specs: {...(spec.extra_specs ?? {})},
    }
    this.flavors.set(f.name, f)
    return f
  }

  flavor(name: string): Flavor {
    const f = this.flavors.get(name)
    if (!f) throw new Error(`no flavor ${name}`)
    return f
  }

  private readonly resCache = new Map<string, FlavorResources>()

  /** flavorResources, memoised per flavor and boot source (the generator boots 300k instances). */
  resourcesOf(f: Flavor, bootFromVolume: boolean): FlavorResources {
    const key = `${f.id}/${bootFromVolume ? 1 : 0}`
    let r = this.resCache.get(key)
    if (!r) this.resCache.set(key, (r = flavorResources(f, bootFromVolume)))
    return r
  }

  /** The instance_extra.flavor text for an instance of this flavor (one shared string per flavor). */
  flavorBlob(f: Flavor): string {
    let s = this.flavorBlobs.get(f)
    if (s === undefined) this.flavorBlobs.set(f, (s = instanceFlavorBlob(f)))
    return s
  }

  // ------------------------------------------------------------ providers

  private newProvider(uuid: string, name: string, parent: ProviderRec | null): ProviderRec {
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
  private setInventories(rp: ProviderRec, invs: Record<string, Partial<Inventory> & {total: number}>): void {
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
        allocation_ratio: floatColumn(inv.allocation_ratio ?? 1),
      })
    }
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  private setTraits(rp: ProviderRec, traits: string[]): void {
    if (traits.length === 0) return
    for (const t of traits) rp.traits.add(this.traitId(t))
    rp.row.generation = (rp.row.generation ?? 0) + 1
  }

  private linkAggregate(rp: ProviderRec, aggUuid: string): void {
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

  provider(uuidOrName: string): ProviderRec {
    const byUuid = this.providers.get(uuidOrName)
    if (byUuid) return byUuid
    const byNode = this.hostsByNode.get(uuidOrName)
    if (byNode) return byNode.rp
    const byName = this.providerList.find((p) => p.row.name === uuidOrName)
    if (!byName) throw new Error(`no provider ${uuidOrName}`)
    return byName
  }

  /** A nested provider under a host's root (PCI/SRIOV PF, VGPU pGPU). */
  addChildProvider(hostOrNode: string, spec: ChildProviderSpec): ProviderRec {
    const parent = this.hostRec(hostOrNode).rp
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

  // ------------------------------------------------------------ hosts

  private defaultNuma(vcpus: number, memoryMb: number, dedicated: number[]): HostNumaCellState[] {
    const nCells = vcpus >= 4 ? 2 : 1
    const per = Math.ceil(vcpus / nCells)
    const ded = new Set(dedicated)
    const cells: HostNumaCellState[] = []
    for (let c = 0; c < nCells; c++) {
      const cpus: number[] = []
      for (let i = c * per; i < Math.min(vcpus, (c + 1) * per); i++) cpus.push(i)
      // siblings: pairs of consecutive CPUs, as a 2-thread core reports
      const siblings: number[][] = []
      for (let i = 0; i + 1 < cpus.length; i += 2) siblings.push([cpus[i], cpus[i + 1]])
      cells.push({
        id: c,
        cpuset: cpus.filter((x) => !ded.has(x)),
        pcpuset: cpus.filter((x) => ded.has(x)),
        memory: Math.floor(memoryMb / nCells),
        siblings,
        pinned: new Set(),
        cpuUsage: 0,
        memoryUsage: 0,
      })
    }
    return cells
  }

  addHost(cellName: string, spec: HostSpec): HostRec {
    const cell = this.cell(cellName)
    if (cell.is_cell0) throw new Error('cell0 has no computes')
    const node = spec.hypervisor_hostname ?? spec.host
    if (this.hostsByNode.has(node)) throw new Error(`node ${node} exists`)
    let numa: HostNumaCellState[]
    if (spec.numa) {
      numa = spec.numa.cells.map((c, i) => ({
        id: i,
        cpuset: [...c.cpuset],
        pcpuset: [...(c.pcpuset ?? [])],
        memory: c.memory,
        siblings: (c.siblings ?? []).map((s) => [...s]),
        pinned: new Set(),
        cpuUsage: 0,
        memoryUsage: 0,
      }))
    } else {
      numa = this.defaultNuma(spec.vcpus, spec.memory_mb, spec.cpu_dedicated_set ? parseCpuSet(spec.cpu_dedicated_set) : [])
    }
    const shared = numa.reduce((n, c) => n + c.cpuset.length, 0)
    const dedicated = numa.reduce((n, c) => n + c.pcpuset.length, 0)
    if (spec.numa && shared + dedicated !== spec.vcpus) throw new Error(`host ${spec.host}: vcpus ${spec.vcpus} != NUMA cpus ${shared + dedicated}`)
    const reservedMem = spec.reserved_host_memory_mb ?? 512
    const created = spec.created_at ?? formatTs(this.nowMs - 400 * 86400_000)
    const lastSeen = spec.down ? this.ago(3600) : this.ago(10)
    const service: Service = {
      cell_uuid: cell.uuid,
      id: ++this.seq.service,
      uuid: this.rng.uuid(),
      host: spec.host,
      binary: 'nova-compute',
      topic: 'compute',
      report_count: 345600 + this.seq.service,
      disabled: spec.disabled ?? false,
      disabled_reason: spec.disabled ? (spec.disabled_reason ?? 'maintenance') : null,
      forced_down: spec.forced_down ?? false,
      last_seen_up: lastSeen,
      version: 61,
      deleted: 0,
      deleted_at: null,
      created_at: created,
      updated_at: lastSeen,
    }
    const uuid = spec.uuid ?? this.rng.uuid()
    const cpuRatio = spec.cpu_allocation_ratio ?? 16
    const ramRatio = spec.ram_allocation_ratio ?? 1.5
    const diskRatio = spec.disk_allocation_ratio ?? 1
    const cn: ComputeNode = {
      cell_uuid: cell.uuid,
      id: ++this.seq.cn,
      uuid,
      // nova's resource tracker never sets it (nullable since ComputeNode 1.13): nodes match services by host.
      service_id: null,
      host: spec.host,
      hypervisor_hostname: node,
      hypervisor_type: 'QEMU',
      hypervisor_version: 6002000,
      host_ip: spec.host_ip ?? `10.1.${(this.seq.cn >> 8) & 255}.${this.seq.cn & 255}`,
      vcpus: shared,
      memory_mb: spec.memory_mb,
      local_gb: spec.local_gb,
      vcpus_used: 0,
      memory_mb_used: reservedMem,
      local_gb_used: 0,
      free_ram_mb: spec.memory_mb - reservedMem,
      free_disk_gb: spec.local_gb,
      disk_available_least: spec.local_gb,
      current_workload: 0,
      running_vms: 0,
      cpu_allocation_ratio: floatColumn(cpuRatio),
      ram_allocation_ratio: floatColumn(ramRatio),
      disk_allocation_ratio: floatColumn(diskRatio),
      cpu_info: cpuInfo(numa.length, spec.vcpus, numa.some((c) => c.siblings.length > 0) ? 2 : 1),
      supported_instances: SUPPORTED_INSTANCES,
      pci_stats: PCI_STATS_EMPTY,
      stats: null,
      numa_topology: null,
      mapped: 1,
      deleted: 0,
      deleted_at: null,
      created_at: created,
      updated_at: lastSeen,
    }
    const rp = this.newProvider(uuid, node, null)
    const invs: Record<string, Partial<Inventory> & {total: number}> = {}
    if (shared > 0) invs.VCPU = {total: shared, allocation_ratio: cpuRatio}
    if (dedicated > 0) invs.PCPU = {total: dedicated, allocation_ratio: 1}
    invs.MEMORY_MB = {total: spec.memory_mb, reserved: reservedMem, allocation_ratio: ramRatio}
    if (!spec.shared_storage && spec.local_gb > 0) invs.DISK_GB = {total: spec.local_gb, reserved: spec.reserved_host_disk_gb ?? 0, allocation_ratio: diskRatio}
    this.setInventories(rp, invs)
    const traits = [...this.defaultTraits, ...(spec.traits ?? [])]
    if (spec.disabled) traits.push('COMPUTE_STATUS_DISABLED')
    this.setTraits(rp, traits)
    const rec: HostRec = {
      cell,
      host: spec.host,
      node,
      az: null,
      ironic: false,
      service,
      cn,
      rp,
      numa,
      reservedMemoryMb: reservedMem,
      reservedDiskGb: spec.reserved_host_disk_gb ?? 0,
      vcpusUsed: 0,
      memoryUsed: 0,
      diskUsed: 0,
      swapMbUsed: 0,
      stats: new Map(),
      threads: 2,
    }
    this.registerHost(rec)
    if (spec.az) this.joinAz(rec, spec.az)
    for (const a of spec.aggregates ?? []) this.addHostToAggregate(a, spec.host)
    return rec
  }

  private registerHost(rec: HostRec): void {
    this.services.push(rec.service)
    this.computeNodes.push(rec.cn)
    this.hosts.push(rec)
    this.hostsByNode.set(rec.node, rec)
    const list = this.hostsByHost.get(rec.host)
    if (list) list.push(rec)
    else this.hostsByHost.set(rec.host, [rec])
    if (!this.hostMappingByHost.has(rec.host)) {
      const hm: HostMapping = {id: ++this.seq.hm, cell_id: rec.cell.id, host: rec.host}
      this.hostMappings.push(hm)
      this.hostMappingByHost.set(rec.host, hm)
    }
  }

  /** An ironic node: its own compute node and root provider (name = node uuid), one unit of CUSTOM_<rc>. */
  addIronicNode(cellName: string, spec: IronicNodeSpec): HostRec {
    const cell = this.cell(cellName)
    const host = spec.host ?? 'ironic-compute-1'
    const uuid = spec.uuid ?? this.rng.uuid()
    let service = this.hostsByHost.get(host)?.[0]?.service
    const newService = !service
    if (!service) {
      service = {
        cell_uuid: cell.uuid,
        id: ++this.seq.service,
        uuid: this.rng.uuid(),
        host,
        binary: 'nova-compute',
        topic: 'compute',
        report_count: 345600,
        disabled: false,
        disabled_reason: null,
        forced_down: false,
        last_seen_up: this.ago(10),
        version: 61,
        deleted: 0,
        deleted_at: null,
        created_at: this.ago(400 * 86400),
        updated_at: this.ago(10),
      }
    }
    const rcName = spec.resource_class.startsWith('CUSTOM_') ? spec.resource_class : `CUSTOM_${spec.resource_class}`
    const cn: ComputeNode = {
      cell_uuid: cell.uuid,
      id: ++this.seq.cn,
      uuid,
      // nova's resource tracker never sets it (nullable since ComputeNode 1.13): nodes match services by host.
      service_id: null,
      host,
      hypervisor_hostname: uuid,
      hypervisor_type: 'ironic',
      hypervisor_version: 1,
      host_ip: `10.2.0.${this.seq.cn & 255}`,
      vcpus: spec.cpus,
      memory_mb: spec.memory_mb,
      local_gb: spec.local_gb,
      vcpus_used: 0,
      memory_mb_used: 0,
      local_gb_used: 0,
      free_ram_mb: spec.memory_mb,
      free_disk_gb: spec.local_gb,
      disk_available_least: spec.local_gb,
      current_workload: 0,
      running_vms: 0,
      cpu_allocation_ratio: floatColumn(1),
      ram_allocation_ratio: floatColumn(1),
      disk_allocation_ratio: floatColumn(1),
      cpu_info: '',
      supported_instances: pyDumps([['x86_64', 'baremetal', 'hvm']]),
      pci_stats: PCI_STATS_EMPTY,
      stats: null,
      numa_topology: null,
      mapped: 1,
      deleted: 0,
      deleted_at: null,
      created_at: this.ago(200 * 86400),
      updated_at: this.ago(10),
    }
    const rp = this.newProvider(uuid, uuid, null)
    this.setInventories(rp, {[rcName]: {total: 1, max_unit: 1}})
    const rec: HostRec = {
      cell,
      host,
      node: uuid,
      az: null,
      ironic: true,
      service,
      cn,
      rp,
      numa: null,
      reservedMemoryMb: 0,
      reservedDiskGb: 0,
      vcpusUsed: 0,
      memoryUsed: 0,
      diskUsed: 0,
      swapMbUsed: 0,
      stats: new Map(),
      threads: 1,
    }
    if (newService) this.services.push(service)
    this.computeNodes.push(cn)
    this.hosts.push(rec)
    this.hostsByNode.set(uuid, rec)
    const list = this.hostsByHost.get(host)
    if (list) list.push(rec)
    else this.hostsByHost.set(host, [rec])
    if (!this.hostMappingByHost.has(host)) {
      const hm: HostMapping = {id: ++this.seq.hm, cell_id: cell.id, host}
      this.hostMappings.push(hm)
      this.hostMappingByHost.set(host, hm)
    }
    if (spec.az) this.joinAz(rec, spec.az)
    return rec
  }

  /** A host or node by name: node name first, then a host with exactly one node. */
  hostRec(hostOrNode: string, node?: string): HostRec {
    if (node !== undefined) {
      const r = this.hostsByNode.get(node)
      if (!r || r.host !== hostOrNode) throw new Error(`no node ${node} on host ${hostOrNode}`)
      return r
    }
    const byNode = this.hostsByNode.get(hostOrNode)
    if (byNode) return byNode
    const list = this.hostsByHost.get(hostOrNode)
    if (!list || list.length === 0) throw new Error(`no host ${hostOrNode}`)
    if (list.length > 1) throw new Error(`host ${hostOrNode} has ${list.length} nodes: name one`)
    return list[0]
  }

  // ------------------------------------------------------------ aggregates

  addAggregate(spec: AggregateSpec): Aggregate {
    if (this.aggregatesByName.has(spec.name)) throw new Error(`aggregate ${spec.name} exists`)
    const agg: Aggregate = {id: ++this.seq.agg, uuid: spec.uuid ?? this.rng.uuid(), name: spec.name, hosts: [], metadata: {...(spec.metadata ?? {})}}
    this.aggregates.push(agg)
    this.aggregatesByName.set(spec.name, agg)
    for (const h of spec.hosts ?? []) this.addHostToAggregate(spec.name, h)
    return agg
  }

  /** nova's `aggregate add host`: the nova_api row and the placement aggregate on every node of the host. */
  addHostToAggregate(aggName: string, host: string): void {
    const agg = this.aggregatesByName.get(aggName)
    if (!agg) throw new Error(`no aggregate ${aggName}`)
    const recs = this.hostsByHost.get(host)
    if (!recs) throw new Error(`no host ${host}`)
    let members = this.aggregateHosts.get(agg)
    if (!members) this.aggregateHosts.set(agg, (members = new Set(agg.hosts)))
    if (!members.has(host)) {
      members.add(host)
      agg.hosts.push(host)
    }
    for (const r of recs) {
      this.linkAggregate(r.rp, agg.uuid as string)
      if (agg.metadata.availability_zone) r.az = agg.metadata.availability_zone
    }
  }

  private joinAz(rec: HostRec, az: string): void {
    if (!this.aggregatesByName.has(az)) this.addAggregate({name: az, metadata: {availability_zone: az}})
    this.addHostToAggregate(az, rec.host)
  }

  addServerGroup(spec: ServerGroupSpec): InstanceGroup {
    const g: InstanceGroup = {
      id: ++this.seq.group,
      uuid: spec.uuid ?? this.rng.uuid(),
      name: spec.name,
      project_id: spec.project ?? this.defaultProject,
      user_id: spec.user ?? this.defaultUser,
      policies: [{policy: spec.policy, rules: spec.rules ? JSON.stringify(spec.rules) : null}],
      members: [...(spec.members ?? [])],
    }
    this.groups.push(g)
    return g
  }

  serverGroup(name: string): InstanceGroup {
    const g = this.groups.find((x) => x.name === name || x.uuid === name)
    if (!g) throw new Error(`no server group ${name}`)
    return g
  }

  // ------------------------------------------------------------ placement writes

  private capacity(inv: Inventory): number {
    return (inv.total - inv.reserved) * inv.allocation_ratio
  }

  /** The provider of a host's tree (or a sharing provider of its aggregates) that can take `amount` of `rc`. */
  private pickProvider(h: HostRec, rc: number, amount: number, force: boolean): ProviderRec {
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
  private resolve(h: HostRec, resources: Record<string, number>, force: boolean): Array<{rp: ProviderRec; rc: number; used: number}> {
    const out: Array<{rp: ProviderRec; rc: number; used: number}> = []
    for (const [name, amount] of Object.entries(resources)) {
      const rc = this.rcId(name)
      out.push({rp: this.pickProvider(h, rc, amount, force || !this.strict), rc, used: amount})
    }
    return out
  }

  /**
   * `type` is what the consumer is (instance or migration); nova 26 does not send it (placement 1.38
   * consumer types), so placement stores consumer_type_id NULL and no consumer_types rows, as here.
   */
  private ensureConsumer(uuid: string, project: string, user: string, _type: number): Consumer {
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

  // ------------------------------------------------------------ instances

  private statBump(h: HostRec, key: string, by: number): void {
    h.stats.set(key, (h.stats.get(key) ?? 0) + by)
  }

  /** The resource tracker's instance accounting (Stats.update_stats_for_instance + _update_usage). */
  private trackInstance(h: HostRec, inst: Instance, sign: 1 | -1): void {
    this.statBump(h, 'num_instances', sign)
    this.statBump(h, `num_task_${inst.task_state ?? 'None'}`, sign)
    this.statBump(h, `num_vm_${inst.vm_state ?? 'None'}`, sign)
    this.statBump(h, `num_os_type_${inst.os_type ?? 'None'}`, sign)
    this.statBump(h, `num_proj_${inst.project_id ?? 'None'}`, sign)
    if (inst.vm_state === 'building' || IO_TASK_STATES.has(inst.task_state ?? '')) this.statBump(h, 'io_workload', sign)
  }

  private trackUsage(h: HostRec, f: Flavor, sign: 1 | -1, bootFromVolume = false): void {
    h.vcpusUsed += sign * f.vcpus
    h.memoryUsed += sign * f.memory_mb
    h.diskUsed += sign * ((bootFromVolume ? 0 : (f.root_gb ?? 0)) + (f.ephemeral_gb ?? 0))
    h.swapMbUsed += sign * f.swap
  }

  /** Choose pCPUs and NUMA cells for an instance on a host (nova's hardware.numa_fit_instance_to_host, simplified: first fit). */
  private fitNuma(h: HostRec, inst: InstanceRec, explicitPins: number[] | undefined, force: boolean): InstanceNumaCellSpec[] | null {
    const f = inst.flavor
    const res = inst.res
    const wantsNuma = res.cpuPolicy !== 'shared' || f.extra_specs['hw:numa_nodes'] !== undefined
    if (!wantsNuma) return null
    if (!h.numa) throw new Error(`${h.node} has no NUMA topology`)
    const dedicated = new Set(res.dedicated)
    const sharedVcpus: number[] = []
    for (let v = 0; v < f.vcpus; v++) if (!dedicated.has(v)) sharedVcpus.push(v)
    const needPins = res.dedicated.length + (res.isolateEmulator ? 1 : 0)
    let cell: HostNumaCellState | undefined
    let chosen: number[] = []
    if (explicitPins) {
      if (explicitPins.length !== needPins) throw new Error(`instance needs ${needPins} pCPUs, ${explicitPins.length} given`)
      cell = h.numa.find((c) => explicitPins.every((p) => c.pcpuset.includes(p) || c.cpuset.includes(p))) ?? h.numa[0]
      chosen = [...explicitPins]
      if (!force && this.strict && chosen.some((p) => !cell?.pcpuset.includes(p) || cell.pinned.has(p))) throw new Error(`${h.node}: pCPUs ${chosen} not free in the dedicated set`)
    } else {
      for (const c of h.numa) {
        const free = c.pcpuset.filter((p) => !c.pinned.has(p))
        const memFree = c.memory - c.memoryUsage
        if (free.length >= needPins && (force || memFree >= f.memory_mb)) {
          cell = c
          chosen = free.slice(0, needPins)
          break
        }
      }
      if (!cell) {
        if (!force && this.strict) throw new Error(`${h.node}: no NUMA cell with ${needPins} free dedicated pCPUs (NUMATopologyFilter would reject it)`)
        cell = h.numa[0]
        chosen = cell.pcpuset.slice(0, needPins)
      }
    }
    const pinning = new Map<number, number>()
    res.dedicated.forEach((v, i) => pinning.set(v, chosen[i]))
    const reserved = res.isolateEmulator ? [chosen[chosen.length - 1]] : null
    for (const p of chosen) cell.pinned.add(p)
    cell.cpuUsage += sharedVcpus.length
    cell.memoryUsage += f.memory_mb
    inst.pins.set(cell.id, chosen)
    inst.numaUsage.set(cell.id, [sharedVcpus.length, f.memory_mb])
    // after fitting, nova numbers the instance cell with the id of the host cell it landed on
    return [
      {
        id: cell.id,
        cpuset: sharedVcpus,
        pcpuset: [...res.dedicated],
        cpuset_reserved: reserved,
        memory: f.memory_mb,
        cpu_pinning: res.dedicated.length > 0 ? pinning : null,
        cpu_policy: res.cpuPolicy === 'shared' ? null : res.cpuPolicy,
        cpu_thread_policy: f.extra_specs['hw:cpu_thread_policy'] ?? null,
      },
    ]
  }

  /**
   * Boot an instance on a host the way a successful boot leaves the databases: instance row,
   * instance_extra, instance mapping, request spec, consumer and allocations, tracker usage and pins.
   */
  addInstance(hostOrNode: string, flavorName: string, spec: InstanceSpec = {}): InstanceRec {
    const h = this.hostRec(hostOrNode, spec.node)
    const f = this.flavor(flavorName)
    const bfv = spec.boot_from_volume ?? false
    const res = this.resourcesOf(f, bfv)
    const uuid = spec.uuid ?? this.rng.uuid()
    if (this.instances.has(uuid)) throw new Error(`instance ${uuid} exists`)
    const project = spec.project ?? this.defaultProject
    const user = spec.user ?? this.defaultUser
    const force = spec.force ?? false
    const allocs = this.resolve(h, res.resources, force)
    const vmState = spec.vm_state ?? 'active'
    const created = spec.created_at ?? formatTs(this.nowMs - (3600 + (this.seq.inst % 500) * 86400) * 1000)
    const id = ++this.seq.inst
    const row: Instance = {
      cell_uuid: h.cell.uuid,
      id,
      uuid,
      host: h.host,
      node: h.node,
      vm_state: vmState,
      task_state: spec.task_state ?? null,
      power_state: spec.power_state ?? (vmState === 'active' ? 1 : vmState === 'stopped' ? 4 : 0),
      project_id: project,
      user_id: user,
      instance_type_id: f.id,
      vcpus: f.vcpus,
      memory_mb: f.memory_mb,
      root_gb: f.root_gb,
      ephemeral_gb: f.ephemeral_gb,
      // conductor records the host's AZ, or [DEFAULT] default_availability_zone
      availability_zone: spec.az !== undefined ? spec.az : (h.az ?? 'nova'),
      display_name: spec.display_name ?? `vm-${id}`,
      image_ref: bfv ? '' : this.imageId,
      os_type: spec.os_type ?? 'linux',
      architecture: 'x86_64',
      launched_at: created,
      terminated_at: null,
      created_at: created,
      updated_at: created,
      deleted: 0,
      deleted_at: null,
      hidden: false,
      extra: {numa_topology: null, pci_requests: '[]', flavor: this.flavorBlob(f)},
    }
    const mapping: InstanceMapping = {id: ++this.seq.im, instance_uuid: uuid, cell_id: h.cell.id, project_id: project, user_id: user, queued_for_delete: false, created_at: created}
    const rec: InstanceRec = {row, flavor: f, res, bootFromVolume: bfv, hostRec: h, pins: new Map(), numaUsage: new Map(), mapping, numaCells: null}
    const numaCells = this.fitNuma(h, rec, spec.pin, force)
    rec.numaCells = numaCells
    if (numaCells && row.extra) row.extra.numa_topology = instanceNumaTopologyBlob(numaCells)
    this.instances.set(uuid, rec)
    this.instanceRows.push(row)
    this.instanceMappings.push(mapping)
    let groupUuid: string | null = null
    if (spec.server_group) {
      const g = this.serverGroup(spec.server_group)
      g.members.push(uuid)
      groupUuid = g.uuid
    }
    if (this.requestSpecs) {
      this.requestSpecRows.push({
        instance_uuid: uuid,
        spec: requestSpecBlob({instanceUuid: uuid, flavor: f, projectId: project, userId: user, az: spec.az ?? null, imageId: bfv ? null : this.imageId, groupUuid}),
      })
    }
    this.putAllocations(uuid, project, user, CONSUMER_TYPE_INSTANCE, allocs)
    if (!NOT_ON_HOST.has(vmState)) {
      this.trackInstance(h, row, 1)
      this.trackUsage(h, f, 1, bfv)
    }
    return rec
  }

  instance(uuid: string): InstanceRec {
    const r = this.instances.get(uuid)
    if (!r) throw new Error(`no instance ${uuid}`)
    return r
  }

  /** Undo an instance's claims on its host: tracker usage, stats, pins and NUMA usage. */
  private untrack(rec: InstanceRec): void {
    const h = rec.hostRec
    if (!h) return
    if (!NOT_ON_HOST.has(rec.row.vm_state ?? '')) {
      this.trackInstance(h, rec.row, -1)
      this.trackUsage(h, rec.flavor, -1, rec.bootFromVolume)
    }
    for (const [cellId, pins] of rec.pins) {
      const c = h.numa?.find((x) => x.id === cellId)
      if (c) for (const p of pins) c.pinned.delete(p)
    }
    for (const [cellId, [cpu, mem]] of rec.numaUsage) {
      const c = h.numa?.find((x) => x.id === cellId)
      if (c) {
        c.cpuUsage -= cpu
        c.memoryUsage -= mem
      }
    }
    rec.pins.clear()
    rec.numaUsage.clear()
  }

  /**
   * `openstack server delete` as nova does it: the row is soft-deleted (deleted = id), allocations go,
   * the mapping is queued for delete, the tracker forgets the instance. Options leave parts undone,
   * which is how leaks happen (host died: `keepAllocations`, `keepTracked`).
   */
  deleteInstance(uuid: string, opts: {keepAllocations?: boolean; keepTracked?: boolean; at?: string} = {}): InstanceRec {
    const rec = this.instance(uuid)
    const at = opts.at ?? this.ago(86400)
    if (!opts.keepTracked) this.untrack(rec)
    rec.row.deleted = rec.row.id
    rec.row.deleted_at = at
    rec.row.terminated_at = at
    rec.row.updated_at = at
    rec.row.vm_state = 'deleted'
    rec.row.task_state = null
    rec.row.power_state = 0
    rec.mapping.queued_for_delete = true
    if (!opts.keepAllocations) {
      const c = this.consumers.get(uuid)
      if (c) this.putAllocations(uuid, '', '', CONSUMER_TYPE_INSTANCE, [])
    }
    return rec
  }

  // ------------------------------------------------------------ migrations

  /**
   * A move of an instance. In progress (status not done): the source keeps its allocation under the
   * migration uuid, the destination is held by the instance; both nodes' trackers count it. Done
   * statuses leave the instance on the destination (confirmed/completed/done) or the source
   * (reverted/error/failed/cancelled) holding only its own allocation there.
   */
  addMigration(instanceUuid: string, spec: MigrationSpec): MigrationRec {
    const inst = this.instance(instanceUuid)
    const source = inst.hostRec
    if (!source) throw new Error(`instance ${instanceUuid} has no host`)
    const dest = this.hostRec(spec.dest, spec.dest_node)
    if (dest.cell !== source.cell) throw new Error('cross-cell moves are not built')
    if (inst.pins.size > 0 && !MIGRATION_DONE.has(spec.status)) throw new Error('in-progress moves of pinned instances are not built (their claims live in migration_context)')
    const newFlavor = spec.new_flavor ? this.flavor(spec.new_flavor) : inst.flavor
    const uuid = spec.uuid ?? this.rng.uuid()
    const at = this.ago(1800)
    const row: Migration = {
      cell_uuid: source.cell.uuid,
      id: ++this.seq.mig,
      uuid,
      instance_uuid: instanceUuid,
      source_compute: source.host,
      dest_compute: dest.host,
      dest_host: dest.cn.host_ip,
      source_node: source.node,
      dest_node: dest.node,
      status: spec.status,
      migration_type: spec.type,
      old_instance_type_id: inst.flavor.id,
      new_instance_type_id: newFlavor.id,
      hidden: false,
      cross_cell_move: false,
      deleted: 0,
      created_at: at,
      updated_at: at,
    }
    const rec: MigrationRec = {row, inst, source, dest, newFlavor, alsoTrackedOn: null}
    const oldFlavor = inst.flavor
    this.migrations.set(uuid, rec)
    this.migrationRows.push(row)
    const project = inst.row.project_id ?? this.defaultProject
    const user = inst.row.user_id ?? this.defaultUser
    const srcAllocs = this.allocations.get(instanceUuid) ?? []
    const newRes = flavorResources(newFlavor, inst.bootFromVolume)
    const done = MIGRATION_DONE.has(spec.status)
    const failed = ['reverted', 'error', 'failed', 'cancelled'].includes(spec.status)
    if (!done) {
      if (spec.type === 'evacuation') {
        // evacuation: the instance consumer holds both source and destination (no migration consumer)
        const destAllocs = this.resolve(dest, newRes.resources, false)
        this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, [...srcAllocs, ...destAllocs])
      } else {
        this.putAllocations(uuid, project, user, CONSUMER_TYPE_MIGRATION, srcAllocs.map((a) => ({...a})))
        // the source claim moves to the migration consumer before the destination is claimed
        const destAllocs = this.resolve(dest, newRes.resources, false)
        this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, destAllocs)
      }
      // the instance stays on the source until the move finishes ('finished' = waiting for resize confirm)
      const onDest = spec.status === 'finished' || spec.status === 'confirming'
      const other = onDest ? source : dest
      if (onDest) this.moveInstanceRow(inst, dest, newFlavor)
      this.trackUsage(other, onDest ? oldFlavor : newFlavor, 1)
      rec.alsoTrackedOn = other
      // prep_resize sets old_flavor/new_flavor; finish_resize makes the new one current
      if (spec.type !== 'evacuation' && spec.type !== 'live-migration' && inst.row.extra) {
        inst.row.extra.flavor = instanceFlavorBlob(onDest ? newFlavor : oldFlavor, oldFlavor, newFlavor)
      }
    } else if (!failed) {
      const destAllocs = this.resolve(dest, newRes.resources, false)
      this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, destAllocs)
      this.moveInstanceRow(inst, dest, newFlavor)
    }
    return rec
  }

  private moveInstanceRow(inst: InstanceRec, dest: HostRec, flavor: Flavor): void {
    this.untrack(inst)
    inst.hostRec = dest
    inst.row.host = dest.host
    inst.row.node = dest.node
    inst.row.cell_uuid = dest.cell.uuid
    if (flavor !== inst.flavor) {
      inst.flavor = flavor
      inst.res = flavorResources(flavor, inst.bootFromVolume)
      inst.row.instance_type_id = flavor.id
      inst.row.vcpus = flavor.vcpus
      inst.row.memory_mb = flavor.memory_mb
      inst.row.root_gb = flavor.root_gb
      inst.row.ephemeral_gb = flavor.ephemeral_gb
      if (inst.row.extra) inst.row.extra.flavor = this.flavorBlob(flavor)
    }
    if (inst.row.extra?.numa_topology) {
      const cells = this.fitNuma(dest, inst, undefined, false)
      inst.numaCells = cells
      inst.row.extra.numa_topology = cells ? instanceNumaTopologyBlob(cells) : null
    }
    if (!NOT_ON_HOST.has(inst.row.vm_state ?? '')) {
      this.trackInstance(dest, inst.row, 1)
      this.trackUsage(dest, flavor, 1, inst.bootFromVolume)
    }
  }

  // ------------------------------------------------------------ operator actions and accidents

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
    this.putAllocations(consumer, project, user, opts.type ?? CONSUMER_TYPE_INSTANCE, [...(this.allocations.get(consumer) ?? []).map((a) => ({...a})), ...allocs])
  }

  /** DELETE /allocations/{consumer} */
  removeAllocations(consumer: string): void {
    if (this.allocations.has(consumer)) this.putAllocations(consumer, '', '', CONSUMER_TYPE_INSTANCE, [])
  }

  externalProject(id: number): string {
    for (const [ext, i] of this.projects) if (i === id) return ext
    throw new Error(`no project row ${id}`)
  }

  externalUser(id: number): string {
    for (const [ext, i] of this.users) if (i === id) return ext
    throw new Error(`no user row ${id}`)
  }

  /** Placement's project/user rows for an external id (created on first use). */
  placementProjectId(external: string): number {
    return this.projectRow(external)
  }

  placementUserId(external: string): number {
    return this.userRow(external)
  }

  /** Remove a provider (and its inventories, traits, aggregate links): DELETE /resource_providers/{uuid}. */
  removeProvider(uuidOrName: string): ProviderRec {
    const rp = this.provider(uuidOrName)
    for (const [consumer, list] of this.allocations) if (list.some((a) => a.rp === rp)) throw new Error(`provider ${rp.row.uuid} has allocations of ${consumer}`)
    this.providers.delete(rp.row.uuid)
    this.providerList.splice(this.providerList.indexOf(rp), 1)
    return rp
  }

  /**
   * `openstack compute service delete`: the service and its compute nodes are soft-deleted. Nova also
   * deletes the host mapping and the providers; `keepProvider` / `keepHostMapping` leave them behind
   * (placement refused because allocations remained; an older nova).
   */
  deleteComputeService(host: string, opts: {keepProvider?: boolean; keepHostMapping?: boolean; at?: string} = {}): HostRec[] {
    const recs = this.hostsByHost.get(host)
    if (!recs) throw new Error(`no host ${host}`)
    const at = opts.at ?? this.ago(7200)
    for (const h of recs) {
      this.finalizeHost(h) // the tracker's last write before the rows died
      h.service.deleted = h.service.id
      h.service.deleted_at = at
      h.cn.deleted = h.cn.id
      h.cn.deleted_at = at
      if (!opts.keepProvider && this.providers.has(h.rp.row.uuid)) {
        for (const child of h.rp.children) this.removeProvider(child.row.uuid)
        this.removeProvider(h.rp.row.uuid)
      }
    }
    if (!opts.keepHostMapping) {
      const hm = this.hostMappingByHost.get(host)
      if (hm) {
        this.hostMappings.splice(this.hostMappings.indexOf(hm), 1)
        this.hostMappingByHost.delete(host)
      }
    }
    return recs
  }

  /**
   * The compute node row is recreated under a new uuid (seed 004: the host's name changed to its
   * FQDN, the old row was deleted and nova-compute restarted): the old row is soft-deleted, the new
   * one has a fresh uuid and no provider, because the old provider still holds the name.
   */
  recreateComputeNode(node: string, opts: {uuid?: string} = {}): {old: ComputeNode; current: ComputeNode} {
    const h = this.hostRec(node)
    this.finalizeHost(h)
    const old = h.cn
    const current: ComputeNode = {...old, id: ++this.seq.cn, uuid: opts.uuid ?? this.rng.uuid(), created_at: this.ago(3600), updated_at: this.ago(10)}
    old.deleted = old.id
    old.deleted_at = this.ago(3700)
    h.cn = current
    this.computeNodes.push(current)
    return {old, current}
  }

  /** Resolve resources to the providers of a host (strict capacity unless forced). */
  resolveOn(hostOrNode: string, resources: Record<string, number>, force = false): Array<{rp: ProviderRec; rc: number; used: number}> {
    return this.resolve(this.hostRec(hostOrNode), resources, force)
  }

  /** A root provider with no compute node behind it (left by a rename, created by hand). */
  addRootProvider(spec: {name: string; uuid?: string; inventories: ChildProviderSpec['inventories']; traits?: string[]}): ProviderRec {
    const rp = this.newProvider(spec.uuid ?? this.rng.uuid(), spec.name, null)
    this.setInventories(rp, spec.inventories)
    this.setTraits(rp, spec.traits ?? [])
    return rp
  }

  /** Change one inventory field of a provider (PUT inventories: one generation bump). */
  updateInventory(uuidOrName: string, rcName: string, patch: Partial<Omit<Inventory, 'id' | 'resource_provider_id' | 'resource_class_id'>>): Inventory {
    const rp = this.provider(uuidOrName)
    const inv = rp.inventories.get(this.rcId(rcName))
    if (!inv) throw new Error(`${rp.row.name} has no ${rcName} inventory`)
    Object.assign(inv, patch)
    if (patch.allocation_ratio !== undefined) inv.allocation_ratio = floatColumn(patch.allocation_ratio)
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

  removeInstanceMapping(uuid: string): InstanceMapping {
    const m = this.instance(uuid).mapping
    const i = this.instanceMappings.indexOf(m)
    if (i < 0) throw new Error(`instance ${uuid} has no mapping`)
    this.instanceMappings.splice(i, 1)
    return m
  }

  removeHostMapping(host: string): HostMapping {
    const hm = this.hostMappingByHost.get(host)
    if (!hm) throw new Error(`host ${host} has no mapping`)
    this.hostMappings.splice(this.hostMappings.indexOf(hm), 1)
    this.hostMappingByHost.delete(host)
    return hm
  }

  /** Rewrite an instance's NUMA topology blob from its (edited) cells. */
  rewriteInstanceNuma(uuid: string, cells: InstanceNumaCellSpec[]): void {
    const rec = this.instance(uuid)
    rec.numaCells = cells
    if (rec.row.extra) rec.row.extra.numa_topology = instanceNumaTopologyBlob(cells)
  }

  /** Next id for a row of a cell table written outside the builder's own operations. */
  nextInstanceId(): number {
    return ++this.seq.inst
  }

  /** Push a raw instance row (a copy left in another cell, a row nova's API never wrote). */
  pushInstanceRow(row: Instance): void {
    this.instanceRows.push(row)
  }

  /** Host NUMA cells as the tracker holds them (pinned_cpus are written from these at build()). */
  numaOf(hostOrNode: string): HostNumaCellState[] {
    const n = this.hostRec(hostOrNode).numa
    if (!n) throw new Error(`${hostOrNode} has no NUMA topology`)
    return n
  }

  // ------------------------------------------------------------ build

  /** Write the per-host columns and blobs the resource tracker would have written. */
  finalizeHost(h: HostRec): void {
    const cn = h.cn
    if (h.ironic) {
      const deployed = (h.stats.get('num_instances') ?? 0) > 0
      cn.vcpus_used = deployed ? cn.vcpus : 0
      cn.memory_mb_used = deployed ? cn.memory_mb : 0
      cn.local_gb_used = deployed ? cn.local_gb : 0
    } else {
      cn.vcpus_used = h.vcpusUsed
      cn.memory_mb_used = h.reservedMemoryMb + h.memoryUsed
      cn.local_gb_used = Math.trunc(h.reservedDiskGb + h.diskUsed + h.swapMbUsed / 1024)
    }
    cn.free_ram_mb = cn.memory_mb - cn.memory_mb_used
    cn.free_disk_gb = cn.local_gb - cn.local_gb_used
    cn.disk_available_least = cn.free_disk_gb
    cn.running_vms = h.stats.get('num_instances') ?? 0
    cn.current_workload = h.stats.get('io_workload') ?? 0
    const stats: Record<string, string> = {failed_builds: '0'}
    for (const [k, v] of h.stats) if (v !== 0 || k === 'num_instances' || k === 'io_workload') stats[k] = String(v)
    if (!('num_instances' in stats)) stats.num_instances = '0'
    if (!('io_workload' in stats)) stats.io_workload = '0'
    cn.stats = pyDumps(stats)
    cn.numa_topology = h.numa ? hostNumaTopologyBlob(h.numa) : null
  }

  build(opts: {source?: string} = {}): Snapshot {
    for (const h of this.hosts) if (h.cn.deleted === 0) this.finalizeHost(h)
    const inventories: Inventory[] = []
    const traits: Array<{resource_provider_id: number; trait_id: number}> = []
    const rpAggs: Array<{resource_provider_id: number; aggregate_id: number}> = []
    for (const rp of this.providerList) {
      for (const inv of rp.inventories.values()) inventories.push(inv)
      for (const t of rp.traits) traits.push({resource_provider_id: rp.row.id, trait_id: t})
      for (const a of rp.aggregates) rpAggs.push({resource_provider_id: rp.row.id, aggregate_id: a})
    }
    const allocations: Snapshot['placement']['allocations'] = []
    let allocId = 0
    for (const [consumer, list] of this.allocations) {
      for (const a of list) allocations.push({id: ++allocId, resource_provider_id: a.rp.row.id, consumer_id: consumer, resource_class_id: a.rc, used: a.used})
    }
    const snapshot: Snapshot = {
      format_version: SNAPSHOT_FORMAT_VERSION,
      captured_at: new Date(this.nowMs).toISOString(),
      source: {kind: 'generated', description: opts.source ?? 'cloudctl test builder'},
      cells: this.cells.map((c) => ({...c})),
      nova_api: {
        host_mappings: this.hostMappings,
        instance_mappings: this.instanceMappings,
        flavors: [...this.flavors.values()],
        aggregates: this.aggregates,
        build_requests: [],
        ...(this.requestSpecs ? {request_specs: this.requestSpecRows} : {}),
        instance_groups: this.groups,
      },
      nova: {services: this.services, compute_nodes: this.computeNodes, instances: this.instanceRows, migrations: this.migrationRows},
      placement: {
        resource_providers: this.providerList.map((p) => p.row),
        inventories,
        allocations,
        consumers: [...this.consumers.values()],
        consumer_types: [],
        projects: [...this.projects].map(([external_id, id]) => ({id, external_id})),
        users: [...this.users].map(([external_id, id]) => ({id, external_id})),
        resource_classes: [...this.customRcs].map(([name, id]) => ({id, name})),
        traits: [...this.traitIds].map(([name, id]) => ({id, name})),
        resource_provider_traits: traits,
        placement_aggregates: this.placementAggs,
        resource_provider_aggregates: rpAggs,
      },
    }
    return snapshot
  }
}

/** Shorthand for tests: `cloud({seed: 3}).addCell('cell1')...` */
export function cloud(opts: CloudBuilderOptions = {}): CloudBuilder {
  return new CloudBuilder(opts)
}

export type {Timestamp}

// ---------------------------------------------------------------- builder families
export {CELL1_UUID, CELL2_UUID, F09, F11, sampleSnapshot} from './builders/sample.js'
export {aggregate, filterContext, flavor, hostState, NOW, NOW_DB, numaCell, requestSpec, service, topology} from './builders/engine-values.js'
