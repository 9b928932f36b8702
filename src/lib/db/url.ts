/**
 * Database URLs as nova reads them. nova hands its connection strings to oslo.db, which hands them to
 * SQLAlchemy 1.4's make_url; the pymysql dialect then turns the URL into pymysql connect arguments.
 * This module reproduces that chain (Debian's SQLAlchemy 1.4.46 and PyMySQL, as installed with nova
 * Zed), so that a URL nova can use is a URL cloudctl can use, with the same user, password, host,
 * port and database:
 *  - make_url is one regular expression (not RFC 3986): the password runs from the first ':' of the
 *    user info to the first '@', so '/', '?', '#' and ':' may appear raw in it but '@' must be %40;
 *    only the user name and password are percent-decoded; the database name is taken as written;
 *  - query parameters override the URL parts (pymysql receives them as keyword arguments), and
 *    read_default_file / read_default_group fill what the URL leaves out from a my.cnf option file.
 * A URL that is wrong never has its text echoed in an error: any part of it may be a password.
 */
import {homedir} from 'node:os'

import {ConfigError} from '../errors.js'
import {MIB, readBoundedFileSync} from '../util/bounded-read.js'
import {REDACTED, registerSecret, registerUrlSecret} from '../util/redact.js'
import {parseSqlalchemyUrl, pythonInt, SQLA_URL} from '../util/sqlalchemy-url.js'
import {checkUrlParameters, type SyncWaitSetting} from './session.js'
import {decideTls, type TlsSettings} from './tls.js'

export interface DbUrl {
  /** As written: 'mysql', 'mysql+pymysql', 'mysql+mysqldb', 'mariadb+pymysql'... */
  scheme: string
  user: string
  /** Decoded; never print it. */
  password?: string
  host: string
  port: number
  socketPath?: string
  database?: string
  /** Query parameters other than the ones we map (charset, unix_socket...). */
  params: Record<string, string>
  /** The my.cnf-style file that supplied missing parts (read_default_file), if any. */
  optionFile?: string
  /** TLS as PyMySQL would use it (tls.ts); undefined: none. */
  tls?: TlsSettings
  /** The wsrep_sync_wait of the URL's init_command (session.ts), if it sets one. */
  syncWait?: SyncWaitSetting
  /** Redacted display form: mysql+pymysql://nova:***@db1:3306/nova_api */
  display: string
}

/** The subset of mysql2's ConnectionOptions that a URL decides. */
export interface DbConnectionOptions {
  host?: string
  port?: number
  socketPath?: string
  user: string
  password?: string
  database?: string
  connectTimeout: number
  /** File paths: connection.ts reads them. */
  ssl?: TlsSettings
}

const HINT =
  'Expected mysql+pymysql://USER:PASSWORD@HOST[:PORT]/DATABASE[?unix_socket=/path/to/mysqld.sock]. A password may contain / ? # : raw, but an @ must be written %40 (and % as %25), as for nova. To keep the password out of the command line, use ?read_default_file=~/.my.cnf or --nova-conf / a profile.'

const DEFAULT_PORT = 3306
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/** scheme://user:***@… at most: the only parts of a broken URL that are safe to show. */
export function brokenShape(text: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+._-]*):\/\//.exec(text)
  // Callers put it in parentheses: '(text not shown)', never '((not shown))'.
  if (!m) return 'text not shown'
  return `${m[1]}://…`
}

function bad(label: string, what: string, hint = HINT): ConfigError {
  return new ConfigError(`${label} ${what}`, hint, 'BadDbUrl')
}

/** The last of a repeated query parameter (pymysql receives a list; we refuse that below). */
function single(query: Record<string, string | string[]>, key: string, label: string): string | undefined {
  const v = query[key]
  if (Array.isArray(v)) throw bad(label, `repeats the query parameter '${key}'`)
  return v
}

/** A my.cnf is a few lines; a server's full my.cnf with every group stays far below 1 MiB. */
const MAX_OPTION_FILE_BYTES = 1 * MIB

