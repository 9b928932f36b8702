/**
 * Password redaction, by structure first: in any text, the user info of a URL is located the way
 * a URL parser would and its password part replaced, whatever the password is. That is the only
 * rule applied to values that are URLs (cell_mappings columns, snapshot sources, transport URLs).
 *
 * For text that is not a URL (a driver or stack message that might echo a password verbatim),
 * `scrub` also replaces passwords cloudctl was handed, but only distinctive ones and only as whole
 * tokens: replacing every occurrence of a password like 'nova' would rewrite 'nova-api',
 * 'r2_nova_api' or the availability zone 'nova', which are not secrets.
 */
import {parseSqlalchemyUrl, pythonUnquote} from './sqlalchemy-url.js'

export const REDACTED = '***'

// A scheme not glued to a preceding word character ('xmysql://' is not a URL start).
// nova's templated cell URLs start with '{scheme}://'.
const SCHEME = /(?<![A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]*|\{scheme\}):\/\//g
// A template field ('{password}') is a placeholder, not a password.
const PLACEHOLDER = /^\{[a-z_0-9]*\}$/
// Transport URLs (oslo.messaging) list several user:pass@host:port separated by commas.
const DB_SCHEME = /^(mysql|mariadb|postgres|postgresql|sqlite|oracle|mssql)\b/i
const PASSWORD_PARAM = /([?&;](?:password|passwd|pwd)=)[^&;\s]*/gi

/**
 * Redacts the user info of one URL body (the text after 'scheme://', up to the end of its line).
 * The password runs from the first ':' not preceded by '/' to the last '@' of the URL: a superset
 * of what SQLAlchemy (first '@'), urllib (last '@') or a hurried operator (raw '@' in the password)
 * mean. The URL ends at the first whitespace after an '@' (host names have none), so the sentence
 * around a URL in a message survives.
 */
function redactBody(body: string, scheme: string): string {
  const colon = body.search(/[:/]/)
  if (colon === -1 || body[colon] !== ':') return body
  // Our own display form: already redacted, and the text after it may hold other '@'s.
  if (body.startsWith(`${REDACTED}@`, colon + 1)) return body
  const firstAt = body.indexOf('@', colon)
  if (firstAt === -1) return body
  const ws = body.slice(firstAt).search(/\s/)
  const lastAt = body.lastIndexOf('@', ws === -1 ? body.length : firstAt + ws)
  if (PLACEHOLDER.test(body.slice(colon + 1, lastAt))) return body
  if (!DB_SCHEME.test(scheme)) {
    const multi = redactHostList(body, lastAt)
    if (multi !== undefined) return multi
  }
  return `${body.slice(0, colon + 1)}${REDACTED}${body.slice(lastAt)}`
}

