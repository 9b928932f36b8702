/**
 * Reads the live databases into a Snapshot: nova_api, placement, and every cell (cell0 included),
 * each cell in parallel on its own connection.
 *
 * Every database is read in one read-only transaction WITH CONSISTENT SNAPSHOT, rows streamed in
 * primary-key order (300k instances or 1M allocations never sit in memory twice). A cell that cannot
 * be reached or read is recorded as unavailable with a redacted reason and contributes no rows;
 * nova_api and placement are required (exit 2 when unreachable).
 *
 * FLOAT columns are selected as `col + 0e0`: the server prints FLOAT with 6 significant digits in the
 * text protocol (0.123456789 reads '0.123457'), while DOUBLE arithmetic widens the stored single
 * exactly (0.9 reads 0.8999999761581421), which is what the snapshot records.
 */
import {noProgress, type ProgressSink, type SourceOptions} from '../snapshot/source.js'
import {resolveConnections, type ResolvedConnections} from '../config/resolve.js'
import {
  type Aggregate,
  type BuildRequest,
  CELL0_UUID,
  type CellInfo,
  type ComputeNode,
  type Consumer,
  type ExternalIdRow,
  type Flavor,
  type HostMapping,
  type Instance,
  type InstanceGroup,
  type InstanceMapping,
  type Inventory,
  type Migration,
  type MigrationType,
  type NamedRow,
  type NovaApiTables,
  type NovaCellTables,
  type PlacementTables,
  type RequestSpecRow,
  type ResourceProvider,
  type Service,
  type Snapshot,
  SNAPSHOT_FORMAT_VERSION,
} from '../domain/snapshot.js'
import {cloudRelease, databaseRelease, type DatabaseKind, type DatabaseRelease, OLDEST_SUPPORTED_RELEASE} from '../domain/release.js'
import {CloudctlError, ConfigError, ExitCode} from '../errors.js'
import {scrub} from '../util/redact.js'
import {beginConsistentRead, closeConnection, type Connection, type DbErrorContext, eachRow, openConnection} from './connection.js'
import {type DbUrl, formatTemplatedDbUrl, parseDbUrl} from './url.js'

type Row = Record<string, unknown>

const PROGRESS_EVERY = 50_000

// ---------------------------------------------------------------- value conversions

const bool = (v: unknown): boolean | null => (v === null || v === undefined ? null : Number(v) !== 0)
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))
const int = (v: unknown): number => Number(v)
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))
const ts = str
/** Soft-delete marker; a NULL (never written by nova's models, default 0) is read as 0. */
const deleted = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** One database being read: its label for progress and errors, its URL, its connection. */
class Reader {
  constructor(
    readonly label: string,
    readonly url: DbUrl,
    readonly conn: Connection,
    private readonly progress: ProgressSink,
  ) {}

  /** Streams `sql` and hands each row to `each`; reports progress under `table`. */
  async each(table: string, sql: string, each: (row: Row) => void, params: unknown[] = []): Promise<number> {
    const ctx: DbErrorContext = {label: this.label, url: this.url, table}
    let n = 0
    const progress = this.progress
    const database = this.label
    await eachRow<Row>(this.conn, sql, params, (row) => {
      each(row)
      n++
      if (n % PROGRESS_EVERY === 0) progress({database, table, rows: n, done: false})
    }, ctx)
    this.progress({database: this.label, table, rows: n, done: true})
    return n
  }

  /** A small query that is not a table of the snapshot (no progress). */
  async query(table: string, sql: string, params: unknown[] = []): Promise<Row[]> {
    const out: Row[] = []
    await eachRow<Row>(this.conn, sql, params, (row) => out.push(row), {label: this.label, url: this.url, table})
    return out
  }

  async rows<T>(table: string, sql: string, map: (row: Row) => T): Promise<T[]> {
    const out: T[] = []
    await this.each(table, sql, (r) => out.push(map(r)))
    return out
  }
}

async function openReader(label: string, url: DbUrl, progress: ProgressSink): Promise<Reader> {
  const conn = await openConnection(url, {label})
  try {
    await beginConsistentRead(conn, {label, url})
  } catch (error) {
    await closeConnection(conn)
    throw error
  }
  return new Reader(label, url, conn, progress)
}