/** The [client]-style group of a my.cnf as pymysql reads it (configparser: '=' or ':', no inline comments). */
export function readOptionFile(path: string, group: string, label: string): Record<string, string> {
  const expanded = path === '~' || path.startsWith('~/') ? `${homedir()}${path.slice(1)}` : path
  const text = readBoundedFileSync(
    expanded,
    MAX_OPTION_FILE_BYTES,
    (why) =>
      new ConfigError(
        `${label}: cannot read option file ${path} (read_default_file): ${why}`,
        'Point read_default_file at a readable, regular my.cnf-style file with a [client] section (user, password, host, port, database, socket).',
        'OptionFileUnreadable',
      ),
  )
  const out: Record<string, string> = Object.create(null) as Record<string, string>
  let section: string | undefined
  let lastKey: string | undefined
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  for (const [i, line] of lines.entries()) {
    const stripped = line.trim()
    if (stripped === '' || stripped.startsWith('#') || stripped.startsWith(';')) {
      if (stripped === '') lastKey = undefined
      continue
    }
    if (/^\s/.test(line) && lastKey !== undefined) {
      // configparser continuation line (joined with '\n')
      if (section === group) out[lastKey] = `${out[lastKey]}\n${stripped}`
      continue
    }
    const header = /^\[([^\]]+)\]/.exec(stripped)
    if (header) {
      section = header[1]
      lastKey = undefined
      continue
    }
    if (section === undefined) {
      throw new ConfigError(`${label}: option file ${path} line ${i + 1} comes before any [section]`, 'Put user/password/host under [client].', 'BadOptionFile')
    }
    const sep = /[=:]/.exec(stripped)
    const key = (sep ? stripped.slice(0, sep.index) : stripped).trim().toLowerCase()
    lastKey = sep ? key : undefined
    if (section !== group || !sep) continue
    const v = stripped.slice(sep.index + 1).trim()
    out[key] = v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.at(-1) === v[0] ? v.slice(1, -1) : v
  }
  return out
}

function formatDisplay(u: Omit<DbUrl, 'display'>): string {
  const hostPart = u.host.includes(':') ? `[${u.host}]` : u.host
  const auth = `${encodeURIComponent(u.user)}${u.password !== undefined ? `:${REDACTED}` : ''}@`
  const where = u.socketPath === undefined ? `${hostPart}:${u.port}` : hostPart
  const db = u.database === undefined ? '' : `/${u.database}`
  const q: string[] = []
  if (u.socketPath !== undefined) q.push(`unix_socket=${u.socketPath}`)
  if (u.optionFile !== undefined) q.push(`read_default_file=${u.optionFile}`)
  return `${u.scheme}://${auth}${where}${db}${q.length === 0 ? '' : `?${q.join('&')}`}`
}

const MAPPED_PARAMS = new Set(['unix_socket', 'user', 'password', 'passwd', 'host', 'database', 'db', 'port', 'read_default_file', 'read_default_group'])

