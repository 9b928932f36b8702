/**
 * The snapshot: what cloudctl read from nova_api, every cell database and placement, row by row.
 *
 * Rows keep the database's own column names (one spec per table, tables/*.ts, gives the row types) (snake_case) so that an operator can compare a snapshot
 * with `SELECT` output, and JSON columns keep the exact text nova wrote: repairs guard their writes
 * with observed values, and a re-serialised blob would never match. Parsed views of the blobs live in
 * the derived model (model.ts), never in the file.
 *
 * Tables from cell databases are flat arrays whose rows carry `cell_uuid`; a cell that could not be
 * read is listed in `cells` with `status: 'unavailable'` and contributes no rows. Consumers must ask
 * the model whether a cell is available before they conclude anything from the absence of a row.
 */

import type {SnapshotRelease} from './release.js'
import type {RowOf} from './tables/define.js'
import type {AGGREGATES, BUILD_REQUESTS, FLAVORS, HOST_MAPPINGS, INSTANCE_GROUPS, INSTANCE_MAPPINGS, REQUEST_SPECS} from './tables/nova-api.js'
import type {COMPUTE_NODES, INSTANCE_EXTRA, INSTANCES, MIGRATIONS, SERVICES} from './tables/nova-cell.js'
import type {
  ALLOCATIONS,
  CONSUMERS,
  INVENTORIES,
  PLACEMENT_AGGREGATES,
  PROJECTS,
  RESOURCE_PROVIDER_AGGREGATES,
  RESOURCE_PROVIDER_TRAITS,
  RESOURCE_PROVIDERS,
  TRAITS,
} from './tables/placement.js'

export const SNAPSHOT_FORMAT_VERSION = 1

export type Timestamp = string | null // 'YYYY-MM-DD HH:MM:SS' as MySQL prints DATETIME, UTC

export interface SnapshotSource {
  kind: 'live' | 'file' | 'generated'
  /** Redacted description: 'mysql://nova:***@db1:3306/nova_api', a file path, 'generator seed=42'. */
  description: string
  api_db?: string
  placement_db?: string
  /** Which server (and Galera node) nova_api and placement were read from (live captures). */
  databases?: {nova_api: CellDatabaseIdentity; placement: CellDatabaseIdentity}
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
  /**
   * Which database the cell was actually read from (recorded at capture; absent in older files and
   * generated clouds): one database reached through two cell mappings is told apart by it.
   */
  identity?: CellDatabaseIdentity
}

/** What the server said about itself and the schema a cell was read from. Never a password. */
export interface CellDatabaseIdentity {
  /** Where cloudctl connected: host:port/database, or socket/database. */
  address: string
  /** DATABASE() */
  database: string | null
  /** @@hostname, @@port, @@server_id: a MariaDB server has no uuid. */
  hostname: string | null
  port: number | null
  server_id: number | null
  /** @@server_uuid (MySQL). */
  server_uuid: string | null
  /**
   * A Galera node (@@wsrep_on): its wsrep_node_name, the wsrep_sync_wait the read used and the
   * cluster's wsrep_cluster_state_uuid, the same on every node (absent on any other server).
   */
  wsrep?: {node_name: string | null; sync_wait: number | null; cluster_uuid?: string | null}
}

export const CELL0_UUID = '00000000-0000-0000-0000-000000000000'

// ---------------------------------------------------------------- nova_api

export type HostMapping = RowOf<typeof HOST_MAPPINGS>
export type InstanceMapping = RowOf<typeof INSTANCE_MAPPINGS>

/** project_id of the marker row `nova-manage cell_v2 map_instances` keeps between batches. */
export const MAP_INSTANCES_MARKER_PROJECT = 'INSTANCE_MIGRATION_MARKER'

/** A flavor with its flavor_extra_specs folded in. */
export type Flavor = RowOf<typeof FLAVORS>
/** An aggregate with its aggregate_hosts and aggregate_metadata folded in. */
export type Aggregate = RowOf<typeof AGGREGATES>
export type BuildRequest = RowOf<typeof BUILD_REQUESTS>
/** spec: the RequestSpec versioned-object JSON, as stored. */
export type RequestSpecRow = RowOf<typeof REQUEST_SPECS>
/** A server group with its instance_group_policy and instance_group_member rows folded in. */
export type InstanceGroup = RowOf<typeof INSTANCE_GROUPS>

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
// `deleted` is 0 for a live row and the row id once soft-deleted; soft-deleted instances are kept
// (the leak checks need them). Blob columns (cpu_info, numa_topology, ...) keep the JSON text as stored.

export type Service = RowOf<typeof SERVICES>
export type ComputeNode = RowOf<typeof COMPUTE_NODES>
/** instance_extra columns of an instance's live row. */
export type InstanceExtra = RowOf<typeof INSTANCE_EXTRA>
/**
 * extra: the live instance_extra row, null when there is none. compute_id (nova 2023.2+): absent when
 * the schema has no such column, null on rows an older nova wrote; migrations' dest_compute_id alike.
 */
export type Instance = RowOf<typeof INSTANCES>
export type Migration = RowOf<typeof MIGRATIONS>
export type MigrationType = NonNullable<Migration['migration_type']>

export interface NovaCellTables {
  services: Service[]
  compute_nodes: ComputeNode[]
  instances: Instance[]
  migrations: Migration[]
}

// ---------------------------------------------------------------- placement

export type ResourceProvider = RowOf<typeof RESOURCE_PROVIDERS>
/** allocation_ratio: the MySQL FLOAT widened to double (0.9 reads 0.8999999761581421; placement-capacity.ts). */
export type Inventory = RowOf<typeof INVENTORIES>
export type Allocation = RowOf<typeof ALLOCATIONS>
export type Consumer = RowOf<typeof CONSUMERS>
export type NamedRow = RowOf<typeof TRAITS>
export type ExternalIdRow = RowOf<typeof PROJECTS>

/** SUM(allocations.used) of one provider and resource class, as the database sums it (GROUP BY). */
export interface ProviderUsage {
  resource_provider_id: number
  resource_class_id: number
  used: number
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
  resource_provider_traits: Array<RowOf<typeof RESOURCE_PROVIDER_TRAITS>>
  placement_aggregates: Array<RowOf<typeof PLACEMENT_AGGREGATES>>
  resource_provider_aggregates: Array<RowOf<typeof RESOURCE_PROVIDER_AGGREGATES>>
  /**
   * Only in a scheduler view (Snapshot.scope): every provider's usage, summed by the database.
   * `allocations` then holds only the rows of the consumers the question named, and usage is
   * taken from here, never from those rows.
   */
  usages?: ProviderUsage[]
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
  /**
   * 'scheduler': a live read of what one scheduling question reads (db/read-scheduler.ts): every
   * table the scheduler reads, usage summed per provider (placement.usages), and instance rows,
   * allocation rows and request specs only of the instances the question names. Never saved;
   * audits and repairs never see one.
   * 'audit': a live audit's read (db/read-cell.ts AUDIT_VIEW): every row, but the cell columns no
   * audit reads (cpu_info, supported_instances, pci_stats, pci_requests, display_name, ...) hold
   * null. Never saved; only the audits see one.
   * Absent: every row of every table read, every column.
   */
  scope?: 'scheduler' | 'audit'
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
