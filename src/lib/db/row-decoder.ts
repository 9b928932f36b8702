/**
 * Snapshot rows decoded straight from the bytes of the server's text-protocol row packet: each
 * column's length-coded value goes to the row's value (number, boolean, string, null) without the
 * driver's array of strings and numbers in between.
 *
 * The values are those the driver's own parse gives, converted column kind by column kind (Number,
 * String, !== 0, the enum's values): test/db/row-decoder.test.ts holds that conversion as the
 * reference and compares the two on every table. What this saves is
 * the work per value at a million rows: the driver's generic dispatch, one string per value, and
 * for repeating columns (hosts, projects, states) a fresh string hashed only to find the copy
 * already kept. Short repeating values are found by their bytes; the string is made once per
 * distinct value.
 *
 * Integers are read digit by digit; anything that is not a plain integer of up to 15 digits (a
 * DECIMAL, a BIGINT past 2^53) goes through Number() of its text, as the converter does.
 */
import {enumValues, nullable, sqlKind, type TableSpec} from '../domain/tables/define.js'
import {itself, TextMemo} from '../util/text-memo.js'

export type Row = Record<string, unknown>

/**
 * Decodes the row whose first column starts at `p` in `b`. `cellUuid` fills cell_uuid; the values
 * of columns selected beyond the row's (the `also` of a read) are written to `also` from index 0.
 */
export type Decode = (b: Buffer, p: number, cellUuid: string | undefined, also: unknown[]) => Row
/** A decoder with its own memos of the spec's repeating values: one per read, dropped with it. */
export type MakeDecode = () => Decode

interface FastSlices {
  utf8Slice(start: number, end: number): string
  latin1Slice(start: number, end: number): string
}

// Node's Buffer has had these since before Node 20; toString() is the same with argument checks.
const fast = typeof (Buffer.prototype as unknown as Partial<FastSlices>).utf8Slice === 'function'

function utf8(b: Buffer, s: number, e: number): string {
  return fast ? (b as unknown as FastSlices).utf8Slice(s, e) : b.toString('utf8', s, e)
}

function latin1(b: Buffer, s: number, e: number): string {
  return fast ? (b as unknown as FastSlices).latin1Slice(s, e) : b.toString('latin1', s, e)
}

/** Text of [s, e): short ASCII values without a call into C++, the rest as UTF-8. */
export function text(b: Buffer, s: number, e: number): string {
  switch (e - s) {
    case 0:
      return ''
    case 1:
      if (b[s]! < 128) return String.fromCharCode(b[s]!)
      break
    case 2:
      if ((b[s]! | b[s + 1]!) < 128) return String.fromCharCode(b[s]!, b[s + 1]!)
      break
    case 3:
      if ((b[s]! | b[s + 1]! | b[s + 2]!) < 128) return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!)
      break
    case 4:
      if ((b[s]! | b[s + 1]! | b[s + 2]! | b[s + 3]!) < 128) return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!)
      break
  }
  return utf8(b, s, e)
}

/** A column's number: plain integers digit by digit, anything else as Number() of its text. */
export function int(b: Buffer, s: number, e: number): number {
  let i = s
  const negative = b[i] === 45
  if (negative) i++
  if (e - i > 15 || e === i) return Number(latin1(b, s, e))
  let v = 0
  for (; i < e; i++) {
    const d = b[i]! - 48
    if (d < 0 || d > 9) return Number(latin1(b, s, e))
    v = v * 10 + d
  }
  return negative ? -v : v
}

/** Where a length-coded value of more than 250 bytes starts (`h`: its first byte, 252-254). */
export function longStart(p: number, h: number): number {
  return p + (h === 252 ? 3 : h === 253 ? 4 : 9)
}

/** Its length. */
export function longLength(b: Buffer, p: number, h: number): number {
  if (h === 252) return b[p + 1]! | (b[p + 2]! << 8)
  if (h === 253) return b[p + 1]! | (b[p + 2]! << 8) | (b[p + 3]! << 16)
  return b.readUInt32LE(p + 1) + b.readUInt32LE(p + 5) * 4294967296
}

