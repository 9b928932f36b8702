/**
 * Snapshot rows from the driver's own parse of each row (mysql2's public rowsAsArray), converted
 * column kind by column kind (Number, String, !== 0, the enum's values). The capture used to decode
 * the row packets itself by replacing the driver's private row parser; that gained 10-17 % of a
 * capture's read time and bound cloudctl to mysql2's internals (docs/bench.md has the figures).
 */
import {enumValues, nullable, sqlKind, type TableSpec} from '../domain/tables/define.js'

export type Row = Record<string, unknown>
/**
 * From the driver's row as an array in SELECT order (no object keyed by column name per row). The
 * values of columns selected beyond the row's (the `also` of a read) are written to `also`.
 */
export type Convert = (x: unknown[], cellUuid: string | undefined, also: unknown[]) => Row
/** A converter with its own memo of the spec's repeating values: one per read, dropped with it. */
export type MakeConvert = () => Convert

/**
 * One string per distinct value of a repeating column (the spec's `repeats`), for one read. Equal
 * texts are found by direct comparison within a bucket of the same length, and a length with more
 * than BUCKET texts moves to a hashed map, as util/text-memo.ts does; except a long text (a blob)
 * whose length filled its bucket with no text seen twice: that length is given up and its texts
 * handed back as they are. A column that repeats has a few texts per length (one flavor blob per
 * flavor); one that does not (an instance's NUMA topology names its instance) would have each of
 * its 300k texts hashed and kept in a map for no copy saved.
 */
export class RepeatMemo {
  private readonly byLength = new Map<number, Bucket | null | false>()
  private readonly byText = new Map<string, string>()

  get(text: string): string {
    const bucket = this.byLength.get(text.length)
    if (bucket === false) return text
    if (bucket === null) {
      const v = this.byText.get(text)
      if (v !== undefined) return v
      this.byText.set(text, text)
      return text
    }
    if (bucket) {
      for (const t of bucket.texts) {
        if (t === text) {
          bucket.repeated = true
          return t
        }
      }
    }
    if (!bucket) this.byLength.set(text.length, {texts: [text], repeated: false})
    else if (bucket.texts.length < RepeatMemo.BUCKET) bucket.texts.push(text)
    else if (text.length > RepeatMemo.LONG && !bucket.repeated) this.byLength.set(text.length, false)
    else {
      for (const t of bucket.texts) this.byText.set(t, t)
      this.byText.set(text, text)
      this.byLength.set(text.length, null)
    }
    return text
  }

  static readonly BUCKET = 8
  /** Longer texts are blobs: hashing one costs about what the copy it might save does. */
  static readonly LONG = 128
}

interface Bucket {
  texts: string[]
  repeated: boolean
}

/** The expression converting the raw driver value `v` of a column into the row's value. */
function valueExpr(name: string, ddl: string, v: string, enums: string[][], repeats: string | null, run: string | null = null): string {
  const isNull = `${v} === null || ${v} === undefined`
  if (name === 'deleted') return `(${isNull} ? 0 : Number(${v}))`
  const kind = sqlKind(ddl)
  const notNull = !nullable(name, ddl)
  switch (kind) {
    case 'int':
    case 'float':
      return notNull ? `Number(${v})` : `(${isNull} ? null : Number(${v}))`
    case 'bool':
      return notNull ? `(Number(${v}) !== 0)` : `(${isNull} ? null : Number(${v}) !== 0)`
    case 'enum':
      enums.push(enumValues(ddl))
      return `(${v} !== null && E${enums.length - 1}.has(${v}) ? ${v} : null)`
    case 'text':
      // The driver hands text as strings: the memo is keyed by the value itself.
      if (repeats !== null) return `(${isNull} ? null : ${repeats}.get(String(${v})))`
      if (run !== null) return `(${isNull} ? null : ${v} === ${run} ? ${run} : (${run} = String(${v})))`
      return notNull ? `String(${v})` : `(${isNull} ? null : String(${v}))`
  }
}

const INITIAL: Record<string, string> = {o: '{}', a: '[]', 'o?': 'null', 'a?': 'null'}

/**
 * The converter compiled to one object literal over the spec's (constant) column names: a generic
 * loop adding keys one by one is several times slower over a million rows, and a literal gives
 * every row the same shape. `leftOut`: row columns the read does not select (an audit view's,
 * capture.ts); the row holds null for them, in the same place.
 */
export function compileConverter(spec: TableSpec, newer: readonly string[], also: readonly string[] = [], leftOut: readonly string[] = []): MakeConvert {
  const enums: string[][] = []
  const fields: string[] = []
  const repeats = (spec.repeats ?? []).filter((name) => !leftOut.includes(name))
  // The memo of a repeating column, by name, in the generated code.
  const memoOf = (name: string): string | null => (repeats.includes(name) ? `m${repeats.indexOf(name)}` : null)
  const runs = (spec.runs ?? []).filter((name) => !leftOut.includes(name))
  // The previous row's value of a run column, in the generated code.
  const runOf = (name: string): string | null => (runs.includes(name) ? `r${runs.indexOf(name)}` : null)
  // The positions of selectSql's column list: the row's columns read, then the newer ones present.
  const selected = spec.row.filter((name) => !leftOut.includes(name))
  if (spec.cell) fields.push('cell_uuid: c')
  for (const name of spec.row) {
    const i = selected.indexOf(name)
    fields.push(`${JSON.stringify(name)}: ${i < 0 ? 'null' : valueExpr(name, spec.columns[name] as string, `v${i}`, enums, memoOf(name), runOf(name))}`)
  }
  for (const [name, e] of Object.entries(spec.extras ?? {})) fields.push(`${JSON.stringify(name)}: ${INITIAL[e.kind] ?? 'null'}`)
  newer.forEach((name, i) => fields.push(`${JSON.stringify(name)}: ${valueExpr(name, spec.newer?.[name] as string, `n${i}`, enums, memoOf(name))}`))
  const reads = [...selected.map((_, i) => `const v${i} = x[${i}]`), ...newer.map((_, i) => `const n${i} = x[${selected.length + i}]`)]
  const alsoAt = selected.length + newer.length
  const alsoLines = also.map((name, i) => `a[${i}] = ${valueExpr(name, spec.columns[name] as string, `x[${alsoAt + i}]`, enums, null)}`)
  const memos = [...repeats.map((_, i) => `const m${i} = new RepeatMemo()`), ...runs.map((_, i) => `let r${i} = null`)].join('\n')
  const body = `return () => {\n${memos}\nreturn (x, c, a) => {\n${reads.join('\n')}\n${alsoLines.join('\n')}\nreturn {${fields.join(', ')}}\n}\n}`
  // Generated from the constant table specs, never from input.
  const make = new Function('RepeatMemo', ...enums.map((_, i) => `E${i}`), body)
  return make(RepeatMemo, ...enums.map((values) => new Set(values))) as MakeConvert
}

const converters = new WeakMap<TableSpec, Map<string, MakeConvert>>()

/** A converter for one read of `spec`'s rows (its memo of repeating values lives as long as it). */
export function rowConverter(spec: TableSpec, newer: readonly string[] = [], also: readonly string[] = [], leftOut: readonly string[] = []): Convert {
  let bySpec = converters.get(spec)
  if (!bySpec) converters.set(spec, (bySpec = new Map()))
  const key = `${newer.join(',')}|${also.join(',')}|${leftOut.join(',')}`
  let f = bySpec.get(key)
  if (!f) bySpec.set(key, (f = compileConverter(spec, newer, also, leftOut)))
  return f()
}