// ---------------------------------------------------------------- schema and release

/** Optional columns a newer nova added that cloudctl reads when they are there. */
const OPTIONAL_COLUMNS = [
  ['instances', 'compute_id'],
  ['migrations', 'dest_compute_id'],
] as const

interface SchemaProbe {
  alembic: string | null
  legacyMigrate: boolean
  /** 'table.column' of the OPTIONAL_COLUMNS present. */
  columns: Set<string>
}

async function probeSchema(r: Reader, optionalColumns: boolean): Promise<SchemaProbe> {
  const tables = new Set(
    (await r.query('information_schema', "SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('alembic_version', 'migrate_version')")).map(
      (x) => String(x.t),
    ),
  )
  let alembic: string | null = null
  if (tables.has('alembic_version')) {
    // One row on a linear history; the lowest would be the one to upgrade if there were several.
    const heads = (await r.query('alembic_version', 'SELECT version_num FROM alembic_version ORDER BY version_num')).map((x) => String(x.version_num))
    alembic = heads[0] ?? null
  }
  const columns = new Set<string>()
  if (optionalColumns) {
    const wanted = OPTIONAL_COLUMNS.map(() => '(TABLE_NAME = ? AND COLUMN_NAME = ?)').join(' OR ')
    const rows = await r.query('information_schema', `SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND (${wanted})`, OPTIONAL_COLUMNS.flat())
    for (const x of rows) columns.add(`${String(x.t)}.${String(x.c)}`)
  }
  return {alembic, legacyMigrate: tables.has('migrate_version'), columns}
}

const DB_NAMES: Record<DatabaseKind, string> = {nova_api: 'nova_api', nova: 'nova cell', placement: 'placement'}
const SYNC: Record<DatabaseKind, string> = {nova_api: 'nova-manage api_db sync', nova: 'nova-manage db sync', placement: 'placement-manage db sync'}

/** Exit 2 for a schema older than the oldest release cloudctl reads. */
function refuseTooOld(kind: DatabaseKind, label: string, release: DatabaseRelease): void {
  if (!release.too_old) return
  throw new CloudctlError(
    `the ${label} database schema is ${release.name.startsWith('older') ? release.name : `${release.name} (alembic ${release.alembic_version})`}: cloudctl reads ${OLDEST_SUPPORTED_RELEASE === 'zed' ? 'Zed (nova 26, placement 8)' : OLDEST_SUPPORTED_RELEASE} and newer`,
    {
      exitCode: ExitCode.CONFIG,
      code: 'ReleaseTooOld',
      hint: `Upgrade the ${DB_NAMES[kind]} schema (${SYNC[kind]}) to Zed or later; see "Supported releases" in the README.`,
    },
  )
}

/** A missing table or column says which schema was found, so the operator knows which side is off. */
async function withRelease<T>(release: DatabaseRelease, body: () => Promise<T>): Promise<T> {
  try {
    return await body()
  } catch (error) {
    if (error instanceof CloudctlError && (error.code === 'DbMissingColumn' || error.code === 'DbMissingTable') && release.alembic_version !== null) {
      throw new CloudctlError(`${error.message} (schema found: ${release.name.includes(release.alembic_version) ? release.name : `${release.name}, alembic ${release.alembic_version}`})`, {
        exitCode: error.exitCode,
        code: error.code,
        hint: error.hint,
        cause: error,
      })
    }
    throw error
  }
}

async function readRelease(r: Reader, kind: DatabaseKind, optionalColumns = false): Promise<{release: DatabaseRelease; probe: SchemaProbe}> {
  const probe = await probeSchema(r, optionalColumns)
  const release = databaseRelease(kind, probe.alembic, {legacyMigrate: probe.legacyMigrate})
  refuseTooOld(kind, r.label, release)
  return {release, probe}
}

// ---------------------------------------------------------------- nova_api

interface CellMappingRow {
  id: number
  uuid: string
  name: string | null
  transport_url: string | null
  database_connection: string | null
  disabled: boolean
}

