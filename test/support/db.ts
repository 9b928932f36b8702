/**
 * Disposable test clouds on a real MariaDB/MySQL: uniquely named databases with the Zed schemas
 * (schema.ts), and a fast loader that writes every row of a Snapshot into them.
 *
 * Server: CLOUDCTL_TEST_DSN (default mysql://root@127.0.0.1:3306). Each test file creates its own
 * databases, so files can run in parallel.
 */
import {randomBytes} from 'node:crypto'

import {type Connection, closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {parseDbUrl, withDatabase} from '../../src/lib/db/url.js'
import {STANDARD_RESOURCE_CLASSES} from '../../src/lib/domain/resource-classes.js'
import type {CellDatabaseIdentity, CellInfo, Snapshot} from '../../src/lib/domain/snapshot.js'
import {redact} from '../../src/lib/util/redact.js'
import type {RowOf, TableSpec} from '../../src/lib/domain/tables/define.js'
import {
  AGGREGATES,
  ALLOCATIONS,
  BUILD_REQUESTS,
  COMPUTE_NODES,
  CONSUMER_TYPES,
  CONSUMERS,
  FLAVORS,
  HOST_MAPPINGS,
  INSTANCE_GROUPS,
  INSTANCE_MAPPINGS,
  INSTANCES,
  INVENTORIES,
  MIGRATIONS,
  PLACEMENT_AGGREGATES,
  PROJECTS,
  REQUEST_SPECS,
  RESOURCE_PROVIDER_AGGREGATES,
  RESOURCE_PROVIDER_TRAITS,
  RESOURCE_PROVIDERS,
  SERVICES,
  TRAITS,
  USERS,
} from '../../src/lib/domain/tables/index.js'
import {novaApiSchema, novaCellSchema, placementSchema} from './schema.js'

export const DEFAULT_TEST_DSN = 'mysql://root@127.0.0.1:3306'

export function testDsn(): string {
  return process.env.CLOUDCTL_TEST_DSN || DEFAULT_TEST_DSN
}

/** A connection to the test server without a default database (for CREATE / DROP DATABASE). */
export async function adminConnection(): Promise<Connection> {
  const u = parseDbUrl(testDsn(), 'CLOUDCTL_TEST_DSN')
  return openConnection({...u, database: undefined}, {label: 'test server'})
}

export interface TestCloud {
  /** Database names on the test server. */
  databases: {api: string; placement: string; cell0: string; cells: Record<string, string>}
  /** URLs as nova writes them (mysql+pymysql://...?charset=utf8). */
  apiUrl: string
  placementUrl: string
  cell0Url: string
  /** By cell name. */
  cellUrls: Record<string, string>
  /** The URL of a cell database by cell name; 'cell0' (or any is_cell0 cell) maps to cell0Url. */
  urlForCell(name: string): string | undefined
  /** Every database of this cloud (placement counted once when it lives in nova_api). */
  allDatabases(): string[]
  drop(): Promise<void>
}

export interface TestCloudOptions {
  /** Cell names besides cell0 (default ['cell1']). */
  cells?: string[]
  /** Pre-Stein layout: the placement tables live in the nova_api database, placementUrl === apiUrl. */
  placementInApi?: boolean
}

function sanitize(prefix: string): string {
  const p = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 24)
  return p === '' ? 't' : p
}

/** What a capture records as the identity of a cell read from `url` (CellInfo.identity), asked of the server itself. */
export async function expectedCellIdentity(url: string): Promise<CellDatabaseIdentity> {
  const u = parseDbUrl(url)
  const conn = await openConnection(url)
  try {
    const [[row]] = (await conn.query('SELECT @@hostname AS hostname, @@port AS port, @@server_id AS server_id, DATABASE() AS db')) as unknown as [
      [{hostname: string; port: number; server_id: number; db: string}],
    ]
    const [uuid] = (await conn.query("SHOW VARIABLES LIKE 'server_uuid'")) as unknown as [Array<{Value: string}>]
    return {
      address: `${u.host}:${u.port}/${row.db}`,
      database: row.db,
      hostname: row.hostname,
      port: Number(row.port),
      server_id: Number(row.server_id),
      server_uuid: uuid[0]?.Value ?? null,
    }
  } finally {
    await closeConnection(conn)
  }
}

