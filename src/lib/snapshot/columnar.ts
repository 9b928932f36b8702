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
 * This file holds the layout and its writer; columnar-read.ts reads it. Nothing there validates a
 * snapshot: the reader rebuilds the same document JSON would have given and file.ts hands it to the
 * one validator (schema.ts).
 */
import {Buffer} from 'node:buffer'

export const COLUMNAR_MAGIC = Buffer.from('CLOUDCTL-COLS\n', 'latin1')
export const LAYOUT_VERSION = 2
export const PREFIX = COLUMNAR_MAGIC.length + 2 + 4

export const VALUE = 0
const NULL = 1
export const ABSENT = 2

export type Block = [offset: number, length: number]

type Encoding = 'i32' | 'f64' | 'bool' | 'dict' | 'text' | 'struct' | 'json'

/**
 * Consecutive rows of a 'text' or 'json' column: one JS string each when read, so each stays far
 * below V8's longest string (2^29 characters; a 10k-host cloud's request specs are ~600 MB).
 */
export interface Segment {
  rows: number
  data: Block
  /** 'text': the offsets (rows + 1, in UTF-16 units) of each value in the segment's text. */
  aux?: Block
}

export interface ColumnHeader {
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

export interface TableHeader {
  name: string
  rows: number
  columns: ColumnHeader[]
}

export interface Header {
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
