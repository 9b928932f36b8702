/**
 * The snapshot: what cloudctl read from nova_api, every cell database and placement, row by row.
 *
 * Rows keep the database's own column names (snake_case) so that an operator can compare a snapshot
 * with `SELECT` output, and JSON columns keep the exact text nova wrote: repairs guard their writes
 * with observed values, and a re-serialised blob would never match. Parsed views of the blobs live in
 * the derived model (model.ts), never in the file.
 *
 * Tables from cell databases are flat arrays whose rows carry `cell_uuid`; a cell that could not be
 * read is listed in `cells` with `status: 'unavailable'` and contributes no rows. Consumers must ask
 * the model whether a cell is available before they conclude anything from the absence of a row.
 */

import type {SnapshotRelease} from './release.js'

export const SNAPSHOT_FORMAT_VERSION = 1

export type Timestamp = string | null // 'YYYY-MM-DD HH:MM:SS' as MySQL prints DATETIME, UTC

export interface SnapshotSource {
  kind: 'live' | 'file' | 'generated'
  /** Redacted description: 'mysql://nova:***@db1:3306/nova_api', a file path, 'generator seed=42'. */
  description: string
  api_db?: string
  placement_db?: string
}

export interface CellInfo {
  /** cell_mappings.id */
  id: number
  uuid: string
  name: string | null
  /** Redacted: the password is replaced by '***'. */
  database_connection: string | null
  /** Redacted like database_connection. */
  transport_url: string | null
  disabled: boolean
  /** True for the cell whose uuid is 00000000-0000-0000-0000-000000000000. */
  is_cell0: boolean
  status: 'available' | 'unavailable'
  /** Why the cell could not be read (redacted), when status is 'unavailable'. */
  error?: string
}

export const CELL0_UUID = '00000000-0000-0000-0000-000000000000'

// ---------------------------------------------------------------- nova_api

export interface HostMapping {
  id: number
  cell_id: number
  host: string
}

export interface InstanceMapping {
  id: number
  instance_uuid: string
  cell_id: number | null
  project_id: string
  user_id: string | null
  queued_for_delete: boolean | null
  created_at: Timestamp
}

/** project_id of the marker row `nova-manage cell_v2 map_instances` keeps between batches. */
export const MAP_INSTANCES_MARKER_PROJECT = 'INSTANCE_MIGRATION_MARKER'

export interface Flavor {
  id: number
  flavorid: string
  name: string
  memory_mb: number
  vcpus: number
  swap: number
  root_gb: number | null
  ephemeral_gb: number | null
  rxtx_factor: number | null
  vcpu_weight: number | null
  disabled: boolean | null
  is_public: boolean | null
  description: string | null
  extra_specs: Record<string, string>
}

export interface Aggregate {
  id: number
  uuid: string | null
  name: string | null
  hosts: string[]
  metadata: Record<string, string>
}

export interface BuildRequest {
  id: number
  instance_uuid: string | null
  project_id: string
  created_at: Timestamp
}

export interface RequestSpecRow {
  instance_uuid: string
  /** RequestSpec versioned-object JSON, as stored. */
  spec: string
}

export interface InstanceGroup {
  id: number
  uuid: string
  name: string | null
  project_id: string | null
  user_id: string | null
  policies: Array<{policy: string | null; rules: string | null}>
  members: string[]
}

export interface NovaApiTables {
  host_mappings: HostMapping[]
  instance_mappings: InstanceMapping[]
  flavors: Flavor[]
  aggregates: Aggregate[]
  build_requests: BuildRequest[]
  /** Only captured on request (`--request-specs`): they are large. */
  request_specs?: RequestSpecRow[]
  instance_groups: InstanceGroup[]
}

// ---------------------------------------------------------------- cell databases

