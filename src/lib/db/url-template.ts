/**
 * Templated cell database URLs ('{scheme}://{username}:{password}@{hostname}/nova_cell1'), filled as
 * nova's CellMapping.format_db_url fills them: from Python's urllib.parse view of the local
 * [database] connection, which differs from make_url's (url.ts) in what it decodes and refuses. Apart
 * from url.ts because it reproduces that other parser.
 */
import {isIPv6} from 'node:net'

import {ConfigError} from '../errors.js'
import {registerUrlSecret} from '../util/redact.js'
import {brokenShape} from './url.js'

/** urllib's _check_bracketed_netloc (Debian's 3.11 has it): runs whenever the netloc has '[' and ']'. */
function bracketedNetlocOk(netloc: string): boolean {
  const hostport = netloc.slice(netloc.lastIndexOf('@') + 1)
  const open = hostport.indexOf('[')
  let hostname: string
  if (open !== -1) {
    if (open > 0) return false
    const close = hostport.indexOf(']')
    hostname = hostport.slice(1, close === -1 ? undefined : close)
    const port = close === -1 ? '' : hostport.slice(close + 1)
    if (port !== '' && !port.startsWith(':')) return false
  } else {
    const c = hostport.indexOf(':')
    hostname = c === -1 ? hostport : hostport.slice(0, c)
  }
  return hostname.startsWith('v') ? /^v[a-fA-F0-9]+\.[^\n]+$/.test(hostname) : isIPv6(hostname)
}

