/**
 * The columnar snapshot layout (`.cloudctl`, `.cloudctl.gz`): each table stored column by column,
 * numbers and booleans as typed arrays, strings either as a dictionary (host names, states,
 * projects: few distinct values) or as one UTF-8 text with offsets (UUIDs). Loading it costs one
 * read and then plain array indexing per value, where JSON costs a tokenizer pass over every byte
 * (the 10k-host cloud is 700 MB of JSON text).
 *
 *   "CLOUDCTL-COLS\n" (14 bytes) | u8 layout version | 1 byte padding | u32 LE header length | header JSON (UTF-8)
 *   | padding to 8 | blocks, each starting on a multiple of 8 (typed arrays are read in place)
 *
 * The header holds everything that is not a table (format_version, captured_at, source, release,
 * cells) verbatim, and for each table its row count and its columns: name, encoding, and the
 * [offset, length] of each block, offsets counted from the first block. A per-row state byte (0 a
 * value, 1 null, 2 the key is absent) is stored only for columns that have nulls or missing keys, so
 * that a row reads back with exactly the keys and values it was written with.
 *
 * Nothing here validates a snapshot: the reader rebuilds the same document JSON would have given
 * and file.ts hands it to the one validator (schema.ts).
 */
import {Buffer, isAscii} from 'node:buffer'

import {SnapshotFormatError} from '../errors.js'

export const COLUMNAR_MAGIC = Buffer.from('CLOUDCTL-COLS\n', 'latin1')
const LAYOUT_VERSION = 2
const PREFIX = COLUMNAR_MAGIC.length + 2 + 4

const VALUE = 0
const NULL = 1
const ABSENT = 2

type Block = [offset: number, length: number]

type Encoding = 'i32' | 'f64' | 'bool' | 'dict' | 'text' | 'struct' | 'json'

/**
 * Consecutive rows of a 'text' or 'json' column: one JS string each when read, so each stays far
 * below V8's longest string (2^29 characters; a 10k-host cloud's request specs are ~600 MB).
 */
interface Segment {
  rows: number
  data: Block
  /** 'text': the offsets (rows + 1, in UTF-16 units) of each value in the segment's text. */
  aux?: Block
}

interface ColumnHeader {
  name: string
  enc: Encoding
  /** The values ('i32', 'f64', 'bool'), the dictionary indexes ('dict'). */
  data?: Block
  /** The dictionary's JSON ('dict'). */
  aux?: Block
  /** 'text' and 'json'. */
  segments?: Segment[]
  state?: Block
  /** 'struct': the columns of the objects the column holds (instance_extra's blobs), stored like a table's. */
  columns?: ColumnHeader[]
}

interface TableHeader {
  name: string
  rows: number
  columns: ColumnHeader[]
}

interface Header {
  /** Every top-level key whose value is not a section of tables, verbatim. */
  doc: Record<string, unknown>
  /** Section name -> its tables (arrays of rows) in order; non-table values of a section verbatim. */
  sections: Array<{name: string; tables: TableHeader[]; other: Record<string, unknown>}>
}

/** Top-level keys whose values are objects of tables. */
const SECTIONS = new Set(['nova_api', 'nova', 'placement'])

export function isColumnar(buf: Buffer): boolean {
  return buf.length >= COLUMNAR_MAGIC.length && buf.subarray(0, COLUMNAR_MAGIC.length).equals(COLUMNAR_MAGIC)
}

// ---------------------------------------------------------------- writing

class Blocks {
  readonly parts: Buffer[] = []
  private size = 0

  add(bytes: Buffer | ArrayBufferView): Block {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    const at = this.size
    this.parts.push(buf)
    this.size += buf.length
    const pad = (8 - (this.size % 8)) % 8
    if (pad > 0) {
      this.parts.push(Buffer.alloc(pad))
      this.size += pad
    }
    return [at, buf.length]
  }
}

function isRowArray(v: unknown): v is Array<Record<string, unknown>> {
  if (!Array.isArray(v)) return false
  for (const row of v) if (row === null || typeof row !== 'object' || Array.isArray(row)) return false
  return true
}