/** Values longer than this are memoised by their string (TextMemo), shorter ones by their bytes. */
const SHORT = 64

/**
 * One value per distinct byte string of a column: open addressing over an FNV-1a hash of the
 * bytes, the bytes of each entry kept in one arena. `make` turns the first copy's text into the
 * value (the text itself, or null for an enum value the schema does not have).
 */
export class ByteMemo<V> {
  private slots = new Int32Array(256)
  private hashes = new Int32Array(64)
  private starts = new Int32Array(64)
  private lengths = new Int32Array(64)
  private arena = new Uint8Array(4096)
  private used = 0
  private last = -1
  private readonly values: V[] = []
  private readonly long = new TextMemo<V>()

  constructor(private readonly make: (text: string) => V) {}

  get(b: Buffer, s: number, e: number): V {
    const n = e - s
    if (n > SHORT) return this.long.get(utf8(b, s, e), this.make)
    // The previous row's value first: states, zones and images repeat row after row.
    const last = this.last
    if (last >= 0 && this.lengths[last] === n) {
      const arena = this.arena
      let j = this.starts[last]!
      let i = s
      while (i < e && arena[j] === b[i]) {
        i++
        j++
      }
      if (i === e) return this.values[last] as V
    }
    let h = 0x811c9dc5 ^ n
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i]!, 16777619)
    const mask = this.slots.length - 1
    const arena = this.arena
    for (let at = h & mask; ; at = (at + 1) & mask) {
      const slot = this.slots[at]!
      if (slot === 0) break
      const k = slot - 1
      if (this.hashes[k] !== h || this.lengths[k] !== n) continue
      let j = this.starts[k]!
      let i = s
      while (i < e && arena[j] === b[i]) {
        i++
        j++
      }
      if (i === e) {
        this.last = k
        return this.values[k] as V
      }
    }
    this.last = this.values.length
    return this.add(b, s, e, h)
  }

  private add(b: Buffer, s: number, e: number, h: number): V {
    const n = e - s
    const k = this.values.length
    const value = this.make(text(b, s, e))
    if (k === this.hashes.length) {
      this.hashes = grow(this.hashes, k * 2)
      this.starts = grow(this.starts, k * 2)
      this.lengths = grow(this.lengths, k * 2)
    }
    if (this.used + n > this.arena.length) this.arena = grow(this.arena, Math.max(this.arena.length * 2, this.used + n))
    b.copy(this.arena, this.used, s, e)
    this.values.push(value)
    this.hashes[k] = h
    this.starts[k] = this.used
    this.lengths[k] = n
    this.used += n
    // Half full at most: a probe ends at an empty slot within a few steps.
    if ((k + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2)
    else this.place(k)
    return value
  }

  private place(k: number): void {
    const mask = this.slots.length - 1
    let at = this.hashes[k]! & mask
    while (this.slots[at] !== 0) at = (at + 1) & mask
    this.slots[at] = k + 1
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size)
    for (let k = 0; k < this.values.length; k++) this.place(k)
  }
}

function grow<T extends Int32Array | Uint8Array>(a: T, size: number): T {
  const out = new (a.constructor as new (n: number) => T)(size)
  out.set(a)
  return out
}

/** A column whose equal values come in runs: the previous row's string when the bytes are equal. */
export class RunMemo {
  private readonly last = new Uint8Array(SHORT)
  private length = -1
  private value = ''

  get(b: Buffer, s: number, e: number): string {
    const n = e - s
    if (n === this.length) {
      const last = this.last
      let i = s
      let j = 0
      while (i < e && last[j] === b[i]) {
        i++
        j++
      }
      if (i === e) return this.value
    }
    const value = text(b, s, e)
    if (n <= SHORT) {
      b.copy(this.last, 0, s, e)
      this.length = n
    } else if (value === this.value) return this.value
    else this.length = -1
    this.value = value
    return value
  }
}