/** The cells a capture of a seeded test cloud returns: pointing at the test databases, each with the identity of the one it was read from. */
export async function capturedCells(cells: CellInfo[], cloud: TestCloud): Promise<CellInfo[]> {
  return Promise.all(
    cells.map(async (c) => {
      const url = c.is_cell0 ? cloud.cell0Url : cloud.urlForCell(c.name ?? '')
      return url === undefined ? {...c} : {...c, database_connection: redact(url), identity: await expectedCellIdentity(url)}
    }),
  )
}

/** A nova-looking URL for a database on the test server. */
export function testDbUrl(database: string): string {
  const url = withDatabase(testDsn(), database)
  const nova = url.replace(/^mysql:\/\//, 'mysql+pymysql://')
  return `${nova}${nova.includes('?') ? '&' : '?'}charset=utf8`
}

async function runAll(conn: Connection, statements: string[]): Promise<void> {
  for (const sql of statements) await conn.query(sql)
}

/** Creates `<prefix>_<random>_api`, `_placement`, `_cell0`, `_<cell>`... with the Zed schemas. */
export async function createTestCloud(prefix: string, opts: TestCloudOptions = {}): Promise<TestCloud> {
  const cells = opts.cells ?? ['cell1']
  for (const c of cells) {
    if (!/^[A-Za-z0-9_]{1,20}$/.test(c) || c === 'cell0' || c === 'api' || c === 'placement') throw new Error(`bad test cell name ${c}`)
  }
  const base = `${sanitize(prefix)}_${randomBytes(4).toString('hex')}`
  const databases = {
    api: `${base}_api`,
    placement: opts.placementInApi ? `${base}_api` : `${base}_placement`,
    cell0: `${base}_cell0`,
    cells: Object.fromEntries(cells.map((c) => [c, `${base}_${c}`])) as Record<string, string>,
  }
  const all = [...new Set([databases.api, databases.placement, databases.cell0, ...Object.values(databases.cells)])]
  const admin = await adminConnection()
  const created: string[] = []
  try {
    for (const db of all) {
      await admin.query(`CREATE DATABASE \`${db}\` DEFAULT CHARACTER SET utf8`)
      created.push(db)
    }
    await admin.query(`USE \`${databases.api}\``)
    await runAll(admin, novaApiSchema())
    await admin.query(`USE \`${databases.placement}\``)
    await runAll(admin, placementSchema())
    for (const db of [databases.cell0, ...Object.values(databases.cells)]) {
      await admin.query(`USE \`${db}\``)
      await runAll(admin, novaCellSchema())
    }
  } catch (error) {
    for (const db of created) await admin.query(`DROP DATABASE IF EXISTS \`${db}\``).catch(() => {})
    await closeConnection(admin)
    throw error
  }
  await closeConnection(admin)

  const cellUrls = Object.fromEntries(Object.entries(databases.cells).map(([c, db]) => [c, testDbUrl(db)]))
  const cell0Url = testDbUrl(databases.cell0)
  return {
    databases,
    apiUrl: testDbUrl(databases.api),
    placementUrl: testDbUrl(databases.placement),
    cell0Url,
    cellUrls,
    urlForCell: (name) => (name === 'cell0' ? cell0Url : cellUrls[name]),
    allDatabases: () => all,
    async drop() {
      const conn = await adminConnection()
      try {
        // A SIGKILLed CLI (the repair kill tests) can leave a server thread holding locks in these
        // databases until it next reads its socket; DROP DATABASE would wait on it forever.
        const [rows] = await conn.query(`SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB IN (?) AND ID <> CONNECTION_ID()`, [all])
        for (const {id} of rows as Array<{id: number}>) await conn.query('KILL CONNECTION ?', [id]).catch(() => undefined)
        for (const db of all) await conn.query(`DROP DATABASE IF EXISTS \`${db}\``)
      } finally {
        await closeConnection(conn)
      }
    },
  }
}

// ---------------------------------------------------------------- seeding

/** Rows per INSERT statement; also bounded by bytes to stay far under max_allowed_packet (16 MB). */
const BATCH_ROWS = 5000
const BATCH_BYTES = 4 * 1024 * 1024

function approxSize(row: unknown[]): number {
  let n = 8
  for (const v of row) n += typeof v === 'string' ? v.length * 2 + 4 : 12
  return n
}

/** Multi-row parametrised INSERTs (`VALUES ?` expands nested arrays with client-side escaping). */
/** A snapshot table's rows into its table, by its spec's row columns. */
function insertSpec<T extends TableSpec>(conn: Connection, spec: T, rows: ReadonlyArray<RowOf<T>>): Promise<number> {
  const columns = spec.row
  return insertRows(
    conn,
    spec.name,
    columns,
    mapRows(rows, (r) => columns.map((c) => (r as Record<string, unknown>)[c])),
  )
}

async function insertRows(conn: Connection, table: string, columns: readonly string[], rows: Iterable<unknown[]>): Promise<number> {
  const head = `INSERT INTO \`${table}\` (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES ?`
  let batch: unknown[][] = []
  let bytes = 0
  let total = 0
  for (const row of rows) {
    batch.push(row)
    bytes += approxSize(row)
    if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES) {
      await conn.query(head, [batch])
      total += batch.length
      batch = []
      bytes = 0
    }
  }
  if (batch.length > 0) {
    await conn.query(head, [batch])
    total += batch.length
  }
  return total
}