function columnNames(rows: Array<Record<string, unknown>>): string[] {
  const seen = new Set<string>()
  const names: string[] = []
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k)
        names.push(k)
      }
    }
  }
  return names
}

/** Text with a lone surrogate does not survive UTF-8; such a column is written as JSON, which escapes it. (ES2024, in Node 20.) */
const wellFormed = (s: string): boolean => (s as unknown as {isWellFormed(): boolean}).isWellFormed()

function encodeColumn(rows: Array<Record<string, unknown>>, name: string, blocks: Blocks, segmentChars: number): ColumnHeader {
  const n = rows.length
  const values: unknown[] = new Array(n)
  const state = new Uint8Array(n)
  let hasState = false
  let allInt = true
  let allNum = true
  let allBool = true
  let allStr = true
  let allObj = true
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    const v = row[name]
    values[i] = v
    if (v === undefined) {
      // A key holding undefined is dropped by JSON too: absent either way.
      state[i] = ABSENT
      hasState = true
      continue
    }
    if (v === null) {
      state[i] = NULL
      hasState = true
      continue
    }
    const t = typeof v
    if (t !== 'number') {
      allInt = false
      allNum = false
    } else if (!((v as number) === ((v as number) | 0) && !Object.is(v, -0))) allInt = false
    if (t !== 'boolean') allBool = false
    if (t !== 'object' || Array.isArray(v)) allObj = false
    if (t !== 'string' || !wellFormed(v as string)) allStr = false
  }
  const stateBlock = hasState ? {state: blocks.add(state)} : {}
  if (allInt) {
    const a = new Int32Array(n)
    for (let i = 0; i < n; i++) if (state[i] === VALUE) a[i] = values[i] as number
    return {name, enc: 'i32', data: blocks.add(a), ...stateBlock}
  }
  if (allNum) {
    const a = new Float64Array(n)
    for (let i = 0; i < n; i++) if (state[i] === VALUE) a[i] = values[i] as number
    return {name, enc: 'f64', data: blocks.add(a), ...stateBlock}
  }
  if (allBool) {
    const a = new Uint8Array(n)
    for (let i = 0; i < n; i++) if (state[i] === VALUE) a[i] = values[i] ? 1 : 0
    return {name, enc: 'bool', data: blocks.add(a), ...stateBlock}
  }
  if (allStr) {
    const dict = new Map<string, number>()
    for (let i = 0; i < n && dict.size <= 65_535; i++) if (state[i] === VALUE && !dict.has(values[i] as string)) dict.set(values[i] as string, dict.size)
    // A dictionary pays off while values repeat; past a quarter of the rows (UUIDs) plain text is smaller.
    if (dict.size <= 65_535 && dict.size <= Math.max(64, n / 4)) {
      const idx = new Uint16Array(n)
      for (let i = 0; i < n; i++) if (state[i] === VALUE) idx[i] = dict.get(values[i] as string) as number
      return {name, enc: 'dict', data: blocks.add(idx), aux: blocks.add(Buffer.from(JSON.stringify([...dict.keys()]), 'utf8')), ...stateBlock}
    }
    const segments: Segment[] = []
    let from = 0
    while (from < n || segments.length === 0) {
      const offsets: number[] = []
      const parts: string[] = []
      let at = 0
      let i = from
      // At least one row per segment, however long its text.
      for (; i < n && (i === from || at < segmentChars); i++) {
        offsets.push(at)
        if (state[i] === VALUE) {
          parts.push(values[i] as string)
          at += (values[i] as string).length
        }
      }
      offsets.push(at)
      segments.push({rows: i - from, data: blocks.add(Buffer.from(parts.join(''), 'utf8')), aux: blocks.add(Uint32Array.from(offsets))})
      from = i
    }
    return {name, enc: 'text', segments, ...stateBlock}
  }
  if (allObj) {
    // Objects of a few known keys (instance_extra): their fields as columns, so that the flavor
    // blobs, repeated on every instance of a flavor, are stored and loaded once each.
    const objects = values.map((v, i) => (state[i] === VALUE ? (v as Record<string, unknown>) : {}))
    return {name, enc: 'struct', columns: columnNames(objects).map((c) => encodeColumn(objects, c, blocks, segmentChars)), ...stateBlock}
  }
  // Arrays, mixed types: JSON arrays of consecutive values (absent keys as null, told apart by state).
  const segments: Segment[] = []
  let from = 0
  while (from < n || segments.length === 0) {
    const parts: string[] = []
    let at = 0
    let i = from
    for (; i < n && (i === from || at < segmentChars); i++) {
      const text = JSON.stringify(values[i] === undefined ? null : values[i])
      parts.push(text)
      at += text.length + 1
    }
    segments.push({rows: i - from, data: blocks.add(Buffer.from(`[${parts.join(',')}]`, 'utf8'))})
    from = i
  }
  return {name, enc: 'json', segments, ...stateBlock}
}

