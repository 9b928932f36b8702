/**
 * The one place that opens MySQL/MariaDB connections. mysql2 is imported lazily so that commands
 * working from a snapshot file never load the driver.
 *
 * Driver errors become one-line CloudctlErrors (db-errors.ts). A Galera node's session reads
 * causally (session.ts).
 */
import {connectionOptions, type DbUrl, parseDbUrl} from './url.js'
import {mysql2Ssl} from './tls.js'
import {effectiveSyncWait, type SyncWaitSetting} from './session.js'
import {type DbErrorContext, mapDbError} from './db-errors.js'
import {dbTimeouts, noAnswerError} from './timeouts.js'

export {type DbErrorContext, mapDbError} from './db-errors.js'

export type Connection = import('mysql2/promise').Connection

export interface OpenOptions {
  /** Names the database in errors: 'nova_api', 'placement', 'cell cell1'. */
  label?: string
  multipleStatements?: boolean
  /** oslo.db's mysql_wsrep_sync_wait of the nova.conf section this database is configured in (session.ts). */
  wsrepSyncWait?: SyncWaitSetting
}

/** What a connection's session is on the server: the Galera node it reached and the wsrep_sync_wait it reads with. */
export interface SessionInfo {
  /** @@wsrep_on: the server replicates through Galera. */
  wsrep: boolean
  nodeName: string | null
  /** The session's wsrep_sync_wait (null: not a Galera node). */
  syncWait: number | null
  /** wsrep_cluster_state_uuid: the same on every node of one cluster (its data's identity). */
  clusterUuid?: string | null
}

let driver: Promise<typeof import('mysql2/promise')> | undefined
async function mysql(): Promise<typeof import('mysql2/promise')> {
  driver ??= import('mysql2/promise').then((m) => (m as unknown as {default?: typeof import('mysql2/promise')}).default ?? m)
  return driver
}

/**
 * Opens one connection. Rows come back with DATETIME as 'YYYY-MM-DD HH:MM:SS' strings and the
 * session in UTC, the way nova writes them.
 */
export async function openConnection(url: string | DbUrl, opts: OpenOptions = {}): Promise<Connection> {
  const u = typeof url === 'string' ? parseDbUrl(url, opts.label ? `${opts.label} database URL` : 'database URL') : url
  const label = opts.label ?? u.database ?? 'database'
  const o = connectionOptions(u)
  const limits = dbTimeouts()
  // The URL's own connect_timeout (pymysql's) wins; otherwise the operator's bound for every database.
  if (u.params.connect_timeout === undefined) o.connectTimeout = limits.connectMs
  const m = await mysql()
  let conn: Connection | undefined
  try {
    conn = await m.createConnection({
      host: o.host,
      port: o.port,
      socketPath: o.socketPath,
      user: o.user,
      password: o.password,
      database: o.database,
      connectTimeout: o.connectTimeout,
      ssl: o.ssl ? mysql2Ssl(o.ssl, label) : undefined,
      charset: 'UTF8MB4_GENERAL_CI',
      dateStrings: true,
      timezone: 'Z',
      supportBigNumbers: true,
      multipleStatements: opts.multipleStatements ?? false,
    })
    // A connection error after the handshake (server restart) must not crash the process: the
    // pending query rejects and is mapped there.
    rawConnection(conn).on('error', () => {})
    opened.set(conn, {label, url: u, session: {wsrep: false, nodeName: null, syncWait: null}})
    // A server can finish the handshake and then stop answering: bounded like the connect. A metadata
    // lock (LOCK TABLES, DDL) is waited for lock_wait_timeout, which servers set to a day.
    await queryWithin(conn, "SET time_zone = '+00:00', SESSION lock_wait_timeout = ?", [limits.readLockWaitS], o.connectTimeout, {label, url: u})
    await startSession(conn, u, opts, label, o.connectTimeout)
    return conn
  } catch (error) {
    // A session that could not be set up is not handed out: the server keeps no half-made one.
    conn?.destroy()
    throw mapDbError(error, {label, url: u})
  }
}