/** rabbit://u1:p1@h1:5672,u2:p2@h2:5672/ keeps each host; undefined when the list is not clean. */
function redactHostList(body: string, lastAt: number): string | undefined {
  const end = body.slice(lastAt).search(/[/?#\s]/)
  const netloc = end === -1 ? body : body.slice(0, lastAt + end)
  const pieces = netloc.split(',')
  if (pieces.length < 2) return undefined
  const out: string[] = []
  for (const piece of pieces) {
    const at = piece.lastIndexOf('@')
    // A piece without '@' before one with: a comma inside a password, not a host list.
    if (at === -1) return undefined
    const userinfo = piece.slice(0, at)
    const c = userinfo.indexOf(':')
    if (!/^[^@:/\s]+(:\d+)?$/.test(piece.slice(at + 1))) return undefined
    out.push(c === -1 ? piece : `${userinfo.slice(0, c)}:${REDACTED}${piece.slice(at)}`)
  }
  return out.join(',') + body.slice(netloc.length)
}

/** A whole value shaped 'user:password@host...' without a scheme (a mistyped --api-db). */
const SCHEMELESS = /^([^\s:/@]+):([\s\S]*)@(\S*)$/

/** Redacts passwords in URLs found anywhere in `text` (also rabbit://a:b@h,c:d@h2 and password= parameters). */
export function redact(text: string): string
export function redact(text: string | null): string | null
export function redact(text: string | undefined): string | undefined
export function redact(text: string | null | undefined): string | null | undefined
export function redact(text: string | null | undefined): string | null | undefined {
  if (text === null || text === undefined) return text
  const starts = [...text.matchAll(SCHEME)]
  let out: string
  if (starts.length === 0) {
    const m = SCHEMELESS.exec(text.trim())
    out = m && !m[2].startsWith(`${REDACTED}@`) ? text.replace(`${m[1]}:${m[2]}@`, `${m[1]}:${REDACTED}@`) : text
  } else {
    out = text.slice(0, starts[0].index)
    for (const [i, m] of starts.entries()) {
      const bodyStart = (m.index ?? 0) + m[0].length
      const next = i + 1 < starts.length ? (starts[i + 1].index ?? text.length) : text.length
      const segment = text.slice(bodyStart, next)
      const nl = segment.indexOf('\n')
      const body = nl === -1 ? segment : segment.slice(0, nl)
      out += m[0] + redactBody(body, m[0]) + segment.slice(body.length)
    }
  }
  return out.replace(PASSWORD_PARAM, (_m, key: string) => `${key}${REDACTED}`)
}

/** Passwords cloudctl was handed, for text that does not show them as URLs. */
const knownSecrets = new Set<string>()

/**
 * True for a password that cannot be mistaken for an ordinary word, name or number in output:
 * long enough and mixing letters with digits or symbols (or very long). 'nova', 'secret' or
 * '3306' are not: they stay visible outside URLs, where structure is the only protection.
 */
export function isDistinctiveSecret(secret: string): boolean {
  if (secret.length >= 16) return true
  return secret.length >= 6 && /\p{L}/u.test(secret) && /[^\p{L}]/u.test(secret)
}

export function registerSecret(secret: string | undefined | null): void {
  if (!secret || !isDistinctiveSecret(secret)) return
  knownSecrets.add(secret)
  // The same password as JSON.stringify writes it inside a string (audit log entries).
  const json = JSON.stringify(secret).slice(1, -1)
  if (json !== secret) knownSecrets.add(json)
}

/**
 * Registers every string that could be the password of a URL-looking value, before any validation:
 * config readers call it as soon as they see a value, so that not even a later error can echo it.
 * Both readings are registered: SQLAlchemy's (up to the first '@') and the intended one (up to the
 * last '@'), raw and decoded; values without a scheme ('user:pw@host/db') too.
 */
export function registerUrlSecret(raw: string | undefined | null): void {
  if (!raw) return
  const text = raw.trim()
  const m = /^[A-Za-z][A-Za-z0-9+._-]*:\/\//.exec(text)
  const rest = m ? text.slice(m[0].length) : text
  const colon = rest.search(/[:/]/)
  if (colon === -1 || rest[colon] !== ':') return
  const afterColon = rest.slice(colon + 1)
  const candidates = [afterColon.slice(0, afterColon.lastIndexOf('@'))]
  if (afterColon.includes('@')) candidates.push(afterColon.slice(0, afterColon.indexOf('@')))
  for (const [k, v] of Object.entries(parseSqlalchemyUrl(text)?.query ?? {}))
    if (/^(password|passwd|pwd)$/i.test(k)) candidates.push(...(Array.isArray(v) ? v : [v]))
  for (const c of candidates) {
    if (c === '') continue
    registerSecret(c)
    registerSecret(pythonUnquote(c))
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Structural redaction, then registered passwords where they stand as whole tokens. */
export function scrub(text: string): string {
  let out = redact(text)
  // Longest first: a password that contains another one is replaced whole.
  for (const secret of [...knownSecrets].sort((a, b) => b.length - a.length)) {
    if (!out.includes(secret)) continue
    const before = /^\w/.test(secret) ? '(?<!\\w)' : ''
    const after = /\w$/.test(secret) ? '(?!\\w)' : ''
    out = out.replace(new RegExp(`${before}${escapeRegExp(secret)}${after}`, 'g'), REDACTED)
  }
  return out
}