async function readCellMappings(r: Reader): Promise<CellMappingRow[]> {
  return r.rows('cell_mappings', 'SELECT id, uuid, name, transport_url, database_connection, disabled FROM cell_mappings ORDER BY id', (x) => ({
    id: int(x.id),
    uuid: String(x.uuid),
    name: str(x.name),
    transport_url: str(x.transport_url),
    database_connection: str(x.database_connection),
    disabled: bool(x.disabled) ?? false,
  }))
}

async function readNovaApi(r: Reader, requestSpecs: boolean): Promise<NovaApiTables> {
  const host_mappings = await r.rows<HostMapping>('host_mappings', 'SELECT id, cell_id, host FROM host_mappings ORDER BY id', (x) => ({
    id: int(x.id),
    cell_id: int(x.cell_id),
    host: String(x.host),
  }))
  const instance_mappings = await r.rows<InstanceMapping>(
    'instance_mappings',
    'SELECT id, instance_uuid, cell_id, project_id, user_id, queued_for_delete, created_at FROM instance_mappings ORDER BY id',
    (x) => ({
      id: int(x.id),
      instance_uuid: String(x.instance_uuid),
      cell_id: num(x.cell_id),
      project_id: String(x.project_id),
      user_id: str(x.user_id),
      queued_for_delete: bool(x.queued_for_delete),
      created_at: ts(x.created_at),
    }),
  )

  const flavors = await r.rows<Flavor>(
    'flavors',
    'SELECT id, flavorid, name, memory_mb, vcpus, swap, root_gb, ephemeral_gb, rxtx_factor + 0e0 AS rxtx_factor, vcpu_weight, disabled, is_public, description FROM flavors ORDER BY id',
    (x) => ({
      id: int(x.id),
      flavorid: String(x.flavorid),
      name: String(x.name),
      memory_mb: int(x.memory_mb),
      vcpus: int(x.vcpus),
      swap: int(x.swap),
      root_gb: num(x.root_gb),
      ephemeral_gb: num(x.ephemeral_gb),
      rxtx_factor: num(x.rxtx_factor),
      vcpu_weight: num(x.vcpu_weight),
      disabled: bool(x.disabled),
      is_public: bool(x.is_public),
      description: str(x.description),
      extra_specs: {},
    }),
  )
  const flavorById = new Map(flavors.map((f) => [f.id, f]))
  await r.each('flavor_extra_specs', 'SELECT flavor_id, `key`, `value` FROM flavor_extra_specs ORDER BY id', (x) => {
    const f = flavorById.get(int(x.flavor_id))
    // A NULL value has no meaning for nova's extra-spec validators; '' keeps the key visible.
    if (f) f.extra_specs[String(x.key)] = str(x.value) ?? ''
  })

  const aggregates = await r.rows<Aggregate>('aggregates', 'SELECT id, uuid, name FROM aggregates ORDER BY id', (x) => ({
    id: int(x.id),
    uuid: str(x.uuid),
    name: str(x.name),
    hosts: [],
    metadata: {},
  }))
  const aggById = new Map(aggregates.map((a) => [a.id, a]))
  await r.each('aggregate_hosts', 'SELECT aggregate_id, host FROM aggregate_hosts ORDER BY id', (x) => {
    const a = aggById.get(int(x.aggregate_id))
    if (a && x.host !== null) a.hosts.push(String(x.host))
  })
  await r.each('aggregate_metadata', 'SELECT aggregate_id, `key`, `value` FROM aggregate_metadata ORDER BY id', (x) => {
    const a = aggById.get(int(x.aggregate_id))
    if (a) a.metadata[String(x.key)] = String(x.value)
  })

  const build_requests = await r.rows<BuildRequest>('build_requests', 'SELECT id, instance_uuid, project_id, created_at FROM build_requests ORDER BY id', (x) => ({
    id: int(x.id),
    instance_uuid: str(x.instance_uuid),
    project_id: String(x.project_id),
    created_at: ts(x.created_at),
  }))

  let request_specs: RequestSpecRow[] | undefined
  if (requestSpecs) {
    request_specs = await r.rows<RequestSpecRow>('request_specs', 'SELECT instance_uuid, spec FROM request_specs ORDER BY id', (x) => ({
      instance_uuid: String(x.instance_uuid),
      spec: String(x.spec),
    }))
  }

  const instance_groups = await r.rows<InstanceGroup>('instance_groups', 'SELECT id, uuid, name, project_id, user_id FROM instance_groups ORDER BY id', (x) => ({
    id: int(x.id),
    uuid: String(x.uuid),
    name: str(x.name),
    project_id: str(x.project_id),
    user_id: str(x.user_id),
    policies: [],
    members: [],
  }))
  const groupById = new Map(instance_groups.map((g) => [g.id, g]))
  await r.each('instance_group_policy', 'SELECT group_id, policy, rules FROM instance_group_policy ORDER BY id', (x) => {
    groupById.get(int(x.group_id))?.policies.push({policy: str(x.policy), rules: str(x.rules)})
  })
  await r.each('instance_group_member', 'SELECT group_id, instance_uuid FROM instance_group_member ORDER BY id', (x) => {
    const g = groupById.get(int(x.group_id))
    if (g && x.instance_uuid !== null) g.members.push(String(x.instance_uuid))
  })

  const out: NovaApiTables = {host_mappings, instance_mappings, flavors, aggregates, build_requests, instance_groups}
  if (request_specs) out.request_specs = request_specs
  return out
}