export interface Service {
  cell_uuid: string
  id: number
  uuid: string | null
  host: string | null
  binary: string | null
  topic: string | null
  report_count: number
  disabled: boolean | null
  disabled_reason: string | null
  forced_down: boolean | null
  last_seen_up: Timestamp
  version: number | null
  /** 0 for a live row; the row id once soft-deleted (`openstack compute service delete`). */
  deleted: number
  deleted_at: Timestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface ComputeNode {
  cell_uuid: string
  id: number
  uuid: string | null
  service_id: number | null
  host: string | null
  hypervisor_hostname: string | null
  hypervisor_type: string
  hypervisor_version: number
  host_ip: string | null
  vcpus: number
  memory_mb: number
  local_gb: number
  vcpus_used: number
  memory_mb_used: number
  local_gb_used: number
  free_ram_mb: number | null
  free_disk_gb: number | null
  disk_available_least: number | null
  current_workload: number | null
  running_vms: number | null
  cpu_allocation_ratio: number | null
  ram_allocation_ratio: number | null
  disk_allocation_ratio: number | null
  /** Raw JSON text as stored (versioned objects / plain JSON). */
  cpu_info: string
  supported_instances: string | null
  pci_stats: string | null
  stats: string | null
  numa_topology: string | null
  mapped: number | null
  deleted: number
  deleted_at: Timestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface InstanceExtra {
  numa_topology: string | null
  pci_requests: string | null
  flavor: string | null
}

export interface Instance {
  cell_uuid: string
  id: number
  uuid: string
  host: string | null
  node: string | null
  vm_state: string | null
  task_state: string | null
  power_state: number | null
  project_id: string | null
  user_id: string | null
  instance_type_id: number | null
  vcpus: number | null
  memory_mb: number | null
  root_gb: number | null
  ephemeral_gb: number | null
  availability_zone: string | null
  display_name: string | null
  image_ref: string | null
  os_type: string | null
  architecture: string | null
  launched_at: Timestamp
  terminated_at: Timestamp
  created_at: Timestamp
  updated_at: Timestamp
  /** 0 live; the row id once soft-deleted. Soft-deleted rows are kept: the leak checks need them. */
  deleted: number
  deleted_at: Timestamp
  hidden: boolean | null
  /** instance_extra columns of the live row; null when the instance has no instance_extra row. */
  extra: InstanceExtra | null
  /**
   * compute_nodes.id of the node the instance is on (nova 2023.2+); absent when the schema has no
   * such column, null on rows an older nova wrote.
   */
  compute_id?: number | null
}

export type MigrationType = 'migration' | 'resize' | 'live-migration' | 'evacuation'

export interface Migration {
  cell_uuid: string
  id: number
  uuid: string | null
  instance_uuid: string | null
  source_compute: string | null
  dest_compute: string | null
  dest_host: string | null
  source_node: string | null
  dest_node: string | null
  status: string | null
  migration_type: MigrationType | null
  old_instance_type_id: number | null
  new_instance_type_id: number | null
  hidden: boolean | null
  cross_cell_move: boolean | null
  deleted: number
  created_at: Timestamp
  updated_at: Timestamp
  /** compute_nodes.id of the destination node (nova 2023.2+); absent or null like Instance.compute_id. */
  dest_compute_id?: number | null
}

export interface NovaCellTables {
  services: Service[]
  compute_nodes: ComputeNode[]
  instances: Instance[]
  migrations: Migration[]
}

// ---------------------------------------------------------------- placement

export interface ResourceProvider {
  id: number
  uuid: string
  name: string | null
  generation: number | null
  root_provider_id: number | null
  parent_provider_id: number | null
}

export interface Inventory {
  id: number
  resource_provider_id: number
  resource_class_id: number
  total: number
  reserved: number
  min_unit: number
  max_unit: number
  step_size: number
  /** MySQL FLOAT, as read (single precision widened to double: 0.9 reads as 0.8999999761581421). */
  allocation_ratio: number
}

export interface Allocation {
  id: number
  resource_provider_id: number
  consumer_id: string
  resource_class_id: number
  used: number
}

export interface Consumer {
  id: number
  uuid: string
  project_id: number
  user_id: number
  generation: number
  consumer_type_id: number | null
}

export interface NamedRow {
  id: number
  name: string
}

export interface ExternalIdRow {
  id: number
  external_id: string
}

export interface PlacementTables {
  resource_providers: ResourceProvider[]
  inventories: Inventory[]
  allocations: Allocation[]
  consumers: Consumer[]
  consumer_types: NamedRow[]
  projects: ExternalIdRow[]
  users: ExternalIdRow[]
  /** CUSTOM_* classes only: standard classes have fixed ids and no rows (resource-classes.ts). */
  resource_classes: NamedRow[]
  traits: NamedRow[]
  resource_provider_traits: Array<{resource_provider_id: number; trait_id: number}>
  placement_aggregates: Array<{id: number; uuid: string | null}>
  resource_provider_aggregates: Array<{resource_provider_id: number; aggregate_id: number}>
}

export interface Snapshot {
  format_version: typeof SNAPSHOT_FORMAT_VERSION
  captured_at: string // ISO 8601
  source: SnapshotSource
  /** What the databases said about their release at capture; absent in older files and generated clouds. */
  release?: SnapshotRelease
  cells: CellInfo[]
  nova_api: NovaApiTables
  nova: NovaCellTables
  placement: PlacementTables
}

export function emptySnapshot(source: SnapshotSource, capturedAt = new Date().toISOString()): Snapshot {
  return {
    format_version: SNAPSHOT_FORMAT_VERSION,
    captured_at: capturedAt,
    source,
    cells: [],
    nova_api: {host_mappings: [], instance_mappings: [], flavors: [], aggregates: [], build_requests: [], instance_groups: []},
    nova: {services: [], compute_nodes: [], instances: [], migrations: []},
    placement: {
      resource_providers: [],
      inventories: [],
      allocations: [],
      consumers: [],
      consumer_types: [],
      projects: [],
      users: [],
      resource_classes: [],
      traits: [],
      resource_provider_traits: [],
      placement_aggregates: [],
      resource_provider_aggregates: [],
    },
  }
}

/** Table names in the order they are written to a snapshot file and read from the databases. */
export const NOVA_API_TABLES = ['host_mappings', 'instance_mappings', 'flavors', 'aggregates', 'build_requests', 'request_specs', 'instance_groups'] as const
export const NOVA_TABLES = ['services', 'compute_nodes', 'instances', 'migrations'] as const
export const PLACEMENT_TABLES = [
  'resource_providers',
  'inventories',
  'allocations',
  'consumers',
  'consumer_types',
  'projects',
  'users',
  'resource_classes',
  'traits',
  'resource_provider_traits',
  'placement_aggregates',
  'resource_provider_aggregates',
] as const