function encodeTable(name: string, rows: Array<Record<string, unknown>>, blocks: Blocks, segmentChars: number): TableHeader {
  return {name, rows: rows.length, columns: columnNames(rows).map((c) => encodeColumn(rows, c, blocks, segmentChars))}
}

/** Characters of text per segment of a 'text' or 'json' column (tests make it small). */
const SEGMENT_CHARS = 1 << 26

/** The whole file, as buffers to write in order. */
export function encodeColumnar(snapshot: object, opts: {segmentChars?: number} = {}): Buffer[] {
  const segmentChars = opts.segmentChars ?? SEGMENT_CHARS
  const blocks = new Blocks()
  const header: Header = {doc: {}, sections: []}
  for (const [key, value] of Object.entries(snapshot)) {
    if (SECTIONS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const section: Header['sections'][number] = {name: key, tables: [], other: {}}
      for (const [table, rows] of Object.entries(value as Record<string, unknown>)) {
        if (isRowArray(rows)) section.tables.push(encodeTable(table, rows, blocks, segmentChars))
        else section.other[table] = rows
      }
      header.sections.push(section)
    } else {
      header.doc[key] = value
    }
  }
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8')
  const prefix = Buffer.alloc(PREFIX)
  COLUMNAR_MAGIC.copy(prefix)
  prefix.writeUInt8(LAYOUT_VERSION, COLUMNAR_MAGIC.length)
  prefix.writeUInt32LE(headerBytes.length, COLUMNAR_MAGIC.length + 2)
  const pad = (8 - ((PREFIX + headerBytes.length) % 8)) % 8
  return [prefix, headerBytes, Buffer.alloc(pad), ...blocks.parts]
}

// ---------------------------------------------------------------- reading

class Reader {
  constructor(
    private readonly buf: Buffer,
    private readonly base: number,
    private readonly path: string,
  ) {}

  bytes(block: Block | undefined, what: string): Buffer {
    if (!Array.isArray(block) || block.length !== 2) throw this.corrupt(`${what} has no block`)
    const [offset, length] = block
    const start = this.base + offset
    if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0 || start + length > this.buf.length) {
      throw new SnapshotFormatError(`${this.path}: the snapshot is truncated or corrupt (${what} lies outside the file)`)
    }
    return this.buf.subarray(start, start + length)
  }

  typed<T>(block: Block | undefined, what: string, rows: number, width: number, make: (b: ArrayBuffer, at: number, n: number) => T): T {
    const b = this.bytes(block, what)
    if (b.length !== rows * width) throw this.corrupt(`${what} holds ${b.length} bytes for ${rows} rows`)
    // In place when aligned (the writer aligns every block); a copy otherwise (e.g. a Buffer from the pool).
    if (b.byteOffset % width === 0) return make(b.buffer as ArrayBuffer, b.byteOffset, rows)
    const copy = new Uint8Array(b)
    return make(copy.buffer, 0, rows)
  }

  text(b: Buffer): string {
    // All-ASCII text (UUIDs, names) decodes as latin1 after a SIMD check: several times cheaper than UTF-8.
    return isAscii(b) ? b.toString('latin1') : b.toString('utf8')
  }

  json(block: Block | undefined, what: string): unknown {
    try {
      return JSON.parse(this.text(this.bytes(block, what)))
    } catch (error) {
      if (error instanceof SnapshotFormatError) throw error
      throw this.corrupt(`${what} is not valid JSON`)
    }
  }

  corrupt(why: string): SnapshotFormatError {
    return new SnapshotFormatError(`${this.path}: the columnar snapshot is corrupt (${why})`)
  }
}

