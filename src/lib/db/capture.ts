/**
 * Reads the live databases into a Snapshot: nova_api, placement, and every cell (cell0 included),
 * each cell in parallel on its own connection.
 *
 * Every database is read in one read-only transaction WITH CONSISTENT SNAPSHOT, rows streamed in
 * primary-key order (300k instances or 1M allocations never sit in memory twice). A cell that cannot
 * be reached or read is recorded as unavailable with a redacted reason and contributes no rows;
 * nova_api and placement are required (exit 2 when unreachable).
 *
 * The tables themselves are read by family (read-nova-api.ts, read-placement.ts, read-cell.ts), each
 * table by its spec (table-reader.ts).
 */
import {noProgress, type ProgressSink, type SourceOptions} from '../snapshot/source.js'
import {resolveConnections, type ResolvedConnections} from '../config/resolve.js'
import {CELL0_UUID, type CellInfo, type NovaApiTables, type NovaCellTables, type Snapshot, SNAPSHOT_FORMAT_VERSION} from '../domain/snapshot.js'
import {NOVA_CELL_READ_TABLES} from '../domain/tables/index.js'
import {AUDIT_TRAITS} from '../domain/trait-sets.js'
import {cloudRelease, databaseRelease, type DatabaseKind, type DatabaseRelease, OLDEST_SUPPORTED_RELEASE} from '../domain/release.js'
import {CloudctlError, ConfigError, ExitCode} from '../errors.js'
import {scrub} from '../util/redact.js'
import {closeConnection} from './connection.js'
import {type CellMappingRow, readCellMappings, readNovaApi} from './read-nova-api.js'
import {AUDIT_VIEW, readCell} from './read-cell.js'
import {readDatabaseIdentity} from './database-identity.js'
import {readPlacement} from './read-placement.js'
import {readCellForScheduler, readNovaApiForScheduler, readPlacementForScheduler} from './read-scheduler.js'
import {joinChunks, openReader, type Reader} from './table-reader.js'
import {formatTemplatedDbUrl} from './url-template.js'
import {parseDbUrl} from './url.js'
import {confSyncWaits} from './session.js'

// ---------------------------------------------------------------- schema and release

/** Columns a newer nova added that cloudctl reads when they are there (the specs' `newer`). */
const OPTIONAL_COLUMNS = NOVA_CELL_READ_TABLES.flatMap((t) => Object.keys(t.newer ?? {}).map((c) => [t.name, c] as const))

interface SchemaProbe {
  alembic: string | null
  legacyMigrate: boolean
  /** 'table.column' of the OPTIONAL_COLUMNS present. */
  columns: Set<string>
}

