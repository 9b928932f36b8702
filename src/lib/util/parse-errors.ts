/**
 * Parse errors of files that may hold passwords (nova.conf, the profile file, option files, a file
 * given where JSON or YAML was expected). The parsers' own messages quote the source: V8's JSON.parse
 * shows the text around the error, the yaml package names the token or alias it stopped at and its
 * warnings print the line with a caret. These say where (line, column) and what kind of mistake, from
 * the parser's error code, and never a character of the file's text.
 */

/** A key or section name worth showing: a plain name. Anything else might be a value typed in its place. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/

/** `'name'` when it is a plain name, else undefined (the caller words the line without it). */
export function plainName(text: string): string | undefined {
  const t = text.trim()
  return PLAIN_NAME.test(t) ? t : undefined
}

const YAML_WHAT: Record<string, string> = {
  ALIAS_PROPS: 'an alias with an anchor or tag',
  BAD_ALIAS: 'a malformed alias',
  BAD_COLLECTION_TYPE: 'a collection of the wrong type',
  BAD_DIRECTIVE: 'a malformed directive',
  BAD_DQ_ESCAPE: 'an invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'inconsistent indentation (or an unclosed bracket)',
  BAD_PROP_ORDER: 'an anchor or tag in the wrong place',
  BAD_SCALAR_START: 'a plain value that starts with a reserved character (quote the value)',
  BLOCK_AS_IMPLICIT_KEY: "a mapping nested on one line ('key: key: value')",
  BLOCK_IN_FLOW: 'a block collection inside a flow collection',
  DUPLICATE_KEY: 'a key repeated in the same mapping',
  IMPOSSIBLE: 'an impossible construct',
  KEY_OVER_1024_CHARS: 'a key longer than 1024 characters',
  MISSING_CHAR: 'a quote or bracket that is not closed',
  MULTILINE_IMPLICIT_KEY: 'a key that spans lines',
  MULTIPLE_ANCHORS: 'more than one anchor on a node',
  MULTIPLE_DOCS: 'more than one YAML document',
  MULTIPLE_TAGS: 'more than one tag on a node',
  NON_STRING_KEY: 'a key that is not a string',
  TAB_AS_INDENT: 'a tab used as indentation',
  TAG_RESOLVE_FAILED: 'an unknown tag',
  UNEXPECTED_TOKEN: 'an unexpected character',
}

/** One line for a yaml package error: what kind, and where. */
export function yamlErrorText(error: unknown): string {
  const e = error as {code?: string; linePos?: Array<{line: number; col: number}>; message?: string}
  const what =
    (e.code !== undefined ? YAML_WHAT[e.code] : undefined) ?? (/alias/i.test(e.message ?? '') ? 'an alias (*name) with no anchor before it' : 'a syntax error')
  const at = e.linePos?.[0]
  return `${what}${at ? ` at line ${at.line}, column ${at.col}` : ''}${e.code ? ` (${e.code})` : ''}`
}

/** Line and column of a character offset. */
function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`
}

/**
 * One line for a JSON.parse error of `text`: where it stopped, without V8's quotation of the text
 * (`Unexpected token 'p', "password=…"... is not valid JSON`).
 */
export function jsonErrorText(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : String(error)
  const pos = /at position (\d+)/.exec(message)
  if (pos) return `not valid JSON at ${lineCol(text, Number(pos[1]))}`
  if (/Unexpected end of JSON input/i.test(message)) return 'not valid JSON: it ends early'
  // V8 gives no position for a bad first token: find the first character that no JSON text starts with.
  const first = /\S/.exec(text)
  if (first === null) return 'not valid JSON: it is empty'
  return /^[[{"\-0-9tfn]/.test(first[0]) ? 'not valid JSON' : `not valid JSON at ${lineCol(text, first.index)} (a JSON text starts with { or [)`
}