function* mapRows<T>(rows: readonly T[], f: (row: T) => unknown[]): Generator<unknown[]> {
  for (const r of rows) yield f(r)
}

async function withLoadSession<T>(url: string, label: string, body: (conn: Connection) => Promise<T>): Promise<T> {
  const conn = await openConnection(url, {label})
  try {
    // Rows arrive in snapshot order (children may precede parents, e.g. nested providers), and id 0
    // is a real id for the standard resource classes.
    await conn.query('SET SESSION foreign_key_checks = 0')
    // The rows come from one snapshot of real databases: already unique where the schema says so.
    await conn.query('SET SESSION unique_checks = 0')
    await conn.query("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO')")
    await conn.query('START TRANSACTION')
    const out = await body(conn)
    await conn.query('COMMIT')
    return out
  } catch (error) {
    await conn.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    await closeConnection(conn)
  }
}

export interface SeedOptions {
  /**
   * Also write placement's standard resource classes (ids 0..20), as placement's own sync does on a
   * real database: capture must keep only the CUSTOM_* rows. Default true.
   */
  standardResourceClasses?: boolean
}

/** The test database a snapshot cell is written to: cell0 by flag, the others by name. */
function cellTarget(cell: CellInfo, cloud: TestCloud): string | undefined {
  if (cell.is_cell0) return cloud.cell0Url
  return cell.name === null ? undefined : cloud.cellUrls[cell.name]
}

/**
 * Writes every row of `snapshot` into the test cloud. cell_mappings.database_connection points at the
 * matching test cell database (by name, cell0 by uuid); a cell without a matching test database keeps
 * its snapshot URL (and is then expected to be unreachable).
 */