/** What openConnection knows of a connection, for errors: its label and URL (shown redacted), its session. */
const opened = new WeakMap<Connection, {label: string; url: DbUrl; session: SessionInfo}>()

export function connectionContext(conn: Connection, table?: string): DbErrorContext {
  const o = opened.get(conn)
  return {label: o?.label, url: o?.url, table, ...(o?.session.nodeName ? {node: o.session.nodeName} : {})}
}

export function sessionOf(conn: Connection): SessionInfo {
  return opened.get(conn)?.session ?? {wsrep: false, nodeName: null, syncWait: null}
}

/**
 * A Galera node reads (and repairs) causally: wsrep_sync_wait with bit 1, never lower than what nova
 * would set (session.ts). SHOW VARIABLES rather than SELECT @@wsrep_on: MySQL has no such variable.
 */
async function startSession(conn: Connection, u: DbUrl, opts: OpenOptions, label: string, ms: number): Promise<void> {
  const rows = (await queryWithin(conn, "SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_node_name')", [], ms, {label, url: u})) as Array<{
    Variable_name: string
    Value: string
  }>
  const vars = new Map(rows.map((r) => [String(r.Variable_name).toLowerCase(), String(r.Value)]))
  if (vars.get('wsrep_on')?.toUpperCase() !== 'ON') return
  const session: SessionInfo = {wsrep: true, nodeName: vars.get('wsrep_node_name') || null, syncWait: effectiveSyncWait(u.syncWait, opts.wsrepSyncWait)}
  const ctx = {label, url: u, ...(session.nodeName ? {node: session.nodeName} : {})}
  await queryWithin(conn, 'SET SESSION wsrep_sync_wait = ?', [session.syncWait], ms, ctx)
  const status = (await queryWithin(conn, "SHOW STATUS LIKE 'wsrep_cluster_state_uuid'", [], ms, ctx)) as Array<{Value: string}>
  session.clusterUuid = status[0]?.Value || null
  opened.set(conn, {label, url: u, session})
}

/**
 * A query the client gives up on after `ms` (undefined: no bound): a server that stops answering
 * (SIGSTOP, a dead network path) otherwise holds the caller forever. The connection is then
 * destroyed: its protocol state is unknown, and the server rolls back what it had open once it
 * sees the socket closed. Errors are mapped (mapDbError) with `ctx`.
 */
export async function queryWithin(conn: Connection, sql: string, params: unknown[], ms: number | undefined, ctx: DbErrorContext): Promise<unknown> {
  try {
    const [rows] = await conn.query(ms === undefined ? {sql} : {sql, timeout: ms}, params)
    return rows
  } catch (error) {
    if ((error as {code?: string}).code !== 'PROTOCOL_SEQUENCE_TIMEOUT' || ms === undefined) throw mapDbError(error, ctx)
    try {
      conn.destroy()
    } catch {
      // already gone
    }
    throw mapDbError(noAnswerError(ms), ctx)
  }
}

/** The callback-style connection under a promise one: it is the one that can stream. */
export function rawConnection(conn: Connection): import('mysql2').Connection {
  return (conn as unknown as {connection: import('mysql2').Connection}).connection
}

/** Read-only session with one consistent view of the whole database (InnoDB MVCC). */
export async function beginConsistentRead(conn: Connection, ctx: DbErrorContext = {}): Promise<void> {
  // One statement, one round trip: a cell's connection opens while other connections stream
  // rows, and each of its round trips waits for the one thread that parses them.
  await queryWithin(conn, 'START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT', [], dbTimeouts().readIdleMs, ctx)
}

/** How long closing waits for the server before the socket is simply dropped. */
const CLOSE_WAIT_MS = 2_000

/** Closes quietly and promptly: a broken or frozen server has nothing left to say. */
export async function closeConnection(conn: Connection | undefined): Promise<void> {
  if (!conn) return
  let timer: NodeJS.Timeout | undefined
  try {
    const ended = await Promise.race([conn.end().then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), CLOSE_WAIT_MS)))])
    if (!ended) conn.destroy()
  } catch {
    try {
      conn.destroy()
    } catch {
      // already gone
    }
  } finally {
    clearTimeout(timer)
  }
}