/** Parses a database URL. `label` names it in errors ('nova_api database URL', 'cell1 database_connection'). */
export function parseDbUrl(raw: string, label = 'database URL'): DbUrl {
  const text = raw.trim()
  registerUrlSecret(text)
  if (text === '') throw bad(label, 'is empty')
  const s = parseSqlalchemyUrl(text)
  if (!s) {
    // The port is the only part make_url checks; it can be named when no '@' follows the user info
    // (otherwise the 'port' may be a piece of a password with a raw '@').
    const m = SQLA_URL.exec(text)
    const atEnd = m?.indices?.groups?.at?.[0]
    if (m?.groups?.port !== undefined && (atEnd === undefined ? !text.includes('@') : atEnd === text.lastIndexOf('@'))) {
      throw bad(label, `has a bad port '${m.groups.port}': not a number (${brokenShape(text)})`)
    }
    const why = /^[A-Za-z][A-Za-z0-9+._-]*:\/\//.test(text)
      ? 'cannot be parsed as nova (SQLAlchemy) parses it: check the port, and write an @ or % in the password as %40 or %25'
      : "is not a URL (no 'scheme://'; its text is not shown because it may hold a password)"
    throw bad(label, `${why} (${brokenShape(text)})`)
  }
  const scheme = s.drivername
  const dialect = scheme.split('+')[0].toLowerCase()
  // Anything between '://' and the last '@' may be password; unless SQLAlchemy's user info ends
  // exactly there, the URL's own parts cannot be shown (nor trusted: nova would connect elsewhere).
  const lastAt = text.lastIndexOf('@')
  if (lastAt !== -1 && s.userinfoEnd !== lastAt) {
    throw bad(
      label,
      `has an '@' outside the user info, so nova would split it differently than intended: write an @ in the password (or anywhere else) as %40 (${brokenShape(text)})`,
    )
  }
  const shownUser = s.username === null ? '' : encodeURIComponent(s.username)
  const shape = `${scheme}://${shownUser}${s.password === null ? '' : `:${REDACTED}`}${s.userinfoEnd === -1 ? '' : '@'}${s.host ?? ''}…`
  if (dialect !== 'mysql' && dialect !== 'mariadb') {
    throw bad(label, `uses '${scheme}': cloudctl reads MySQL/MariaDB databases only (${shape})`)
  }

  // pymysql's keyword arguments: the URL parts, then the query parameters over them.
  const q = s.query
  let user = single(q, 'user', label) ?? (s.username || undefined)
  let password = single(q, 'password', label) || single(q, 'passwd', label) || s.password || undefined
  let host = single(q, 'host', label) ?? (s.host || undefined)
  let database = single(q, 'database', label) ?? single(q, 'db', label) ?? (s.database || undefined)
  let socketPath = single(q, 'unix_socket', label)
  let port: number | undefined = s.port || undefined
  if (single(q, 'port', label) !== undefined)
    throw bad(label, `sets port as a query parameter, which pymysql rejects (${shape})`, 'Put the port after the host: HOST:PORT.')
  registerSecret(password)

  const optionPath = single(q, 'read_default_file', label)
  const optionGroup = single(q, 'read_default_group', label)
  let optionFile: string | undefined
  let optionValues: Record<string, string> | undefined
  if (optionPath !== undefined || optionGroup !== undefined) {
    optionFile = optionPath ?? '/etc/my.cnf'
    const o = readOptionFile(optionFile, optionGroup ?? 'client', label)
    optionValues = o
    registerSecret(o.password)
    // pymysql: a value given in the URL wins; the file only fills what is missing.
    user ||= o.user || undefined
    password ||= o.password || undefined
    host ||= o.host || undefined
    database ||= o.database || undefined
    socketPath ||= o.socket || undefined
    if (!port && o.port !== undefined) {
      const n = pythonInt(o.port)
      if (n === undefined) throw bad(label, `: option file ${optionFile} has a port that is not a number`, 'Fix port= in the option file.')
      port = n
    }
  }

  if (port !== undefined && (port < 1 || port > 65535)) throw bad(label, `has port ${port}, outside 1-65535 (${shape})`)
  if (host !== undefined && /[\s/]/.test(host)) throw bad(label, `has a host name with a space or '/' (${shape})`)
  if (database !== undefined && /[/\s]/.test(database)) throw bad(label, `has a database name with a space or '/' (${shape})`)
  if (user === undefined) {
    throw bad(
      label,
      `has no user name (${shape})`,
      optionFile === undefined ? HINT : `Add user= to the [${optionGroup ?? 'client'}] section of ${optionFile}, or put USER@ in the URL.`,
    )
  }

  const params: Record<string, string> = {}
  for (const [k, v] of Object.entries(q)) {
    if (MAPPED_PARAMS.has(k)) continue
    params[k] = Array.isArray(v) ? (v.at(-1) as string) : v
  }
  const tls = decideTls(params, optionValues, host ?? 'localhost', label)
  const syncWait = checkUrlParameters(params, label)
  const u = {
    scheme,
    user,
    password,
    host: host ?? 'localhost',
    port: port ?? DEFAULT_PORT,
    socketPath,
    database,
    params,
    optionFile,
    tls,
    ...(syncWait ? {syncWait} : {}),
  }
  return {...u, display: formatDisplay(u)}
}

/** Connection options for mysql2 (ssl file paths are read by connection.ts). */
export function connectionOptions(u: DbUrl): DbConnectionOptions {
  const opts: DbConnectionOptions = {user: u.user, password: u.password, database: u.database, connectTimeout: DEFAULT_CONNECT_TIMEOUT_MS}
  if (u.socketPath !== undefined) opts.socketPath = u.socketPath
  else {
    opts.host = u.host
    opts.port = u.port
  }
  const timeout = u.params.connect_timeout
  if (timeout !== undefined && /^\d+(\.\d+)?$/.test(timeout)) opts.connectTimeout = Math.round(Number(timeout) * 1000)
  if (u.tls !== undefined) opts.ssl = u.tls
  return opts
}

/** The redacted display form of any URL text, parsed or not (never throws, never shows a password). */
export function displayDbUrl(raw: string): string {
  try {
    return parseDbUrl(raw).display
  } catch {
    const shape = brokenShape(raw.trim())
    return shape === 'text not shown' ? '(not shown)' : shape
  }
}

/** Percent-encodes what make_url would otherwise split on, and nothing else that it decodes differently. */
function quoteUserinfo(text: string): string {
  return text.replace(/[%:@/]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

/** The same server and credentials with another database: used for tests and cell0 conventions. */
export function withDatabase(raw: string, database: string): string {
  const u = parseDbUrl(raw)
  const auth = `${quoteUserinfo(u.user)}${u.password === undefined ? '' : `:${quoteUserinfo(u.password)}`}@`
  const hostPart = u.host.includes(':') ? `[${u.host}]` : u.host
  const where = u.socketPath === undefined ? `${hostPart}:${u.port}` : hostPart
  const q = new URLSearchParams(u.params)
  if (u.socketPath !== undefined) q.set('unix_socket', u.socketPath)
  const qs = q.toString()
  return `${u.scheme}://${auth}${where}/${database}${qs === '' ? '' : `?${qs}`}`
}