// ---------------------------------------------------------------- placement

async function readPlacement(r: Reader): Promise<PlacementTables> {
  const named = (table: string, where = ''): Promise<NamedRow[]> =>
    r.rows(table, `SELECT id, name FROM ${table}${where} ORDER BY id`, (x) => ({id: int(x.id), name: String(x.name)}))
  const external = (table: string): Promise<ExternalIdRow[]> =>
    r.rows(table, `SELECT id, external_id FROM ${table} ORDER BY id`, (x) => ({id: int(x.id), external_id: String(x.external_id)}))

  const resource_providers = await r.rows<ResourceProvider>(
    'resource_providers',
    'SELECT id, uuid, name, generation, root_provider_id, parent_provider_id FROM resource_providers ORDER BY id',
    (x) => ({
      id: int(x.id),
      uuid: String(x.uuid),
      name: str(x.name),
      generation: num(x.generation),
      root_provider_id: num(x.root_provider_id),
      parent_provider_id: num(x.parent_provider_id),
    }),
  )
  const inventories = await r.rows<Inventory>(
    'inventories',
    'SELECT id, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio + 0e0 AS allocation_ratio FROM inventories ORDER BY id',
    (x) => ({
      id: int(x.id),
      resource_provider_id: int(x.resource_provider_id),
      resource_class_id: int(x.resource_class_id),
      total: int(x.total),
      reserved: int(x.reserved),
      min_unit: int(x.min_unit),
      max_unit: int(x.max_unit),
      step_size: int(x.step_size),
      allocation_ratio: Number(x.allocation_ratio),
    }),
  )
  const allocations = await r.rows('allocations', 'SELECT id, resource_provider_id, consumer_id, resource_class_id, used FROM allocations ORDER BY id', (x) => ({
    id: int(x.id),
    resource_provider_id: int(x.resource_provider_id),
    consumer_id: String(x.consumer_id),
    resource_class_id: int(x.resource_class_id),
    used: int(x.used),
  }))
  const consumers = await r.rows<Consumer>('consumers', 'SELECT id, uuid, project_id, user_id, generation, consumer_type_id FROM consumers ORDER BY id', (x) => ({
    id: int(x.id),
    uuid: String(x.uuid),
    project_id: int(x.project_id),
    user_id: int(x.user_id),
    generation: int(x.generation),
    consumer_type_id: num(x.consumer_type_id),
  }))
  const consumer_types = await named('consumer_types')
  const projects = await external('projects')
  const users = await external('users')
  // Placement syncs the standard classes into this table with their fixed ids; the snapshot keeps
  // only the CUSTOM_* rows (resource-classes.ts knows the standard ones).
  const resource_classes = await named('resource_classes', " WHERE name LIKE 'CUSTOM\\_%'")
  const traits = await named('traits')
  const resource_provider_traits = await r.rows(
    'resource_provider_traits',
    'SELECT resource_provider_id, trait_id FROM resource_provider_traits ORDER BY trait_id, resource_provider_id',
    (x) => ({resource_provider_id: int(x.resource_provider_id), trait_id: int(x.trait_id)}),
  )
  const placement_aggregates = await r.rows('placement_aggregates', 'SELECT id, uuid FROM placement_aggregates ORDER BY id', (x) => ({id: int(x.id), uuid: str(x.uuid)}))
  const resource_provider_aggregates = await r.rows(
    'resource_provider_aggregates',
    'SELECT resource_provider_id, aggregate_id FROM resource_provider_aggregates ORDER BY resource_provider_id, aggregate_id',
    (x) => ({resource_provider_id: int(x.resource_provider_id), aggregate_id: int(x.aggregate_id)}),
  )
  return {
    resource_providers,
    inventories,
    allocations,
    consumers,
    consumer_types,
    projects,
    users,
    resource_classes,
    traits,
    resource_provider_traits,
    placement_aggregates,
    resource_provider_aggregates,
  }
}

