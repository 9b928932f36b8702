/**
 * Database URLs as nova and oslo.db write them (SQLAlchemy RFC-1738 style):
 *   mysql+pymysql://nova:PASS@db1:3306/nova_api?charset=utf8
 *   mysql://nova:PASS@/nova?unix_socket=/run/mysqld/mysqld.sock
 * Parsed by hand rather than with WHATWG URL: SQLAlchemy accepts passwords with raw '@', '/', '#' or
 * ':' (it splits the user info at the last '@'), which `new URL` would reject or mangle.
 */
import {ConfigError} from '../errors.js'
import {REDACTED, registerSecret, scrub} from '../util/redact.js'

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
  ssl?: {ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean}
}

const HINT =
  'Expected mysql+pymysql://USER:PASSWORD@HOST[:PORT]/DATABASE[?unix_socket=/path/to/mysqld.sock] (URL-encode special characters in the password, e.g. %40 for @).'

const DEFAULT_PORT = 3306
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

function decode(part: string, what: string, shown: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    throw new ConfigError(`malformed percent-encoding in the ${what} of database URL ${shown}`, HINT, 'BadDbUrl')
  }
}

/** Parses a database URL. `label` names it in errors ('nova_api database URL', 'cell1 database_connection'). */
export function parseDbUrl(raw: string, label = 'database URL'): DbUrl {
  const text = raw.trim()
  const m = /^([A-Za-z][A-Za-z0-9+._-]*):\/\/(.*)$/s.exec(text)
  if (!m) {
    throw new ConfigError(`${label} is not a URL: ${scrub(text) || '(empty)'}`, HINT, 'BadDbUrl')
  }
  const scheme = m[1]
  const dialect = scheme.split('+')[0].toLowerCase()
  // Register the raw password first so that any message below is scrubbed.
  const rest = m[2]
  const qIdx = rest.indexOf('?')
  const main = qIdx === -1 ? rest : rest.slice(0, qIdx)
  const query = qIdx === -1 ? '' : rest.slice(qIdx + 1)
  // Hosts and database names never contain '@', passwords may: split user info at the last '@'.
  const at = main.lastIndexOf('@')
  const userinfo = at === -1 ? '' : main.slice(0, at)
  const hostAndPath = at === -1 ? main : main.slice(at + 1)
  const colon = userinfo.indexOf(':')
  const rawUser = colon === -1 ? userinfo : userinfo.slice(0, colon)
  const rawPassword = colon === -1 ? undefined : userinfo.slice(colon + 1)
  registerSecret(rawPassword)
  const shown = scrub(text)

  if (dialect !== 'mysql' && dialect !== 'mariadb') {
    throw new ConfigError(
      `${label} uses '${scheme}': cloudctl reads MySQL/MariaDB databases only (${shown})`,
      HINT,
      'BadDbUrl',
    )
  }

  const password = rawPassword === undefined ? undefined : decode(rawPassword, 'password', shown)
  registerSecret(password)
  const user = decode(rawUser, 'user name', shown)

  const slash = hostAndPath.indexOf('/')
  const hostPort = slash === -1 ? hostAndPath : hostAndPath.slice(0, slash)
  const rawDb = slash === -1 ? '' : hostAndPath.slice(slash + 1)
  let host: string
  let portText: string
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']')
    if (close === -1) throw new ConfigError(`unterminated IPv6 address in ${label} ${shown}`, HINT, 'BadDbUrl')
    host = hostPort.slice(1, close)
    const after = hostPort.slice(close + 1)
    if (after !== '' && !after.startsWith(':')) throw new ConfigError(`unexpected '${after}' after the IPv6 address in ${label} ${shown}`, HINT, 'BadDbUrl')
    portText = after.slice(1)
  } else {
    const c = hostPort.lastIndexOf(':')
    host = c === -1 ? hostPort : hostPort.slice(0, c)
    portText = c === -1 ? '' : hostPort.slice(c + 1)
  }
  if (/[\s@/]/.test(host)) throw new ConfigError(`bad host '${host}' in ${label} ${shown}`, HINT, 'BadDbUrl')
  let port = DEFAULT_PORT
  if (portText !== '') {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      throw new ConfigError(`bad port '${portText}' in ${label} ${shown}`, HINT, 'BadDbUrl')
    }
    port = Number(portText)
  }
  const database = rawDb === '' ? undefined : decode(rawDb, 'database name', shown)
  if (database !== undefined && /[/\s]/.test(database)) {
    throw new ConfigError(`bad database name '${database}' in ${label} ${shown}`, HINT, 'BadDbUrl')
  }

  const params: Record<string, string> = {}
  let socketPath: string | undefined
  if (query !== '') {
    for (const pair of query.split(/[&;]/)) {
      if (pair === '') continue
      const eq = pair.indexOf('=')
      const key = decode(eq === -1 ? pair : pair.slice(0, eq), 'query', shown)
      const value = decode((eq === -1 ? '' : pair.slice(eq + 1)).replace(/\+/g, ' '), 'query', shown)
      if (/^(password|passwd|pwd)$/i.test(key)) registerSecret(value)
      if (key === 'unix_socket') socketPath = value
      else params[key] = value
    }
  }
  if (params.read_default_file !== undefined) {
    throw new ConfigError(
      `${label} uses read_default_file, which cloudctl cannot follow (${shown})`,
      'Put the user, password and host from that my.cnf into the URL, or pass --api-db / --placement-db / --cell-db.',
      'BadDbUrl',
    )
  }
  if (user === '') throw new ConfigError(`${label} has no user name: ${shown}`, HINT, 'BadDbUrl')

  const effectiveHost = host === '' ? 'localhost' : host
  const display = formatDisplay(scheme, user, password !== undefined, effectiveHost, port, socketPath, database)
  return {scheme, user, password, host: effectiveHost, port, socketPath, database, params, display}
}

