/**
 * Builder family: what a test asks CloudBuilder for (the option and spec types), the handles it gets
 * back (records of the rows written for a provider, host, instance or migration), and the constants
 * every family shares.
 */
import type {
  CellInfo,
  ComputeNode,
  Flavor,
  Instance,
  InstanceMapping,
  Inventory,
  Migration,
  MigrationType,
  ResourceProvider,
  Service,
} from '../../../src/lib/domain/snapshot.js'
import type {HostNumaCellSpec, HostNumaCellState, InstanceNumaCellSpec} from './blobs.js'
import type {FlavorResources} from './resources.js'
import type {RealShapes} from './real-shapes.js'

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
  /**
   * Write blobs in the shapes real nova wrote (builders/real-shapes.ts): NUMA topologies, request
   * specs, and the recorded libvirt trait set as the default traits.
   */
  shapes?: RealShapes
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
  /** Pages of the host cell's pools it holds: host cell id -> [page size KiB, pages]. */
  pages?: Map<number, [number, number]>
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

export const IO_TASK_STATES = new Set(['resize_migrating', 'rebuilding', 'resize_prep', 'image_snapshot', 'image_backup', 'rescuing', 'unshelving'])
/** vm_states whose instances the resource tracker counts as using the host. */
export const NOT_ON_HOST = new Set(['deleted', 'shelved_offloaded'])
export const CONSUMER_TYPE_INSTANCE = 1
export const CONSUMER_TYPE_MIGRATION = 2
export const MIGRATION_DONE = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'])

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