function segmentsOf(r: Reader, c: ColumnHeader, what: string, rows: number): Segment[] {
  const segs = c.segments
  if (!Array.isArray(segs) || segs.reduce((n, s) => n + (Number.isInteger(s?.rows) && s.rows >= 0 ? s.rows : Number.NaN), 0) !== rows) {
    throw r.corrupt(`${what}'s segments do not hold ${rows} rows`)
  }
  return segs
}

/** One column's values, row by row (null where the state says null or absent). */
function decodeColumn(r: Reader, table: string, rows: number, c: ColumnHeader): unknown[] | Int32Array | Float64Array {
  const what = `column ${table}.${c.name}`
  switch (c.enc) {
    case 'i32':
      return r.typed(c.data, what, rows, 4, (b, at, n) => new Int32Array(b, at, n))
    case 'f64':
      return r.typed(c.data, what, rows, 8, (b, at, n) => new Float64Array(b, at, n))
    case 'bool': {
      const a = r.typed(c.data, what, rows, 1, (b, at, n) => new Uint8Array(b, at, n))
      const out: boolean[] = new Array(rows)
      for (let i = 0; i < rows; i++) out[i] = a[i] === 1
      return out
    }
    case 'dict': {
      const dict = r.json(c.aux, `${what} dictionary`)
      if (!Array.isArray(dict)) throw r.corrupt(`${what} dictionary is not a list`)
      const idx = r.typed(c.data, what, rows, 2, (b, at, n) => new Uint16Array(b, at, n))
      const out: unknown[] = new Array(rows)
      for (let i = 0; i < rows; i++) out[i] = dict[idx[i]]
      return out
    }
    case 'text': {
      const out: unknown[] = new Array(rows)
      let base = 0
      for (const seg of segmentsOf(r, c, what, rows)) {
        const text = r.text(r.bytes(seg.data, what))
        const off = r.typed(seg.aux, `${what} offsets`, seg.rows + 1, 4, (b, at, n) => new Uint32Array(b, at, n))
        if (off[seg.rows] !== text.length) throw r.corrupt(`${what} offsets do not match its text`)
        for (let i = 0; i < seg.rows; i++) out[base + i] = text.slice(off[i], off[i + 1])
        base += seg.rows
      }
      return out
    }
    case 'struct': {
      if (!Array.isArray(c.columns)) throw r.corrupt(`${what} has no columns`)
      return decodeRows(r, `${table}.${c.name}`, rows, c.columns)
    }
    case 'json': {
      const out: unknown[] = []
      for (const seg of segmentsOf(r, c, what, rows)) {
        const values = r.json(seg.data, what)
        if (!Array.isArray(values) || values.length !== seg.rows) throw r.corrupt(`${what} does not hold ${seg.rows} values`)
        for (const v of values) out.push(v)
      }
      return out
    }
    default:
      throw r.corrupt(`${what} has an unknown encoding ${JSON.stringify(c.enc)}`)
  }
}

function decodeTable(r: Reader, t: TableHeader): Array<Record<string, unknown>> {
  if (!Number.isInteger(t.rows) || t.rows < 0 || !Array.isArray(t.columns)) throw r.corrupt(`table ${String(t.name)} has no row count or columns`)
  return decodeRows(r, t.name, t.rows, t.columns)
}

function decodeRows(r: Reader, table: string, n: number, columns: ColumnHeader[]): Array<Record<string, unknown>> {
  const names = columns.map((c) => c.name)
  const values = columns.map((c) => decodeColumn(r, table, n, c))
  const states = columns.map((c) => (c.state === undefined ? null : r.typed(c.state, `column ${table}.${c.name} state`, n, 1, (b, at, k) => new Uint8Array(b, at, k))))
  const rows: Array<Record<string, unknown>> = new Array(n)
  const build = rowBuilder(names, states)
  if (build !== null) {
    build(values, states, n, rows)
    return rows
  }
  const k = names.length
  for (let i = 0; i < n; i++) {
    const row: Record<string, unknown> = {}
    for (let j = 0; j < k; j++) {
      const st = states[j]
      if (st !== null && st[i] === ABSENT) continue
      // As JSON.parse does: an own property even for '__proto__', which `row[name] =` would take as the prototype.
      Object.defineProperty(row, names[j], {value: st === null || st[i] === VALUE ? values[j][i] : null, enumerable: true, writable: true, configurable: true})
    }
    rows[i] = row
  }
  return rows
}

