/**
 * Driver errors as one-line CloudctlErrors naming the database (and the Galera node) and what to
 * check; every message goes through `scrub` so that a password never leaks, even when the driver
 * echoes it. connection.ts re-exports mapDbError: callers keep importing it from there.
 */
import {CloudctlError, ExitCode} from '../errors.js'
import {scrub} from '../util/redact.js'
import {type DbUrl, parseDbUrl} from './url.js'
import {PLACEMENT_TABLES as SNAPSHOT_PLACEMENT_TABLES} from '../domain/snapshot.js'
import {showSeconds} from './timeouts.js'

/** Context for error mapping: which database, and which table was being read. */
export interface DbErrorContext {
  label?: string
  url?: DbUrl | string
  table?: string
  /** Column list of the query, to name a missing column when the server does not say which table. */
  columns?: readonly string[]
  /** The Galera node (wsrep_node_name) the connection reached, when the server is one. */
  node?: string
}

// ---------------------------------------------------------------- error mapping

// Every placement table the snapshot reads, to name the right database in errors.
const PLACEMENT_TABLES = new Set<string>(SNAPSHOT_PLACEMENT_TABLES)
const NOVA_API_TABLES = new Set([
  'cell_mappings',
  'host_mappings',
  'instance_mappings',
  'flavors',
  'flavor_extra_specs',
  'aggregates',
  'aggregate_hosts',
  'aggregate_metadata',
  'request_specs',
  'build_requests',
  'instance_groups',
  'instance_group_member',
  'instance_group_policy',
])

/** Release that added a column cloudctl reads: a missing one says how old the schema is. */
const COLUMN_RELEASES: Record<string, string> = {
  'compute_nodes.mapped': 'Ocata',
  'compute_nodes.uuid': 'Mitaka',
  'compute_nodes.disk_allocation_ratio': 'Ocata',
  'compute_nodes.cpu_allocation_ratio': 'Kilo',
  'compute_nodes.ram_allocation_ratio': 'Kilo',
  'services.uuid': 'Pike',
  'services.forced_down': 'Liberty',
  'services.last_seen_up': 'Liberty',
  'services.version': 'Liberty',
  'instances.hidden': 'Stein',
  'migrations.uuid': 'Queens',
  'migrations.cross_cell_move': 'Ussuri',
  'migrations.hidden': 'Mitaka',
  'migrations.migration_type': 'Liberty',
  'cell_mappings.disabled': 'Stein',
  'instance_mappings.queued_for_delete': 'Stein',
  'instance_mappings.user_id': 'Train',
  'flavors.description': 'Queens',
  'aggregates.uuid': 'Newton',
  'consumers.consumer_type_id': 'Xena (placement 6.0.0)',
  'consumers.generation': 'Rocky',
  'resource_providers.root_provider_id': 'Queens',
  'resource_providers.parent_provider_id': 'Queens',
}
const TABLE_RELEASES: Record<string, string> = {
  consumer_types: 'Xena (placement 6.0.0)',
  consumers: 'Pike',
  projects: 'Pike',
  users: 'Pike',
  cell_mappings: 'Liberty',
  host_mappings: 'Mitaka',
  instance_mappings: 'Liberty',
  build_requests: 'Mitaka',
  request_specs: 'Mitaka',
  flavors: 'Newton (flavors in nova_api)',
  aggregates: 'Ocata (aggregates in nova_api)',
  instance_groups: 'Ocata (instance groups in nova_api)',
}

interface DriverError {
  code?: string
  errno?: number
  sqlMessage?: string
  message?: string
  fatal?: boolean
}

function displayOf(url: DbUrl | string | undefined): string | undefined {
  if (url === undefined) return undefined
  if (typeof url !== 'string') return url.display
  try {
    return parseDbUrl(url).display
  } catch {
    return scrub(url)
  }
}

/**
 * MariaDB answers an account with REQUIRE SSL, and a server with require_secure_transport, reached
 * without TLS with the same error 1045 as a wrong password: a connection without TLS says both.
 */