// ---------------------------------------------------------------- cells

const MIGRATION_TYPES = new Set<MigrationType>(['migration', 'resize', 'live-migration', 'evacuation'])

async function readCell(r: Reader, cellUuid: string, optional: Set<string>): Promise<NovaCellTables> {
  const services = await r.rows<Service>(
    'services',
    'SELECT id, uuid, host, `binary`, topic, report_count, disabled, disabled_reason, forced_down, last_seen_up, version, deleted, deleted_at, created_at, updated_at FROM services ORDER BY id',
    (x) => ({
      cell_uuid: cellUuid,
      id: int(x.id),
      uuid: str(x.uuid),
      host: str(x.host),
      binary: str(x.binary),
      topic: str(x.topic),
      report_count: int(x.report_count),
      disabled: bool(x.disabled),
      disabled_reason: str(x.disabled_reason),
      forced_down: bool(x.forced_down),
      last_seen_up: ts(x.last_seen_up),
      version: num(x.version),
      deleted: deleted(x.deleted),
      deleted_at: ts(x.deleted_at),
      created_at: ts(x.created_at),
      updated_at: ts(x.updated_at),
    }),
  )

  const compute_nodes = await r.rows<ComputeNode>(
    'compute_nodes',
    `SELECT id, uuid, service_id, host, hypervisor_hostname, hypervisor_type, hypervisor_version, host_ip, vcpus, memory_mb, local_gb,
            vcpus_used, memory_mb_used, local_gb_used, free_ram_mb, free_disk_gb, disk_available_least, current_workload, running_vms,
            cpu_allocation_ratio + 0e0 AS cpu_allocation_ratio, ram_allocation_ratio + 0e0 AS ram_allocation_ratio,
            disk_allocation_ratio + 0e0 AS disk_allocation_ratio, cpu_info, supported_instances, pci_stats, stats, numa_topology, mapped,
            deleted, deleted_at, created_at, updated_at
       FROM compute_nodes ORDER BY id`,
    (x) => ({
      cell_uuid: cellUuid,
      id: int(x.id),
      uuid: str(x.uuid),
      service_id: num(x.service_id),
      host: str(x.host),
      hypervisor_hostname: str(x.hypervisor_hostname),
      hypervisor_type: String(x.hypervisor_type),
      hypervisor_version: int(x.hypervisor_version),
      host_ip: str(x.host_ip),
      vcpus: int(x.vcpus),
      memory_mb: int(x.memory_mb),
      local_gb: int(x.local_gb),
      vcpus_used: int(x.vcpus_used),
      memory_mb_used: int(x.memory_mb_used),
      local_gb_used: int(x.local_gb_used),
      free_ram_mb: num(x.free_ram_mb),
      free_disk_gb: num(x.free_disk_gb),
      disk_available_least: num(x.disk_available_least),
      current_workload: num(x.current_workload),
      running_vms: num(x.running_vms),
      cpu_allocation_ratio: num(x.cpu_allocation_ratio),
      ram_allocation_ratio: num(x.ram_allocation_ratio),
      disk_allocation_ratio: num(x.disk_allocation_ratio),
      cpu_info: String(x.cpu_info),
      supported_instances: str(x.supported_instances),
      pci_stats: str(x.pci_stats),
      stats: str(x.stats),
      numa_topology: str(x.numa_topology),
      mapped: num(x.mapped),
      deleted: deleted(x.deleted),
      deleted_at: ts(x.deleted_at),
      created_at: ts(x.created_at),
      updated_at: ts(x.updated_at),
    }),
  )

  // instances and instance_extra are read as two primary-key scans and matched here by uuid. A
  // join makes the server look up instance_extra through its instance_uuid index for every instance
  // (then the clustered index for the blobs): about three times the server time of two scans.
  // The matching costs one map entry per instance, the extra rows being kept anyway.
  // An instance with two live instance_extra rows (never written by nova) keeps the one with the
  // lowest id.
  const instances: Instance[] = []
  const byUuid = new Map<string, Instance>()
  const computeId = optional.has('instances.compute_id')
  await r.each(
    'instances',
    `SELECT id, uuid, host, node, vm_state, task_state, power_state, project_id, user_id, instance_type_id,
            vcpus, memory_mb, root_gb, ephemeral_gb, availability_zone, display_name, image_ref, os_type, architecture,
            launched_at, terminated_at, created_at, updated_at, deleted, deleted_at, hidden${computeId ? ', compute_id' : ''}
       FROM instances ORDER BY id`,
    (x) => {
      const row: Instance = {
        cell_uuid: cellUuid,
        id: int(x.id),
        uuid: String(x.uuid),
        host: str(x.host),
        node: str(x.node),
        vm_state: str(x.vm_state),
        task_state: str(x.task_state),
        power_state: num(x.power_state),
        project_id: str(x.project_id),
        user_id: str(x.user_id),
        instance_type_id: num(x.instance_type_id),
        vcpus: num(x.vcpus),
        memory_mb: num(x.memory_mb),
        root_gb: num(x.root_gb),
        ephemeral_gb: num(x.ephemeral_gb),
        availability_zone: str(x.availability_zone),
        display_name: str(x.display_name),
        image_ref: str(x.image_ref),
        os_type: str(x.os_type),
        architecture: str(x.architecture),
        launched_at: ts(x.launched_at),
        terminated_at: ts(x.terminated_at),
        created_at: ts(x.created_at),
        updated_at: ts(x.updated_at),
        deleted: deleted(x.deleted),
        deleted_at: ts(x.deleted_at),
        hidden: bool(x.hidden),
        extra: null,
      }
      if (computeId) row.compute_id = num(x.compute_id)
      instances.push(row)
      byUuid.set(row.uuid, row)
    },
  )
  await r.each('instance_extra', 'SELECT instance_uuid, numa_topology, pci_requests, flavor FROM instance_extra WHERE deleted = 0 ORDER BY id', (x) => {
    const inst = byUuid.get(String(x.instance_uuid))
    if (inst && inst.extra === null) inst.extra = {numa_topology: str(x.numa_topology), pci_requests: str(x.pci_requests), flavor: str(x.flavor)}
  })
  byUuid.clear()

  const destComputeId = optional.has('migrations.dest_compute_id')
  const migrations = await r.rows<Migration>(
    'migrations',
    `SELECT id, uuid, instance_uuid, source_compute, dest_compute, dest_host, source_node, dest_node, status, migration_type,
            old_instance_type_id, new_instance_type_id, hidden, cross_cell_move, deleted, created_at, updated_at${destComputeId ? ', dest_compute_id' : ''}
       FROM migrations WHERE deleted = 0 ORDER BY id`,
    (x) => ({
      cell_uuid: cellUuid,
      id: int(x.id),
      uuid: str(x.uuid),
      instance_uuid: str(x.instance_uuid),
      source_compute: str(x.source_compute),
      dest_compute: str(x.dest_compute),
      dest_host: str(x.dest_host),
      source_node: str(x.source_node),
      dest_node: str(x.dest_node),
      status: str(x.status),
      migration_type: x.migration_type !== null && MIGRATION_TYPES.has(x.migration_type as MigrationType) ? (x.migration_type as MigrationType) : null,
      old_instance_type_id: num(x.old_instance_type_id),
      new_instance_type_id: num(x.new_instance_type_id),
      hidden: bool(x.hidden),
      cross_cell_move: bool(x.cross_cell_move),
      deleted: deleted(x.deleted),
      created_at: ts(x.created_at),
      updated_at: ts(x.updated_at),
      ...(destComputeId ? {dest_compute_id: num(x.dest_compute_id)} : {}),
    }),
  )
  return {services, compute_nodes, instances, migrations}
}