export async function seedSnapshot(snapshot: Snapshot, cloud: TestCloud, opts: SeedOptions = {}): Promise<void> {
  const s = snapshot
  const cellUrls = new Map<string, string>()
  for (const cell of s.cells) {
    const target = cellTarget(cell, cloud)
    if (target !== undefined) cellUrls.set(cell.uuid, target)
    else if (s.nova.services.some((r) => r.cell_uuid === cell.uuid) || s.nova.instances.some((r) => r.cell_uuid === cell.uuid)) {
      throw new Error(`snapshot cell ${cell.name ?? cell.uuid} has rows but the test cloud has no database for it`)
    }
  }

  const api = withLoadSession(cloud.apiUrl, 'nova_api', async (conn) => {
    await insertRows(
      conn,
      'cell_mappings',
      ['id', 'uuid', 'name', 'transport_url', 'database_connection', 'disabled'],
      mapRows(s.cells, (c) => [c.id, c.uuid, c.name, c.transport_url, cellUrls.get(c.uuid) ?? c.database_connection, c.disabled]),
    )
    const a = s.nova_api
    await insertSpec(conn, HOST_MAPPINGS, a.host_mappings)
    await insertSpec(conn, INSTANCE_MAPPINGS, a.instance_mappings)
    await insertSpec(conn, FLAVORS, a.flavors)
    await insertRows(
      conn,
      'flavor_extra_specs',
      ['flavor_id', 'key', 'value'],
      (function* () {
        for (const f of a.flavors) for (const [k, v] of Object.entries(f.extra_specs)) yield [f.id, k, v]
      })(),
    )
    await insertSpec(conn, AGGREGATES, a.aggregates)
    await insertRows(
      conn,
      'aggregate_hosts',
      ['aggregate_id', 'host'],
      (function* () {
        for (const g of a.aggregates) for (const h of g.hosts) yield [g.id, h]
      })(),
    )
    await insertRows(
      conn,
      'aggregate_metadata',
      ['aggregate_id', 'key', 'value'],
      (function* () {
        for (const g of a.aggregates) for (const [k, v] of Object.entries(g.metadata)) yield [g.id, k, v]
      })(),
    )
    await insertSpec(conn, BUILD_REQUESTS, a.build_requests)
    if (a.request_specs) await insertSpec(conn, REQUEST_SPECS, a.request_specs)
    await insertSpec(conn, INSTANCE_GROUPS, a.instance_groups)
    await insertRows(
      conn,
      'instance_group_policy',
      ['group_id', 'policy', 'rules'],
      (function* () {
        for (const g of a.instance_groups) for (const p of g.policies) yield [g.id, p.policy, p.rules]
      })(),
    )
    await insertRows(
      conn,
      'instance_group_member',
      ['group_id', 'instance_uuid'],
      (function* () {
        for (const g of a.instance_groups) for (const m of g.members) yield [g.id, m]
      })(),
    )
  })

  const placement = async (): Promise<void> => {
    // Same database as nova_api (pre-Stein layout): wait for the api load to avoid two writers.
    if (cloud.placementUrl === cloud.apiUrl) await api
    await withLoadSession(cloud.placementUrl, 'placement', async (conn) => {
      const p = s.placement
      if (opts.standardResourceClasses ?? true) {
        await insertRows(
          conn,
          'resource_classes',
          ['id', 'name'],
          STANDARD_RESOURCE_CLASSES.map((name, id) => [id, name]),
        )
      }
      await insertRows(
        conn,
        'resource_classes',
        ['id', 'name'],
        mapRows(p.resource_classes, (r) => [r.id, r.name]),
      )
      await insertSpec(conn, TRAITS, p.traits)
      await insertSpec(conn, PROJECTS, p.projects)
      await insertSpec(conn, USERS, p.users)
      await insertSpec(conn, CONSUMER_TYPES, p.consumer_types)
      await insertSpec(conn, RESOURCE_PROVIDERS, p.resource_providers)
      await insertSpec(conn, INVENTORIES, p.inventories)
      await insertSpec(conn, CONSUMERS, p.consumers)
      await insertSpec(conn, ALLOCATIONS, p.allocations)
      await insertSpec(conn, RESOURCE_PROVIDER_TRAITS, p.resource_provider_traits)
      await insertSpec(conn, PLACEMENT_AGGREGATES, p.placement_aggregates)
      await insertSpec(conn, RESOURCE_PROVIDER_AGGREGATES, p.resource_provider_aggregates)
    })
  }

  const cellLoads = s.cells
    .filter((c) => cellUrls.has(c.uuid))
    .map((cell) =>
      withLoadSession(cellUrls.get(cell.uuid) as string, `cell ${cell.name ?? cell.uuid}`, async (conn) => {
        const mine = <T extends {cell_uuid: string}>(rows: readonly T[]): T[] => rows.filter((r) => r.cell_uuid === cell.uuid)
        await insertSpec(conn, SERVICES, mine(s.nova.services))
        await insertSpec(conn, COMPUTE_NODES, mine(s.nova.compute_nodes))
        const instances = mine(s.nova.instances)
        await insertSpec(conn, INSTANCES, instances)
        await insertRows(
          conn,
          'instance_extra',
          ['instance_uuid', 'numa_topology', 'pci_requests', 'flavor', 'deleted'],
          (function* () {
            for (const r of instances) if (r.extra !== null) yield [r.uuid, r.extra.numa_topology, r.extra.pci_requests, r.extra.flavor, 0]
          })(),
        )
        await insertSpec(conn, MIGRATIONS, mine(s.nova.migrations))
      }),
    )

  await Promise.all([api, placement(), ...cellLoads])
}

