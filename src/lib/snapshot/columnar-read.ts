/**
 * The reader of the columnar layout (columnar.ts describes it and writes it). Apart from the writer
 * because it is the half that must distrust its input: every block is bounds-checked against the
 * file, and rows are rebuilt with exactly the keys they were written with.
 */
import {Buffer, isAscii} from 'node:buffer'

import {SnapshotFormatError} from '../errors.js'
import {
  ABSENT,
  type Block,
  COLUMNAR_MAGIC,
  type ColumnHeader,
  type Header,
  LAYOUT_VERSION,
  PREFIX,
  type Segment,
  type TableHeader,
  VALUE,
  isColumnar,
} from './columnar.js'

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
  const states = columns.map((c) =>
    c.state === undefined ? null : r.typed(c.state, `column ${table}.${c.name} state`, n, 1, (b, at, k) => new Uint8Array(b, at, k)),
  )
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
    throw new SnapshotFormatError(
      `${path}: columnar layout version ${version} is not one this cloudctl reads (it reads ${LAYOUT_VERSION})`,
      'Read it with the cloudctl that wrote it and write it out as .json.gz.',
    )
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
  if (header === null || typeof header !== 'object' || typeof header.doc !== 'object' || !Array.isArray(header.sections))
    throw r.corrupt('its header lacks doc or sections')
  const doc: Record<string, unknown> = {...header.doc}
  for (const s of header.sections) {
    const section: Record<string, unknown> = {}
    for (const t of s.tables) section[t.name] = decodeTable(r, t)
    Object.assign(section, s.other)
    doc[s.name] = section
  }
  return doc
}