interface CellResult {
  info: CellInfo
  tables?: NovaCellTables
  release?: DatabaseRelease
}

/** The URL to read a cell from: an override (by uuid, then name), else its (maybe templated) mapping. */
function cellUrlFor(cell: CellMappingRow, conns: ResolvedConnections): string {
  const override = conns.cellDb[cell.uuid] ?? (cell.name === null ? undefined : conns.cellDb[cell.name])
  if (override !== undefined) return override
  if (cell.database_connection === null || cell.database_connection.trim() === '') {
    throw new ConfigError(`cell_mappings.database_connection is empty for cell ${cell.name ?? cell.uuid}`, `Pass --cell-db ${cell.name ?? cell.uuid}=URL.`)
  }
  return formatTemplatedDbUrl(cell.database_connection, conns.novaConfDatabase, `cell ${cell.name ?? cell.uuid} database_connection`)
}

async function captureCell(cell: CellMappingRow, conns: ResolvedConnections, progress: ProgressSink): Promise<CellResult> {
  const label = cell.name ?? cell.uuid
  const info: CellInfo = {
    id: cell.id,
    uuid: cell.uuid,
    name: cell.name,
    // scrub, not only redact: a URL too broken to redact may still hold a password seen elsewhere
    database_connection: cell.database_connection === null ? null : scrub(cell.database_connection),
    transport_url: cell.transport_url === null ? null : scrub(cell.transport_url),
    disabled: cell.disabled,
    is_cell0: cell.uuid === CELL0_UUID,
    status: 'available',
  }
  let reader: Reader | undefined
  try {
    const url = parseDbUrl(cellUrlFor(cell, conns), `cell ${label} database URL`)
    reader = await openReader(label, url, progress)
    const {release, probe} = await readRelease(reader, 'nova', true)
    const r = reader
    const tables = await withRelease(release, () => readCell(r, cell.uuid, probe.columns))
    // The newest code that runs against this cell: during a rolling upgrade the computes lag.
    let newest: number | null = null
    for (const svc of tables.services) if (svc.deleted === 0 && svc.version !== null && (newest === null || svc.version > newest)) newest = svc.version
    return {info, tables, release: newest === null ? release : databaseRelease('nova', probe.alembic, {legacyMigrate: probe.legacyMigrate, serviceVersion: newest})}
  } catch (error) {
    // A schema too old to read is the operator's configuration, not an outage of the cell.
    if (error instanceof CloudctlError && error.code === 'ReleaseTooOld') throw error
    // Never empty-but-available: the reason is kept (redacted) and the cell contributes no rows.
    const message = error instanceof CloudctlError ? error.message : scrub(String((error as Error)?.message ?? error))
    progress({database: label, table: 'unavailable', rows: 0, done: true})
    return {info: {...info, status: 'unavailable', error: scrub(message)}}
  } finally {
    if (reader) await closeConnection(reader.conn)
  }
}