function formatDisplay(scheme: string, user: string, hasPassword: boolean, host: string, port: number, socketPath: string | undefined, database: string | undefined): string {
  const hostPart = host.includes(':') ? `[${host}]` : host
  const auth = `${encodeURIComponent(user)}${hasPassword ? `:${REDACTED}` : ''}@`
  const where = socketPath === undefined ? `${hostPart}:${port}` : hostPart
  const db = database === undefined ? '' : `/${database}`
  const q = socketPath === undefined ? '' : `?unix_socket=${socketPath}`
  return `${scheme}://${auth}${where}${db}${q}`
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
  const ssl = {ca: u.params.ssl_ca, cert: u.params.ssl_cert, key: u.params.ssl_key}
  if (ssl.ca !== undefined || ssl.cert !== undefined || ssl.key !== undefined) {
    opts.ssl = {...ssl, rejectUnauthorized: !/^(false|0|no)$/i.test(u.params.ssl_verify_cert ?? 'true')}
  }
  return opts
}

/** The redacted display form of any URL text, parsed or not (never throws). */
export function displayDbUrl(raw: string): string {
  try {
    return parseDbUrl(raw).display
  } catch {
    return scrub(raw)
  }
}

/** The same server and credentials with another database: used for tests and cell0 conventions. */
export function withDatabase(raw: string, database: string): string {
  const u = parseDbUrl(raw)
  const auth = `${encodeURIComponent(u.user)}${u.password === undefined ? '' : `:${encodeURIComponent(u.password)}`}@`
  const hostPart = u.host.includes(':') ? `[${u.host}]` : u.host
  const where = u.socketPath === undefined ? `${hostPart}:${u.port}` : hostPart
  const q = new URLSearchParams(u.params)
  if (u.socketPath !== undefined) q.set('unix_socket', u.socketPath)
  const qs = q.toString()
  return `${u.scheme}://${auth}${where}/${encodeURIComponent(database)}${qs === '' ? '' : `?${qs}`}`
}

/**
 * Registers the password of a URL-looking string without validating it: config readers call it as
 * soon as they see a URL, so that even a later parse error cannot echo the password.
 */
export function registerUrlSecret(raw: string | undefined | null): void {
  if (!raw) return
  const m = /^[A-Za-z][A-Za-z0-9+._-]*:\/\/([^?]*)/s.exec(raw.trim())
  if (!m) return
  const at = m[1].lastIndexOf('@')
  if (at === -1) return
  const userinfo = m[1].slice(0, at)
  const colon = userinfo.indexOf(':')
  if (colon === -1) return
  const pw = userinfo.slice(colon + 1)
  registerSecret(pw)
  try {
    registerSecret(decodeURIComponent(pw))
  } catch {
    // malformed encoding: parseDbUrl reports it
  }
}

/**
 * Fills a templated cell_mappings.database_connection ('{scheme}://{username}:{password}@{hostname}/nova_cell1')
 * from the local [database] connection, as nova's CellMapping does. A URL without '{' is returned as is.
 */
export function formatTemplatedDbUrl(template: string, localConnection: string | undefined, label = 'database_connection'): string {
  if (!template.includes('{')) return template
  if (localConnection === undefined) {
    throw new ConfigError(
      `${label} is a template (${scrub(template)}) and no [database] connection is known to fill it`,
      'Pass --nova-conf with the nova.conf of that cell (its [database] connection fills the template), or --cell-db NAME=URL.',
      'TemplatedDbUrl',
    )
  }
  const d = parseDbUrl(localConnection, '[database] connection')
  const q = new URLSearchParams(d.params)
  if (d.socketPath !== undefined) q.set('unix_socket', d.socketPath)
  const subs: Record<string, string> = {
    scheme: d.scheme,
    username: d.user,
    password: d.password ?? '',
    hostname: d.host,
    port: String(d.port),
    path: d.database ?? '',
    query: q.toString(),
    fragment: '',
  }
  const out = template.replace(/\{([a-z_]*)\}/g, (whole, name: string) => {
    const v = subs[name]
    if (v === undefined) throw new ConfigError(`${label} template uses unknown field {${name}}: ${scrub(template)}`, 'nova knows {scheme} {username} {password} {hostname} {port} {path} {query} {fragment}.', 'TemplatedDbUrl')
    return name === 'password' || name === 'username' ? encodeURIComponent(v) : v
  })
  return out
}
