/**
 * Every connection setting a database URL (or nova.conf) can carry, besides TLS (tls.ts): one table
 * of the keyword arguments PyMySQL 1.0 accepts and what cloudctl does with each, and the session a
 * connection gets once it is open.
 *
 * SQLAlchemy's pymysql dialect hands every query parameter of a URL to pymysql.connect() as a keyword
 * argument: a name PyMySQL does not know makes nova fail to connect (TypeError), so cloudctl refuses
 * it too. A parameter that changes what is read or written, and that cloudctl does not implement, is
 * refused (exit 2) rather than dropped; one that cannot change a row cloudctl reads or writes is
 * ignored, and the README "Connecting" says so for each.
 *
 * Galera (`@@wsrep_on`): a node applies the other nodes' transactions asynchronously, so a read on a
 * node that lags sees rows already changed elsewhere. Every cloudctl session on such a node reads
 * with `wsrep_sync_wait` (bit 1: reads wait until the node has applied everything the cluster had
 * committed when they started). The value nova would set is honoured and never lowered: the URL's
 * `init_command=SET SESSION wsrep_sync_wait=N` (PyMySQL runs it on connect) and oslo.db's
 * `mysql_wsrep_sync_wait` of the connection's nova.conf section (run after it, so it wins), each
 * OR-ed with 1.
 */
import type {ResolvedConnections} from '../config/resolve.js'
import {ConfigError} from '../errors.js'
import {SSL_PARAMETERS} from './tls.js'

export type Handling = 'honoured' | 'ignored' | 'refused'

/**
 * PyMySQL 1.0's connect() keyword arguments other than ssl_* (tls.ts), and what cloudctl does with
 * each: the README "Connecting" table says the same, a test holds them equal.
 */
export const URL_PARAMETERS = {
  user: 'honoured',
  password: 'honoured',
  passwd: 'honoured',
  host: 'honoured',
  database: 'honoured',
  db: 'honoured',
  port: 'refused',
  unix_socket: 'honoured',
  read_default_file: 'honoured',
  read_default_group: 'honoured',
  connect_timeout: 'honoured',
  init_command: 'honoured',
  charset: 'ignored',
  collation: 'ignored',
  use_unicode: 'ignored',
  binary_prefix: 'ignored',
  program_name: 'ignored',
  autocommit: 'ignored',
  defer_connect: 'ignored',
  max_allowed_packet: 'ignored',
  local_infile: 'ignored',
  read_timeout: 'ignored',
  write_timeout: 'ignored',
  sql_mode: 'ignored',
  client_flag: 'refused',
  compress: 'refused',
  named_pipe: 'refused',
  bind_address: 'refused',
  server_public_key: 'refused',
  auth_plugin_map: 'refused',
  conv: 'refused',
  cursorclass: 'refused',
} as const satisfies Record<string, Handling>

const REFUSED_WHY: Record<string, string> = {
  port: 'pymysql rejects a port given as a query parameter: put it after the host (HOST:PORT)',
  client_flag: 'cloudctl does not implement client flags from a URL',
  compress: 'cloudctl does not implement the compressed protocol',
  named_pipe: 'named pipes are a Windows transport',
  bind_address: 'cloudctl does not implement choosing the source address',
  server_public_key: 'cloudctl does not implement sha256_password keys from a URL',
  auth_plugin_map: 'PyMySQL needs a dict, which a URL cannot carry',
  conv: 'PyMySQL needs a dict, which a URL cannot carry',
  cursorclass: 'PyMySQL needs a class, which a URL cannot carry',
}

/** A wsrep_sync_wait someone configured, and where (for messages and the snapshot). */
export interface SyncWaitSetting {
  value: number
  origin: string
}

/** MariaDB 10.11's range of wsrep_sync_wait (a bit mask: 1 read, 2 update/delete, 4 insert/replace, 8 show). */
const SYNC_WAIT_MAX = 15

const HINT = 'README "Connecting" lists every URL parameter, what PyMySQL (nova) does with it and what cloudctl does.'
const INIT_COMMAND = /^\s*SET\s+(?:SESSION\s+|LOCAL\s+|@@SESSION\.|@@LOCAL\.|@@)?wsrep_sync_wait\s*=\s*(\d+)\s*;?\s*$/i

/**
 * Checks a URL's query parameters (ssl_* excepted) against URL_PARAMETERS; returns the
 * wsrep_sync_wait its init_command sets, if it has one.
 */
export function checkUrlParameters(params: Readonly<Record<string, string>>, label: string): SyncWaitSetting | undefined {
  for (const k of Object.keys(params)) {
    if (k in SSL_PARAMETERS || k.startsWith('ssl_')) continue
    const handling = (URL_PARAMETERS as Record<string, Handling>)[k]
    if (handling === undefined)
      throw new ConfigError(`${label}: has the query parameter '${k}', which PyMySQL does not know (nova would fail to connect)`, HINT, 'BadDbUrl')
    if (handling === 'refused')
      throw new ConfigError(`${label}: sets ${k}: ${REFUSED_WHY[k] ?? 'cloudctl does not implement it'}`, `Remove ${k} from the URL. ${HINT}`, 'BadDbUrl')
  }
  const init = params.init_command
  if (init === undefined) return undefined
  const m = INIT_COMMAND.exec(init)
  if (!m)
    throw new ConfigError(
      `${label}: has an init_command cloudctl does not run: from a URL it runs only SET SESSION wsrep_sync_wait=N (any other SQL could write, and cloudctl's reads are read-only)`,
      `Remove init_command, or reduce it to SET SESSION wsrep_sync_wait=N. ${HINT}`,
      'BadDbUrl',
    )
  return syncWait(m[1], `init_command of the ${label}`, label)
}

/** oslo.db's mysql_wsrep_sync_wait of a nova.conf section (an IntOpt), or undefined when unset. */
export function syncWaitOption(raw: string | undefined, origin: string): SyncWaitSetting | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  return syncWait(raw.trim(), origin, origin)
}

function syncWait(text: string, origin: string, label: string): SyncWaitSetting {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (!(n >= 0 && n <= SYNC_WAIT_MAX))
    throw new ConfigError(
      `${label}: wsrep_sync_wait must be an integer from 0 to ${SYNC_WAIT_MAX}`,
      'wsrep_sync_wait is a bit mask: 1 reads, 2 updates and deletes, 4 inserts, 8 SHOW; cloudctl always adds 1.',
      'BadWsrepSyncWait',
    )
  return {value: n, origin}
}

/** The wsrep_sync_wait a cloudctl session on a Galera node uses: what nova would set, with reads always causal. */
export function effectiveSyncWait(fromUrl: SyncWaitSetting | undefined, fromConf: SyncWaitSetting | undefined): number {
  // oslo.db sets its option after PyMySQL ran the init_command: the nova.conf value wins.
  return ((fromConf ?? fromUrl)?.value ?? 0) | 1
}

/** The nova.conf wsrep_sync_wait of each kind of database (exit 2 for a value oslo.db would refuse). */
export function confSyncWaits(r: Pick<ResolvedConnections, 'wsrepSyncWait'>): {api?: SyncWaitSetting; placement?: SyncWaitSetting; cell?: SyncWaitSetting} {
  const w = r.wsrepSyncWait
  return {
    api: syncWaitOption(w.api?.raw, w.api?.origin ?? ''),
    placement: syncWaitOption(w.placement?.raw, w.placement?.origin ?? ''),
    cell: syncWaitOption(w.cell?.raw, w.cell?.origin ?? ''),
  }
}