function checkOverrides(cells: CellMappingRow[], conns: ResolvedConnections): void {
  for (const key of Object.keys(conns.cellDb)) {
    const byUuid = cells.filter((c) => c.uuid === key)
    const byName = cells.filter((c) => c.name === key)
    const origin = conns.origin.cellDb[key] === '--cell-db' || !conns.origin.cellDb[key] ? '--cell-db' : `cell_db of ${conns.origin.cellDb[key]}`
    if (byUuid.length === 0 && byName.length === 0) {
      throw new ConfigError(
        `${origin} ${key}: no cell with that name or uuid in cell_mappings`,
        `Known cells: ${cells.map((c) => (c.name ? `${c.name} (${c.uuid})` : c.uuid)).join(', ') || 'none'}.`,
        'UnknownCell',
      )
    }
    if (byUuid.length === 0 && byName.length > 1) {
      throw new ConfigError(`${origin} ${key}: ${byName.length} cells share that name`, `Use the cell uuid instead: ${byName.map((c) => c.uuid).join(', ')}.`, 'AmbiguousCell')
    }
  }
}

// ---------------------------------------------------------------- entry point

/**
 * Captures the live databases named by `opts` (flags, environment, profile, nova.conf).
 * nova_api or placement unreachable: CloudctlError (exit 2). A cell unreachable: status 'unavailable'.
 */
