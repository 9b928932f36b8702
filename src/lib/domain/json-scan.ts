/**
 * A JSON syntax scanner that builds nothing. The audits only need to know whether a blob nova wrote
 * can be read; JSON.parse would also create every object and intern every key (compute node stats
 * carry a counter per project: 200k distinct keys over 10k nodes). The grammar is RFC 8259, the
 * one JSON.parse accepts; callers still ask the real parser for the error message of a bad blob.
 */

/** The type of the top-level value when `text` is one valid JSON document, else undefined. */
export function jsonTopLevel(text: string): 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null' | undefined {
  const n = text.length
  let i = 0
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++
      else break
    }
  }
  const digits = (): boolean => {
    const start = i
    while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) i++
    return i > start
  }
  const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
  const string = (): boolean => {
    i++ // opening quote
    while (i < n) {
      const c = text.charCodeAt(i++)
      if (c === 0x22) return true
      if (c < 0x20) return false
      if (c !== 0x5c) continue
      const e = text.charCodeAt(i++)
      if (e === 0x75) {
        for (let k = 0; k < 4; k++) if (!isHex(text.charCodeAt(i++))) return false
      } else if (e !== 0x22 && e !== 0x5c && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return false
    }
    return false
  }
  const number = (): boolean => {
    if (text.charCodeAt(i) === 0x2d) i++
    if (text.charCodeAt(i) === 0x30) i++
    else if (!digits()) return false
    if (text.charCodeAt(i) === 0x2e) {
      i++
      if (!digits()) return false
    }
    const e = text.charCodeAt(i)
    if (e === 0x65 || e === 0x45) {
      i++
      const sign = text.charCodeAt(i)
      if (sign === 0x2b || sign === 0x2d) i++
      if (!digits()) return false
    }
    return true
  }
  const word = (w: string): boolean => {
    if (text.startsWith(w, i)) {
      i += w.length
      return true
    }
    return false
  }
  /** One scalar value, or the opening of a container (pushed on the stack). */
  const stack: number[] = [] // 0x7b for an object, 0x5b for an array
  const value = (): boolean => {
    const c = text.charCodeAt(i)
    if (c === 0x22) return string()
    if (c === 0x7b || c === 0x5b) {
      stack.push(c)
      i++
      return true
    }
    if (c === 0x74) return word('true')
    if (c === 0x66) return word('false')
    if (c === 0x6e) return word('null')
    return c === 0x2d || (c >= 0x30 && c <= 0x39) ? number() : false
  }

  ws()
  const first = text.charCodeAt(i)
  if (!value()) return undefined
  // Inside containers: after an opening, expect a member/element or the closing; after one, ',' or the closing.
  let justOpened = stack.length > 0
  while (stack.length > 0) {
    ws()
    const top = stack[stack.length - 1]
    const close = top === 0x7b ? 0x7d : 0x5d
    const c = text.charCodeAt(i)
    if (c === close) {
      i++
      stack.pop()
      justOpened = false
      continue
    }
    if (!justOpened) {
      if (c !== 0x2c) return undefined
      i++
      ws()
    }
    if (top === 0x7b) {
      if (text.charCodeAt(i) !== 0x22 || !string()) return undefined
      ws()
      if (text.charCodeAt(i) !== 0x3a) return undefined
      i++
      ws()
    }
    const depth = stack.length
    if (!value()) return undefined
    justOpened = stack.length > depth
  }
  ws()
  if (i !== n) return undefined
  if (first === 0x7b) return 'object'
  if (first === 0x5b) return 'array'
  if (first === 0x22) return 'string'
  if (first === 0x74 || first === 0x66) return 'boolean'
  if (first === 0x6e) return 'null'
  return 'number'
}

// ---------------------------------------------------------------- flat objects of plain strings

// What nova writes to compute_nodes.stats: one JSON object of string values, keys and values free of
// escapes and control characters. A regular expression decides that shape and finds a key's value
// several times faster than JSON.parse builds the record of a host's per-project counters.
const WS = '[ \\t\\n\\r]*'
const PLAIN = '"[^"\\\\\\u0000-\\u001f]*"'
const PAIR = `${PLAIN}${WS}:${WS}${PLAIN}${WS}`
const FLAT_PLAIN = new RegExp(`^${WS}\\{${WS}(?:${PAIR}(?:,${WS}${PAIR})*)?\\}${WS}$`)

/** Whether `text` is a JSON object of plain strings (JSON.parse would accept it and give only strings). */
export function isFlatPlainObject(text: string): boolean {
  return FLAT_PLAIN.test(text)
}

const keyPatterns = new Map<string, RegExp>()

/**
 * The value of `key` in a text isFlatPlainObject accepted, as JSON.parse gives it: the last pair
 * of that key. In such a text every quote opens or closes a string and only a key is followed by a
 * colon, so the pattern cannot match inside a value or across two strings.
 */
export function flatPlainValue(text: string, key: string): string | undefined {
  let re = keyPatterns.get(key)
  if (!re) keyPatterns.set(key, (re = new RegExp(`"${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"${WS}:${WS}"([^"]*)"`, 'g')))
  re.lastIndex = 0
  let value: string | undefined
  for (let m = re.exec(text); m !== null; m = re.exec(text)) value = m[1]
  return value
}