async function probeSchema(r: Reader, optionalColumns: boolean): Promise<SchemaProbe> {
  // The version tables and the optional columns in one query: every round trip of a cell's
  // connection waits behind the rows the other connections stream.
  const wanted = optionalColumns ? OPTIONAL_COLUMNS.map(() => '(TABLE_NAME = ? AND COLUMN_NAME = ?)').join(' OR ') : ''
  const rows = await r.query(
    'information_schema',
    "SELECT TABLE_NAME AS t, NULL AS c FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('alembic_version', 'migrate_version')" +
      (wanted === '' ? '' : ` UNION ALL SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND (${wanted})`),
    optionalColumns ? OPTIONAL_COLUMNS.flat() : [],
  )
  const tables = new Set<string>()
  const columns = new Set<string>()
  for (const x of rows) {
    if (x.c === null || x.c === undefined) tables.add(String(x.t))
    else columns.add(`${String(x.t)}.${String(x.c)}`)
  }
  let alembic: string | null = null
  if (tables.has('alembic_version')) {
    // One row on a linear history; the lowest would be the one to upgrade if there were several.
    const heads = (await r.query('alembic_version', 'SELECT version_num FROM alembic_version ORDER BY version_num')).map((x) => String(x.version_num))
    alembic = heads[0] ?? null
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
      throw new CloudctlError(
        `${error.message} (schema found: ${release.name.includes(release.alembic_version) ? release.name : `${release.name}, alembic ${release.alembic_version}`})`,
        {
          exitCode: error.exitCode,
          code: error.code,
          hint: error.hint,
          cause: error,
        },
      )
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

// ---------------------------------------------------------------- cells

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

/** How a cell's tables are read: every row (readCell), or the scheduler view's. */
type CellRead = (r: Reader, cellUuid: string, present: ReadonlySet<string>) => Promise<NovaCellTables>

async function captureCell(cell: CellMappingRow, conns: ResolvedConnections, progress: ProgressSink, read: CellRead): Promise<CellResult> {
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
    reader = await openReader(label, url, progress, {wsrepSyncWait: confSyncWaits(conns).cell})
    const {release, probe} = await readRelease(reader, 'nova', true)
    info.identity = await readDatabaseIdentity(reader, url)
    const r = reader
    const tables = await withRelease(release, () => read(r, cell.uuid, probe.columns))
    // The newest code that runs against this cell: during a rolling upgrade the computes lag.
    let newest: number | null = null
    for (const svc of tables.services) if (svc.deleted === 0 && svc.version !== null && (newest === null || svc.version > newest)) newest = svc.version
    return {
      info,
      tables,
      release: newest === null ? release : databaseRelease('nova', probe.alembic, {legacyMigrate: probe.legacyMigrate, serviceVersion: newest}),
    }
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
      throw new ConfigError(
        `${origin} ${key}: ${byName.length} cells share that name`,
        `Use the cell uuid instead: ${byName.map((c) => c.uuid).join(', ')}.`,
        'AmbiguousCell',
      )
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

  const syncWaits = confSyncWaits(conns)
  const [apiOpen, placementOpen] = await Promise.allSettled([
    openReader('nova_api', apiUrl, progress, {wsrepSyncWait: syncWaits.api}),
    openReader('placement', placementUrl, progress, {wsrepSyncWait: syncWaits.placement}),
  ])
  if (apiOpen.status === 'rejected' || placementOpen.status === 'rejected') {
    if (apiOpen.status === 'fulfilled') await closeConnection(apiOpen.value.conn)
    if (placementOpen.status === 'fulfilled') await closeConnection(placementOpen.value.conn)
    throw apiOpen.status === 'rejected' ? apiOpen.reason : (placementOpen as PromiseRejectedResult).reason
  }
  const api = apiOpen.value
  const placement = placementOpen.value

  // The scheduler view reads instance rows in the cells once nova_api has said which (its groups
  // and request spec): the cells read their services and compute nodes meanwhile.
  const view = opts.schedulerView
  let apiRead: (t: NovaApiTables) => void = () => undefined
  let apiFailed: (e: unknown) => void = () => undefined
  const apiTables = new Promise<NovaApiTables>((resolve, reject) => {
    apiRead = resolve
    apiFailed = reject
  })
  const wanted = apiTables.then((t) => (view ? [...new Set([...(view.instance === undefined ? [] : [view.instance]), ...view.instances(t)])] : []))
  wanted.catch(() => undefined)
  // A view that does not say reads them without waiting for nova_api.
  const asks = view?.hostNumaTopology
  const hostNuma = asks ? apiTables.then((t) => asks.call(view, t)) : Promise.resolve(true)
  hostNuma.catch(() => undefined)
  const audit = !view && opts.auditView === true
  const read: CellRead = view
    ? (r, uuid, present) => readCellForScheduler(r, uuid, present, wanted, hostNuma)
    : audit
      ? (r, uuid, present) => readCell(r, uuid, present, AUDIT_VIEW, {blobsByDigest: true})
      : readCell

  let cellJobs: Array<Promise<CellResult>> = []
  try {
    const [apiRelease, placementRelease] = await Promise.all([readRelease(api, 'nova_api'), readRelease(placement, 'placement')])
    const [apiIdentity, placementIdentity] = await Promise.all([readDatabaseIdentity(api, apiUrl), readDatabaseIdentity(placement, placementUrl)])
    const cellRows = await withRelease(apiRelease.release, () => readCellMappings(api))
    checkOverrides(cellRows, conns)
    // Cells start as soon as their URLs are known, while nova_api and placement are still read.
    cellJobs = cellRows.map((c) => captureCell(c, conns, progress, read))
    // A cell may fail (a schema too old) while nova_api is still read: Promise.all below reports
    // it; until then the rejection must not count as unhandled (Node would end the process).
    for (const job of cellJobs) job.catch(() => undefined)
    const [novaApi, placementTables] = await Promise.all([
      withRelease(apiRelease.release, () => (view ? readNovaApiForScheduler(api, view) : readNovaApi(api, opts.requestSpecs ?? false))).then((t) => {
        apiRead(t)
        return t
      }),
      withRelease(placementRelease.release, () =>
        view ? readPlacementForScheduler(placement, view, apiTables) : readPlacement(placement, audit ? {traits: AUDIT_TRAITS} : {}),
      ),
    ])
    // A question that cannot say which instances it reads fails the read (not its cells).
    await wanted
    const cells = await Promise.all(cellJobs)
    const cellReleases: Record<string, DatabaseRelease> = {}
    for (const c of cells) if (c.release) cellReleases[c.info.uuid] = c.release

    // Each table sized once (joinChunks), not grown row by row: see readRows.
    const cellTables = cells.flatMap((c) => (c.tables ? [c.tables] : []))
    const nova: NovaCellTables = {
      services: joinChunks(cellTables.map((t) => t.services)),
      compute_nodes: joinChunks(cellTables.map((t) => t.compute_nodes)),
      instances: joinChunks(cellTables.map((t) => t.instances)),
      migrations: joinChunks(cellTables.map((t) => t.migrations)),
    }
    const snapshot: Snapshot = {
      format_version: SNAPSHOT_FORMAT_VERSION,
      captured_at: capturedAt,
      source: {
        kind: 'live',
        description: apiUrl.display,
        api_db: apiUrl.display,
        placement_db: placementUrl.display,
        databases: {nova_api: apiIdentity, placement: placementIdentity},
      },
      release: cloudRelease(apiRelease.release, placementRelease.release, cellReleases),
      cells: cells.map((c) => c.info),
      nova_api: novaApi,
      nova,
      placement: placementTables,
    }
    if (view) snapshot.scope = 'scheduler'
    else if (audit) snapshot.scope = 'audit'
    return snapshot
  } finally {
    // Cells waiting for nova_api's answer stop when it never comes (a no-op once it came).
    apiFailed(new CloudctlError('the nova_api read failed', {exitCode: ExitCode.CONFIG, code: 'DbReadAborted'}))
    // Cell readers close themselves; wait for them so no connection outlives a failed capture.
    await Promise.allSettled(cellJobs)
    await closeConnection(api.conn)
    await closeConnection(placement.conn)
  }
}