/**
 * A copy of `snapshot` with rows in the order captureLive returns them: cells by id; cell tables
 * grouped by cell (in cell id order) then by id; link tables by primary key; everything else by id.
 * Snapshots from the generator interleave cells, so compare a capture with this.
 */
export function sortLikeCapture(snapshot: Snapshot): Snapshot {
  const cellRank = new Map([...snapshot.cells].sort((a, b) => a.id - b.id).map((c, i) => [c.uuid, i]))
  const byCell = <T extends {cell_uuid: string; id: number}>(rows: T[]): T[] =>
    [...rows].sort((a, b) => (cellRank.get(a.cell_uuid) ?? 1e9) - (cellRank.get(b.cell_uuid) ?? 1e9) || a.id - b.id)
  const byId = <T extends {id: number}>(rows: T[]): T[] => [...rows].sort((a, b) => a.id - b.id)
  const p = snapshot.placement
  return {
    ...snapshot,
    cells: byId(snapshot.cells),
    nova_api: {
      ...snapshot.nova_api,
      host_mappings: byId(snapshot.nova_api.host_mappings),
      instance_mappings: byId(snapshot.nova_api.instance_mappings),
      flavors: byId(snapshot.nova_api.flavors),
      aggregates: byId(snapshot.nova_api.aggregates),
      build_requests: byId(snapshot.nova_api.build_requests),
      instance_groups: byId(snapshot.nova_api.instance_groups),
    },
    nova: {
      services: byCell(snapshot.nova.services),
      compute_nodes: byCell(snapshot.nova.compute_nodes),
      instances: byCell(snapshot.nova.instances),
      migrations: byCell(snapshot.nova.migrations),
    },
    placement: {
      ...p,
      resource_providers: byId(p.resource_providers),
      inventories: byId(p.inventories),
      allocations: byId(p.allocations),
      consumers: byId(p.consumers),
      consumer_types: byId(p.consumer_types),
      projects: byId(p.projects),
      users: byId(p.users),
      resource_classes: byId(p.resource_classes),
      traits: byId(p.traits),
      resource_provider_traits: [...p.resource_provider_traits].sort((a, b) => a.trait_id - b.trait_id || a.resource_provider_id - b.resource_provider_id),
      placement_aggregates: byId(p.placement_aggregates),
      resource_provider_aggregates: [...p.resource_provider_aggregates].sort(
        (a, b) => a.resource_provider_id - b.resource_provider_id || a.aggregate_id - b.aggregate_id,
      ),
    },
  }
}
