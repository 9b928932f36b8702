/**
 * SQLAlchemy 1.4's make_url, transcribed: the grammar nova's connection strings are read with. The URL
 * parser (db/url.ts) and the secret registry (util/redact.ts registerUrlSecret) both read URLs with
 * it; it sits in util because config registers secrets too, and config must not import db.
 */

/** What SQLAlchemy's make_url returns, field for field (null where it has None). */
export interface SqlalchemyUrl {
  drivername: string
  username: string | null
  password: string | null
  host: string | null
  port: number | null
  database: string | null
  /** Repeated keys become lists, as in SQLAlchemy. */
  query: Record<string, string | string[]>
  /** Where the user info ends (index of its '@' in the text), -1 without user info. */
  userinfoEnd: number
}

// SQLAlchemy 1.4 url._parse_url, transcribed: same groups, same greediness, matched at the start only.
// Python's \w on str is Unicode letters, digits and '_'; its '.' stops at '\n' (JS's also at '\r').
export const SQLA_URL = new RegExp(
  [
    String.raw`^(?<name>[\p{L}\p{N}_+]+):\/\/`,
    String.raw`(?:(?<username>[^:/]*)(?::(?<password>[^@]*))?(?<at>@))?`,
    String.raw`(?:(?:\[(?<ipv6host>[^/?]+)\]|(?<ipv4host>[^/:?]+))?(?::(?<port>[^/?]*))?)?`,
    String.raw`(?:\/(?<database>[^?]*))?`,
    String.raw`(?:\?(?<query>[^\n]*))?`,
  ].join(''),
  'du',
)

/** urllib.parse.unquote: runs of %XX are UTF-8 decoded with U+FFFD for bad bytes; anything else stays. */
export function pythonUnquote(text: string): string {
  if (!text.includes('%')) return text
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'))
}

/** Python's int() on a port string: surrounding whitespace, a sign, '_' between digits. */
export function pythonInt(text: string): number | undefined {
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text)
  if (!m) return undefined
  const n = Number(m[2].replace(/_/g, ''))
  return m[1] === '-' ? -n : n
}

/** urllib.parse.parse_qsl as SQLAlchemy calls it: '&' only, blank values and bare names dropped. */
function parseQsl(query: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=')
    if (eq === -1) continue
    const value = pair.slice(eq + 1)
    if (value === '') continue
    out.push([pythonUnquote(pair.slice(0, eq).replace(/\+/g, ' ')), pythonUnquote(value.replace(/\+/g, ' '))])
  }
  return out
}

/** SQLAlchemy 1.4's make_url on a string: undefined where it raises. */
export function parseSqlalchemyUrl(text: string): SqlalchemyUrl | undefined {
  const m = SQLA_URL.exec(text)
  if (!m || !m.groups) return undefined
  const g = m.groups
  let port: number | null = null
  if (g.port !== undefined) {
    const n = pythonInt(g.port)
    if (n === undefined) return undefined
    port = n
  }
  let query: Record<string, string | string[]> = {}
  if (g.query !== undefined) {
    query = Object.create(null) as Record<string, string | string[]>
    for (const [k, v] of parseQsl(g.query)) {
      const prev = query[k]
      query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
    }
  }
  return {
    drivername: g.name,
    username: g.username === undefined ? null : pythonUnquote(g.username),
    password: g.password === undefined ? null : pythonUnquote(g.password),
    host: g.ipv4host ?? g.ipv6host ?? null,
    port,
    database: g.database ?? null,
    query,
    userinfoEnd: g.at === undefined ? -1 : (m.indices?.groups?.at?.[0] ?? -1),
  }
}