type ColumnValues = ArrayLike<unknown>
type RowBuilder = (values: ColumnValues[], states: Array<Uint8Array | null>, n: number, rows: Array<Record<string, unknown>>) => void

/** Property names that can be written as identifiers in an object literal ('__proto__' there would set the prototype). */
const PLAIN_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * A loop that builds each row as one object literal: V8 then allocates every row with the same
 * shape from a template, several times faster than adding keys one by one (a million rows at the
 * 10k-host cloud). Only names that are plain identifiers are written into the code (anything else
 * takes the generic loop), so a file cannot put code into it. Keys some rows lack are added after
 * the literal, to those rows only.
 */
function rowBuilder(names: string[], states: Array<Uint8Array | null>): RowBuilder | null {
  if (names.some((name) => !PLAIN_NAME.test(name) || name === '__proto__')) return null
  const head: string[] = []
  const literal: string[] = []
  const optional: string[] = []
  for (const [j, name] of names.entries()) {
    const st = states[j]
    head.push(`const v${j} = values[${j}]${st === null ? '' : `, s${j} = states[${j}]`}`)
    if (st === null) literal.push(`${name}: v${j}[i]`)
    else if (!st.includes(ABSENT)) literal.push(`${name}: s${j}[i] === ${VALUE} ? v${j}[i] : null`)
    else optional.push(`if (s${j}[i] !== ${ABSENT}) row.${name} = s${j}[i] === ${VALUE} ? v${j}[i] : null`)
  }
  const body = `${head.join('\n')}\nfor (let i = 0; i < n; i++) {\nconst row = {${literal.join(', ')}}\n${optional.join('\n')}\nrows[i] = row\n}`
  return new Function('values', 'states', 'n', 'rows', body) as RowBuilder
}

/** The snapshot document (not yet validated) of a columnar file held in `buf`. */
export function decodeColumnar(buf: Buffer, path: string): Record<string, unknown> {
  if (!isColumnar(buf)) throw new SnapshotFormatError(`${path}: not a columnar snapshot`)
  if (buf.length < PREFIX) throw new SnapshotFormatError(`${path}: the snapshot is truncated (it ends inside its header)`)
  const version = buf.readUInt8(COLUMNAR_MAGIC.length)
  if (version !== LAYOUT_VERSION) {
    throw new SnapshotFormatError(`${path}: columnar layout version ${version} is not one this cloudctl reads (it reads ${LAYOUT_VERSION})`, 'Read it with the cloudctl that wrote it and write it out as .json.gz.')
  }
  const headerLength = buf.readUInt32LE(COLUMNAR_MAGIC.length + 2)
  if (PREFIX + headerLength > buf.length) throw new SnapshotFormatError(`${path}: the snapshot is truncated (it ends inside its header)`)
  let header: Header
  try {
    header = JSON.parse(buf.toString('utf8', PREFIX, PREFIX + headerLength)) as Header
  } catch {
    throw new SnapshotFormatError(`${path}: the columnar snapshot is corrupt (its header is not valid JSON)`)
  }
  const base = PREFIX + headerLength + ((8 - ((PREFIX + headerLength) % 8)) % 8)
  const r = new Reader(buf, base, path)
  if (header === null || typeof header !== 'object' || typeof header.doc !== 'object' || !Array.isArray(header.sections)) throw r.corrupt('its header lacks doc or sections')
  const doc: Record<string, unknown> = {...header.doc}
  for (const s of header.sections) {
    const section: Record<string, unknown> = {}
    for (const t of s.tables) section[t.name] = decodeTable(r, t)
    Object.assign(section, s.other)
    doc[s.name] = section
  }
  return doc
}