/** The columns a read selects, in selectSql's order: the row's, the newer ones present, then `also`. */
export interface DecodedColumns {
  newer: readonly string[]
  also: readonly string[]
}

/**
 * The decoder compiled to one object literal over the spec's (constant) column names: a generic
 * loop adding keys one by one is several times slower over a million rows, and a literal gives
 * every row the same shape.
 */
export function compileDecoder(spec: TableSpec, columns: DecodedColumns): MakeDecode {
  const lines: string[] = []
  const fields: string[] = []
  const enums: string[][] = []
  const repeats = spec.repeats ?? []
  const runs = spec.runs ?? []
  const memos: string[] = []
  // One column's value: read its length-coded header at p, leave its bytes at [s, p).
  const read = (): void => {
    lines.push(`h = b[p]`, `if (h < 251) { s = p + 1; p = s + h } else if (h === 251) { s = -1; p++ } else { s = longStart(p, h); p = s + longLength(b, p, h) }`)
  }
  const value = (name: string, ddl: string): string => {
    if (name === 'deleted') return `(s < 0 ? 0 : int(b, s, p))`
    const notNull = !nullable(name, ddl)
    switch (sqlKind(ddl)) {
      case 'int':
        return `(s < 0 ? ${notNull ? '0' : 'null'} : int(b, s, p))`
      case 'float':
        return `(s < 0 ? ${notNull ? '0' : 'null'} : Number(latin1(b, s, p)))`
      case 'bool':
        return `(s < 0 ? ${notNull ? 'false' : 'null'} : int(b, s, p) !== 0)`
      case 'enum': {
        enums.push(enumValues(ddl))
        const m = `m${memos.length}`
        memos.push(`const ${m} = new ByteMemo((t) => (E${enums.length - 1}.has(t) ? t : null))`)
        return `(s < 0 ? null : ${m}.get(b, s, p))`
      }
      case 'text': {
        if (repeats.includes(name)) {
          const m = `m${memos.length}`
          memos.push(`const ${m} = new ByteMemo(itself)`)
          return `(s < 0 ? null : ${m}.get(b, s, p))`
        }
        if (runs.includes(name)) {
          const m = `m${memos.length}`
          memos.push(`const ${m} = new RunMemo()`)
          return `(s < 0 ? null : ${m}.get(b, s, p))`
        }
        // String(null) for a NULL in a NOT NULL column, as the converter's String(v) makes of it.
        return `(s < 0 ? ${notNull ? "'null'" : 'null'} : text(b, s, p))`
      }
    }
  }
  if (spec.cell) fields.push('cell_uuid: c')
  spec.row.forEach((name, i) => {
    read()
    lines.push(`const v${i} = ${value(name, spec.columns[name] as string)}`)
    fields.push(`${JSON.stringify(name)}: v${i}`)
  })
  const INITIAL: Record<string, string> = {o: '{}', a: '[]', 'o?': 'null', 'a?': 'null'}
  for (const [name, e] of Object.entries(spec.extras ?? {})) fields.push(`${JSON.stringify(name)}: ${INITIAL[e.kind] ?? 'null'}`)
  columns.newer.forEach((name, i) => {
    read()
    lines.push(`const n${i} = ${value(name, spec.newer?.[name] as string)}`)
    fields.push(`${JSON.stringify(name)}: n${i}`)
  })
  columns.also.forEach((name, i) => {
    read()
    lines.push(`a[${i}] = ${value(name, spec.columns[name] as string)}`)
  })
  const body = `return () => {\n${memos.join('\n')}\nreturn (b, p, c, a) => {\nlet h = 0, s = 0\n${lines.join('\n')}\nreturn {${fields.join(', ')}}\n}\n}`
  // Generated from the constant table specs, never from input.
  const make = new Function('int', 'text', 'latin1', 'longStart', 'longLength', 'ByteMemo', 'RunMemo', 'itself', ...enums.map((_, i) => `E${i}`), body)
  return make(int, text, latin1, longStart, longLength, ByteMemo, RunMemo, itself, ...enums.map((values) => new Set(values))) as MakeDecode
}