export async function captureLive(opts: SourceOptions, progress: ProgressSink = noProgress): Promise<Snapshot> {
  const conns = resolveConnections(opts)
  const apiUrl = parseDbUrl(conns.apiDb, 'nova_api database URL')
  const placementUrl = parseDbUrl(conns.placementDb, 'placement database URL')
  const capturedAt = new Date().toISOString()

  const [apiOpen, placementOpen] = await Promise.allSettled([openReader('nova_api', apiUrl, progress), openReader('placement', placementUrl, progress)])
  if (apiOpen.status === 'rejected' || placementOpen.status === 'rejected') {
    if (apiOpen.status === 'fulfilled') await closeConnection(apiOpen.value.conn)
    if (placementOpen.status === 'fulfilled') await closeConnection(placementOpen.value.conn)
    throw apiOpen.status === 'rejected' ? apiOpen.reason : (placementOpen as PromiseRejectedResult).reason
  }
  const api = apiOpen.value
  const placement = placementOpen.value

  let cellJobs: Array<Promise<CellResult>> = []
  try {
    const [apiRelease, placementRelease] = await Promise.all([readRelease(api, 'nova_api'), readRelease(placement, 'placement')])
    const cellRows = await withRelease(apiRelease.release, () => readCellMappings(api))
    checkOverrides(cellRows, conns)
    // Cells start as soon as their URLs are known, while nova_api and placement are still read.
    cellJobs = cellRows.map((c) => captureCell(c, conns, progress))
    // A cell may fail (a schema too old) while nova_api is still read: Promise.all below reports
    // it; until then the rejection must not count as unhandled (Node would end the process).
    for (const job of cellJobs) job.catch(() => undefined)
    const [novaApi, placementTables] = await Promise.all([
      withRelease(apiRelease.release, () => readNovaApi(api, opts.requestSpecs ?? false)),
      withRelease(placementRelease.release, () => readPlacement(placement)),
    ])
    const cells = await Promise.all(cellJobs)
    const cellReleases: Record<string, DatabaseRelease> = {}
    for (const c of cells) if (c.release) cellReleases[c.info.uuid] = c.release

    const nova: NovaCellTables = {services: [], compute_nodes: [], instances: [], migrations: []}
    for (const c of cells) {
      if (!c.tables) continue
      for (const row of c.tables.services) nova.services.push(row)
      for (const row of c.tables.compute_nodes) nova.compute_nodes.push(row)
      for (const row of c.tables.instances) nova.instances.push(row)
      for (const row of c.tables.migrations) nova.migrations.push(row)
    }
    return {
      format_version: SNAPSHOT_FORMAT_VERSION,
      captured_at: capturedAt,
      source: {kind: 'live', description: apiUrl.display, api_db: apiUrl.display, placement_db: placementUrl.display},
      release: cloudRelease(apiRelease.release, placementRelease.release, cellReleases),
      cells: cells.map((c) => c.info),
      nova_api: novaApi,
      nova,
      placement: placementTables,
    }
  } finally {
    // Cell readers close themselves; wait for them so no connection outlives a failed capture.
    await Promise.allSettled(cellJobs)
    await closeConnection(api.conn)
    await closeConnection(placement.conn)
  }
}