/** urllib.parse.urlsplit's netloc/path/query/fragment of a URL with '//' (Python 3.11). */
function pythonUrlsplit(url: string): {scheme: string; netloc: string; path: string; query: string; fragment: string} | undefined {
  let s = url.replace(/[\t\r\n]/g, '')
  // WHATWG C0 control or space, stripped from the start
  while (s !== '' && s.charCodeAt(0) <= 0x20) s = s.slice(1)
  let scheme = ''
  const i = s.indexOf(':')
  if (i > 0 && /^[A-Za-z]/.test(s) && /^[A-Za-z0-9+.-]+$/.test(s.slice(0, i))) {
    scheme = s.slice(0, i).toLowerCase()
    s = s.slice(i + 1)
  }
  let netloc = ''
  if (s.startsWith('//')) {
    const end = s.slice(2).search(/[/?#]/)
    netloc = end === -1 ? s.slice(2) : s.slice(2, 2 + end)
    s = end === -1 ? '' : s.slice(2 + end)
    if (netloc.includes('[') !== netloc.includes(']')) return undefined
    if (netloc.includes('[') && !bracketedNetlocOk(netloc)) return undefined
  }
  let fragment = ''
  let query = ''
  const hash = s.indexOf('#')
  if (hash !== -1) [s, fragment] = [s.slice(0, hash), s.slice(hash + 1)]
  const qm = s.indexOf('?')
  if (qm !== -1) [s, query] = [s.slice(0, qm), s.slice(qm + 1)]
  return {scheme, netloc, path: s, query, fragment}
}

/**
 * The substitutions nova's CellMapping._format_url takes from the local [database] connection:
 * urllib's urlparse attributes, which are NOT percent-decoded (the password goes into the template
 * as written, still encoded), a lower-cased host name, and None (printed 'None') where absent.
 * Undefined where urllib raises (nova then logs and uses the template unfilled).
 */
function novaTemplateFields(local: string): Record<string, string> | undefined {
  const u = pythonUrlsplit(local)
  if (!u) return undefined
  const at = u.netloc.lastIndexOf('@')
  const userinfo = at === -1 ? undefined : u.netloc.slice(0, at)
  const hostinfo = at === -1 ? u.netloc : u.netloc.slice(at + 1)
  let username: string | undefined
  let password: string | undefined
  if (userinfo !== undefined) {
    const c = userinfo.indexOf(':')
    ;[username, password] = c === -1 ? [userinfo, undefined] : [userinfo.slice(0, c), userinfo.slice(c + 1)]
  }
  let hostname: string
  let portText: string | undefined
  if (hostinfo.includes('[')) {
    const open = hostinfo.indexOf('[')
    const close = hostinfo.indexOf(']', open)
    hostname = hostinfo.slice(open + 1, close === -1 ? undefined : close)
    const after = close === -1 ? '' : hostinfo.slice(close + 1)
    const c = after.indexOf(':')
    portText = c === -1 ? undefined : after.slice(c + 1)
  } else {
    const c = hostinfo.indexOf(':')
    ;[hostname, portText] = c === -1 ? [hostinfo, undefined] : [hostinfo.slice(0, c), hostinfo.slice(c + 1)]
  }
  let port: string | undefined
  if (portText !== undefined && portText !== '') {
    if (!/^[0-9]+$/.test(portText) || Number(portText) > 65535) return undefined
    port = String(Number(portText))
  }
  const pct = hostname.indexOf('%')
  const host = hostname === '' ? undefined : pct === -1 ? hostname.toLowerCase() : hostname.slice(0, pct).toLowerCase() + hostname.slice(pct)
  const none = (v: string | undefined): string => v ?? 'None'
  const fields: Record<string, string> = Object.create(null) as Record<string, string>
  Object.assign(fields, {
    username: none(username),
    password: none(password),
    hostname: none(host),
    port: none(port),
    scheme: u.scheme,
    query: u.query,
    fragment: u.fragment,
    path: u.path.replace(/^\/+/, ''),
  })
  // oslo.messaging-style host lists: nova adds username1, password1, hostname1, port1... per host,
  // split naively (first '@', first ':') and unvalidated.
  if (u.netloc.includes(',')) {
    for (const [i, piece] of u.netloc.split(',').entries()) {
      const at = piece.indexOf('@')
      const userpass = at === -1 ? '' : piece.slice(0, at)
      const hostport = at === -1 ? piece : piece.slice(at + 1)
      let h: string
      let p: string | undefined
      if (hostport.startsWith('[')) {
        const close = hostport.indexOf(']')
        if (close === -1) return undefined
        ;[h, p] = [hostport.slice(1, close), hostport.slice(close + 1)]
      } else {
        const c = hostport.indexOf(':')
        ;[h, p] = c === -1 ? [hostport, undefined] : [hostport.slice(0, c), hostport.slice(c + 1)]
      }
      const c = userpass.indexOf(':')
      const [un, pw] = c === -1 ? [userpass, undefined] : [userpass.slice(0, c), userpass.slice(c + 1)]
      Object.assign(fields, {[`username${i + 1}`]: un, [`password${i + 1}`]: none(pw), [`hostname${i + 1}`]: h, [`port${i + 1}`]: none(p)})
    }
  }
  return fields
}

/**
 * Fills a templated cell_mappings.database_connection ('{scheme}://{username}:{password}@{hostname}/nova_cell1')
 * from the local [database] connection exactly as nova's CellMapping.format_db_url does (str.format
 * over urlparse fields). The one builder for reading and for repairs. A URL without '{' is returned as is.
 */
export function formatTemplatedDbUrl(template: string, localConnection: string | undefined, label = 'database_connection'): string {
  if (!template.includes('{')) return template
  if (localConnection === undefined) {
    throw new ConfigError(
      `${label} is a template and no [database] connection is known to fill it`,
      'Pass --nova-conf with the nova.conf of that cell (its [database] connection fills the template), or --cell-db NAME=URL.',
      'TemplatedDbUrl',
    )
  }
  registerUrlSecret(localConnection)
  const fields = novaTemplateFields(localConnection.trim())
  if (fields === undefined) {
    throw new ConfigError(
      `${label} is a template, and nova cannot parse the [database] connection that should fill it (${brokenShape(localConnection.trim())})`,
      'Fix [database] connection in nova.conf (a port that is a number, balanced [ ] around an IPv6 address), or pass --cell-db NAME=URL.',
      'TemplatedDbUrl',
    )
  }
  let out = ''
  const re = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g
  let last = 0
  for (let m = re.exec(template); m !== null; m = re.exec(template)) {
    out += template.slice(last, m.index)
    last = re.lastIndex
    if (m[0] === '{{') out += '{'
    else if (m[0] === '}}') out += '}'
    else if (m[1] !== undefined && Object.hasOwn(fields, m[1])) out += fields[m[1]]
    else {
      throw new ConfigError(
        m[1] === undefined ? `${label} is a template with an unbalanced '${m[0]}'` : `${label} template uses a field nova does not fill: {${m[1]}}`,
        'nova fills {scheme} {username} {password} {hostname} {port} {path} {query} {fragment} (and {username1}... for several hosts); write a literal brace as {{ or }}.',
        'TemplatedDbUrl',
      )
    }
  }
  return out + template.slice(last)
}