function plaintext(url: DbUrl | string | undefined): boolean {
  if (url === undefined) return false
  if (typeof url !== 'string') return url.tls === undefined
  try {
    return parseDbUrl(url).tls === undefined
  } catch {
    return false
  }
}

function err(message: string, code: string, hint: string | undefined, cause: unknown, exitCode: 1 | 2 = ExitCode.CONFIG): CloudctlError {
  return new CloudctlError(scrub(message.replace(/\s*\n\s*/g, ' ')), {exitCode, code, hint: hint === undefined ? undefined : scrub(hint), cause})
}

/** Maps a mysql2 error (or anything thrown while talking to a database) to a one-line CloudctlError. */
export function mapDbError(error: unknown, ctx: DbErrorContext = {}): CloudctlError {
  if (error instanceof CloudctlError) return error
  const e = (error ?? {}) as DriverError
  const code = e.code ?? ''
  const driverMsg = scrub(String(e.sqlMessage ?? e.message ?? error))
  const where = displayOf(ctx.url)
  // "the placement database (node galera-2)"; never "the database database" when nothing names it.
  const named = ctx.label ?? (typeof ctx.url === 'object' ? ctx.url.database : undefined)
  const db = `${named === undefined ? 'database' : `${named} database`}${ctx.node ? ` (node ${ctx.node})` : ''}`
  const at = where ? ` at ${where}` : ''
  // Lock waits that ran out (innodb_lock_wait_timeout, lock_wait_timeout) and NOWAIT both mean a holder.
  const lockHeldElsewhere = (): CloudctlError =>
    err(
      `timed out waiting for a lock in the ${db}${at}${ctx.table ? ` on ${ctx.table}` : ''}: another session holds it (LOCK TABLES, DDL or a long transaction)`,
      'DbLockTimeout',
      'Find the holder (SHOW PROCESSLIST, information_schema.INNODB_TRX) and re-run once it is released; bounds: docs/repairs.md "Timeouts" (CLOUDCTL_DB_LOCK_TIMEOUT, CLOUDCTL_DB_READ_LOCK_TIMEOUT).',
      error,
      ExitCode.UNEXPECTED,
    )

  switch (code) {
    case 'ECONNREFUSED':
    case 'ETIMEDOUT':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ECONNRESET':
    case 'ENOENT':
    case 'EACCES':
      return err(
        `cannot reach the ${db}${at}: ${code}${code === 'ENOTFOUND' ? ' (unknown host name)' : ''}`,
        'DbUnreachable',
        code === 'ENOENT' || code === 'EACCES'
          ? 'Check the unix_socket path in the URL: is the server running on this machine, and may this user open the socket?'
          : 'Is the server running, is the host name right, and does a firewall allow the port from here?',
        error,
      )
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
    case 'ER_HOST_NOT_PRIVILEGED':
    case 'ER_HOST_IS_BLOCKED':
      return err(
        `access denied to the ${db}${at}${code === 'ER_HOST_NOT_PRIVILEGED' ? ': this host may not connect' : `: wrong user name or password${plaintext(ctx.url) ? ', or the server/account requires TLS: add ?ssl_ca=' : ''}`}`,
        'DbAccessDenied',
        code === 'ER_HOST_IS_BLOCKED'
          ? 'The server blocked this host after too many failed connections: run FLUSH HOSTS on it.'
          : "Check the user and password in the URL (URL-encode special characters, e.g. %40 for @); the user also needs a grant for this client's host.",
        error,
      )
    case 'ER_DBACCESS_DENIED_ERROR':
    case 'ER_TABLEACCESS_DENIED_ERROR':
    case 'ER_COLUMNACCESS_DENIED_ERROR':
      return err(
        `permission denied on the ${db}${at}: ${driverMsg}`,
        'DbAccessDenied',
        'cloudctl needs SELECT on the nova, nova_api and placement databases (and INSERT/UPDATE/DELETE for repairs).',
        error,
      )
    case 'ER_BAD_DB_ERROR':
      return err(
        `unknown database${at}: ${driverMsg}`,
        'DbUnknownDatabase',
        'Check the database name at the end of the URL (SHOW DATABASES on that server).',
        error,
      )
    case 'ER_NO_DB_ERROR':
      // The URL named a server but no database (mysql://host:3306 or a trailing slash).
      return err(
        `no database name in the URL of the ${db}${at}`,
        'DbNoDatabase',
        'Add the database name at the end of the URL: ...@db-host:3306/nova_api.',
        error,
      )
    case 'ER_NO_SUCH_TABLE': {
      const m = /Table '(?:[^'.]*\.)?([^'.]+)' doesn't exist/.exec(e.sqlMessage ?? '')
      const table = m?.[1] ?? ctx.table ?? 'a table'
      if (PLACEMENT_TABLES.has(table) && TABLE_RELEASES[table] !== undefined && table !== 'consumers') {
        // The other placement tables are there: this one is just newer than the schema.
        return err(
          `table ${table} is missing in the ${db}${at}: placement older than ${TABLE_RELEASES[table]}?`,
          'DbMissingTable',
          'cloudctl reads the Zed schema (placement 8) or newer: run placement-manage db sync first.',
          error,
        )
      }
      if (PLACEMENT_TABLES.has(table)) {
        return err(
          `placement tables missing in this database (${table})${at}: older clouds keep them in nova_api, pass --placement-db with the nova_api URL`,
          'DbMissingTable',
          'Placement got its own database in Stein; before that its tables live in nova_api.',
          error,
        )
      }
      const release = TABLE_RELEASES[table]
      const kind = NOVA_API_TABLES.has(table) ? 'nova_api' : 'nova cell'
      return err(
        `table ${table} is missing in the ${db}${at}: ${release ? `older than ${release}, or ` : ''}not a ${kind} database?`,
        'DbMissingTable',
        `Check that the URL points at the ${kind} database and that \`nova-manage ${kind === 'nova_api' ? 'api_db' : 'db'} sync\` ran; cloudctl expects the Zed schema or newer.`,
        error,
      )
    }
    case 'ER_BAD_FIELD_ERROR': {
      const m = /Unknown column '(?:[^']*\.)?([^'.]+)'/.exec(e.sqlMessage ?? '')
      const column = m?.[1] ?? 'a column'
      const table = ctx.table ?? 'a table'
      const release = COLUMN_RELEASES[`${table}.${column}`]
      return err(
        `${table}.${column} is missing in the ${db}${at}: ${release ? `older than ${release}?` : 'older than Zed?'}`,
        'DbMissingColumn',
        'cloudctl reads the Zed (nova 26, placement 8) schema or newer: run the database migrations (nova-manage db sync / api_db sync, placement-manage db sync) first.',
        error,
      )
    }
    case 'ER_OPTION_PREVENTS_STATEMENT':
    case 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION':
      return err(`the ${db}${at} is read-only: ${driverMsg}`, 'DbReadOnly', 'Point cloudctl at the primary server to write.', error)
    case 'ER_CON_COUNT_ERROR':
    case 'ER_TOO_MANY_USER_CONNECTIONS':
    case 'ER_USER_LIMIT_REACHED':
      return err(
        `the ${db}${at} refused the connection: too many connections`,
        'DbTooManyConnections',
        'Retry later or raise max_connections / the per-user limit.',
        error,
      )
    case 'HANDSHAKE_SSL_ERROR':
    case 'HANDSHAKE_NO_SSL_SUPPORT':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return err(
        `TLS handshake with the ${db}${at} failed: ${driverMsg}`,
        'DbTls',
        code === 'ERR_TLS_CERT_ALTNAME_INVALID'
          ? 'The server certificate does not name the host in the URL: connect by a name it holds, or add ssl_check_hostname=false to accept any certificate of the CA (as nova then does).'
          : 'Check ssl_ca / ssl_capath (the CA that signed the server certificate) and ssl_cert / ssl_key in the URL.',
        error,
      )
    case 'CLOUDCTL_NO_ANSWER':
    case 'PROTOCOL_SEQUENCE_TIMEOUT':
      return err(
        `the ${db}${at} did not answer within ${showSeconds(Number((error as {timeoutMs?: number}).timeoutMs ?? 0))}${ctx.table ? ` (${ctx.table})` : ''}: the server is stalled (stopped, overloaded, or the network drops packets); cloudctl gave up and closed the connection`,
        'DbTimeout',
        'Check that server (is mariadbd running and answering? SHOW PROCESSLIST, its log, the host); bounds: docs/repairs.md "Timeouts" (CLOUDCTL_DB_*).',
        error,
        ExitCode.UNEXPECTED,
      )
    case 'ER_LOCK_WAIT_TIMEOUT':
      // On a Galera node a causal read (wsrep_sync_wait) that the node cannot serve in time fails with
      // this same error: the node is behind the cluster (desynced, its applier blocked, overloaded).
      if (ctx.node)
        return err(
          `timed out in the ${db}${at}${ctx.table ? ` on ${ctx.table}` : ''}: either this Galera node did not catch up with the cluster within repl.causal_read_timeout (cloudctl reads with wsrep_sync_wait, so it never reads what the node has not applied yet), or another session holds a lock`,
          'DbLockTimeout',
          `Check the node (SHOW STATUS LIKE 'wsrep_local_state_comment' should say Synced; wsrep_local_recv_queue, FLUSH TABLES WITH READ LOCK or a desync holds its applier) and SHOW PROCESSLIST for a lock holder; or connect through a synced node. Bounds: docs/repairs.md "Galera" and "Timeouts".`,
          error,
          ExitCode.UNEXPECTED,
        )
      return lockHeldElsewhere()
    case 'ER_LOCK_DEADLOCK':
      // Galera reports a transaction that lost certification to a write committed on another node
      // (or aborted by one, "brute force") with InnoDB's deadlock error.
      return err(
        `the ${db}${at} rolled back this transaction${ctx.table ? ` (on ${ctx.table})` : ''}: a concurrent write${ctx.node ? ', possibly on another Galera node,' : ''} touched the same rows (error 1213${ctx.node ? ': deadlock or certification conflict' : ': deadlock'})`,
        'DbDeadlock',
        'Someone else wrote the rows at the same time: look at what changed (run the audit again) before anything else.',
        error,
        ExitCode.UNEXPECTED,
      )
    case 'ER_LOCK_NOWAIT':
      return lockHeldElsewhere()
    case 'ER_QUERY_TIMEOUT':
    case 'ER_STATEMENT_TIMEOUT':
      return statementTimeout(db, at, ctx, error)
    case 'PROTOCOL_CONNECTION_LOST':
    case 'ER_SERVER_SHUTDOWN':
    case 'EPIPE':
      return err(
        `lost the connection to the ${db}${at}${ctx.table ? ` while reading ${ctx.table}` : ''}`,
        'DbConnectionLost',
        'Re-run the command; check the server log if it repeats.',
        error,
        ExitCode.UNEXPECTED,
      )
    default: {
      // MariaDB's max_statement_time error has a number the driver has no name for.
      if (e.errno === 1969) return statementTimeout(db, at, ctx, error)
      const what = ctx.table ? ` while reading ${ctx.table}` : ''
      const exit = code.startsWith('ER_') || code === '' ? ExitCode.UNEXPECTED : ExitCode.CONFIG
      return err(`error from the ${db}${at}${what}: ${code ? `${code}: ` : ''}${driverMsg}`, code ? `Db_${code}` : 'DbError', undefined, error, exit)
    }
  }
}

function statementTimeout(db: string, at: string, ctx: DbErrorContext, error: unknown): CloudctlError {
  return err(
    `a statement ran out of time in the ${db}${at}${ctx.table ? ` on ${ctx.table}` : ''} (max_statement_time): the server is overloaded or a lock is held`,
    'DbStatementTimeout',
    'Check that server (SHOW PROCESSLIST); bounds: docs/repairs.md "Timeouts" (CLOUDCTL_DB_STATEMENT_TIMEOUT).',
    error,
    ExitCode.UNEXPECTED,
  )
}
