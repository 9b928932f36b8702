/**
 * Reading one table into snapshot rows, driven by its spec (domain/tables): the SELECT lists the
 * row's columns, ordered by the primary key, and the converter is compiled from the column types.
 * Family readers (read-nova-api.ts, read-cell.ts, read-placement.ts) and targeted reads use it.
 *
 * FLOAT columns are selected as `col + 0e0`: the server prints FLOAT with 6 significant digits in the
 * text protocol (0.123456789 reads '0.123457'), while DOUBLE arithmetic widens the stored single
 * exactly (0.9 reads 0.8999999761581421), which is what the snapshot records.
 */
import type {ProgressSink} from '../snapshot/source.js'
import {enumValues, nullable, type RowOf, sqlKind, type TableSpec} from '../domain/tables/define.js'
import {beginConsistentRead, closeConnection, type Connection, type DbErrorContext, eachRow, openConnection} from './connection.js'
import {itself, TextMemo} from '../util/text-memo.js'
import type {DbUrl} from './url.js'

export type Row = Record<string, unknown>

const PROGRESS_EVERY = 50_000

/** One database being read: its label for progress and errors, its URL, its connection. */
export class Reader {
  constructor(
    readonly label: string,
    readonly url: DbUrl,
    readonly conn: Connection,
    private readonly progress: ProgressSink,
  ) {}

  /** Streams `sql` and hands each row to `each`; reports progress under `table`. */
  each(table: string, sql: string, each: (row: Row) => void, params: unknown[] = []): Promise<number> {
    return this.stream(table, sql, each, params, false)
  }

  /** As `each`, each row an array of its values in SELECT order. */
  eachArray(table: string, sql: string, each: (row: unknown[]) => void, params: unknown[] = []): Promise<number> {
    return this.stream(table, sql, each, params, true)
  }

  private async stream<T>(table: string, sql: string, each: (row: T) => void, params: unknown[], asArrays: boolean): Promise<number> {
    const ctx: DbErrorContext = {label: this.label, url: this.url, table}
    let n = 0
    const progress = this.progress
    const database = this.label
    await eachRow<T>(this.conn, sql, params, (row) => {
      each(row)
      n++
      if (n % PROGRESS_EVERY === 0) progress({database, table, rows: n, done: false})
    }, ctx, asArrays)
    this.progress({database: this.label, table, rows: n, done: true})
    return n
  }

  /** A small query that is not a table of the snapshot (no progress). */
  async query(table: string, sql: string, params: unknown[] = []): Promise<Row[]> {
    const out: Row[] = []
    await eachRow<Row>(this.conn, sql, params, (row) => out.push(row), {label: this.label, url: this.url, table})
    return out
  }
}

export async function openReader(label: string, url: DbUrl, progress: ProgressSink): Promise<Reader> {
  const conn = await openConnection(url, {label})
  try {
    await beginConsistentRead(conn, {label, url})
  } catch (error) {
    await closeConnection(conn)
    throw error
  }
  return new Reader(label, url, conn, progress)
}

// ---------------------------------------------------------------- spec-driven reads

export interface ReadOptions<T extends TableSpec> {
  /** The owning cell, for tables whose rows carry cell_uuid. */
  cellUuid?: string
  /** Newer columns the database has ('table.column', from the schema probe). */
  present?: ReadonlySet<string>
  /** An SQL condition: constant text, any input bound through `params` placeholders. */
  where?: string
  /** The values of `where`'s placeholders. */
  params?: unknown[]
  /** Columns selected beside the row's, for the caller to read raw (a parent key). */
  also?: ReadonlyArray<keyof T['columns'] & string>
}

/** From the driver's row as an array in SELECT order: no object keyed by column name per row. */
type Convert = (x: unknown[], cellUuid: string | undefined) => Row
/** A converter with its own memo of the spec's repeating values: one per read, dropped with it. */
type MakeConvert = () => Convert

const id = (name: string): string => `\`${name}\``

function newerPresent(spec: TableSpec, present: ReadonlySet<string> | undefined): string[] {
  return Object.keys(spec.newer ?? {}).filter((c) => present?.has(`${spec.name}.${c}`) ?? false)
}

function primaryKey(spec: TableSpec): string[] {
  const pk = spec.keys.find((k) => k.startsWith('PRIMARY KEY'))
  return pk ? [...pk.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string) : []
}

/** The SELECT for a spec's rows (and `also` columns), in primary-key order. */
export function selectSql<T extends TableSpec>(spec: T, opts: ReadOptions<T> = {}): string {
  const names = [...spec.row, ...newerPresent(spec, opts.present), ...(opts.also ?? [])]
  const ddl = (n: string): string => spec.columns[n] ?? spec.newer?.[n] ?? ''
  const list = names.map((n) => (sqlKind(ddl(n)) === 'float' ? `${id(n)} + 0e0 AS ${id(n)}` : id(n)))
  return `SELECT ${list.join(', ')} FROM ${id(spec.name)}${opts.where ? ` WHERE ${opts.where}` : ''} ORDER BY ${primaryKey(spec).map(id).join(', ')}`
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
      if (repeats !== null) return `(${isNull} ? null : ${repeats}.get(String(${v}), itself))`
      if (run !== null) return `(${isNull} ? null : ${v} === ${run} ? ${run} : (${run} = String(${v})))`
      return notNull ? `String(${v})` : `(${isNull} ? null : String(${v}))`
  }
}

const INITIAL: Record<string, string> = {o: '{}', a: '[]', 'o?': 'null', 'a?': 'null'}

/**
 * The converter compiled to one object literal over the spec's (constant) column names: a generic
 * loop adding keys one by one is several times slower over a million rows, and a literal gives
 * every row the same shape.
 */
function compileConverter(spec: TableSpec, newer: string[]): MakeConvert {
  const enums: string[][] = []
  const fields: string[] = []
  const repeats = spec.repeats ?? []
  // The memo of a repeating column, by name, in the generated code.
  const memoOf = (name: string): string | null => (repeats.includes(name) ? `m${repeats.indexOf(name)}` : null)
  const runs = spec.runs ?? []
  // The previous row's value of a run column, in the generated code.
  const runOf = (name: string): string | null => (runs.includes(name) ? `r${runs.indexOf(name)}` : null)
  if (spec.cell) fields.push('cell_uuid: c')
  spec.row.forEach((name, i) => {
    fields.push(`${JSON.stringify(name)}: ${valueExpr(name, spec.columns[name] as string, `v${i}`, enums, memoOf(name), runOf(name))}`)
  })
  for (const [name, e] of Object.entries(spec.extras ?? {})) fields.push(`${JSON.stringify(name)}: ${INITIAL[e.kind] ?? 'null'}`)
  newer.forEach((name, i) => fields.push(`${JSON.stringify(name)}: ${valueExpr(name, spec.newer?.[name] as string, `n${i}`, enums, memoOf(name))}`))
  // The positions of selectSql's column list: the row's columns, then the newer ones present.
  const reads = [...spec.row.map((_, i) => `const v${i} = x[${i}]`), ...newer.map((_, i) => `const n${i} = x[${spec.row.length + i}]`)]
  const memos = [...repeats.map((_, i) => `const m${i} = new TextMemo()`), ...runs.map((_, i) => `let r${i} = null`)].join('\n')
  const body = `return () => {\n${memos}\nreturn (x, c) => {\n${reads.join('\n')}\nreturn {${fields.join(', ')}}\n}\n}`
  // Generated from the constant table specs, never from input.
  const make = new Function('TextMemo', 'itself', ...enums.map((_, i) => `E${i}`), body)
  return make(TextMemo, itself, ...enums.map((values) => new Set(values))) as MakeConvert
}

const converters = new WeakMap<TableSpec, Map<string, MakeConvert>>()

/** A converter for one read of `spec`'s rows (its memo of repeating values lives as long as it). */
export function rowConverter(spec: TableSpec, present?: ReadonlySet<string>): (x: unknown[], cellUuid?: string) => Row {
  const newer = newerPresent(spec, present)
  let bySpec = converters.get(spec)
  if (!bySpec) converters.set(spec, (bySpec = new Map()))
  const key = newer.join(',')
  let f = bySpec.get(key)
  if (!f) bySpec.set(key, (f = compileConverter(spec, newer)))
  return f()
}

/**
 * Streams a table's rows, converted, to `each`, with the driver's array of the row: the `also`
 * columns are its values from position `at` on, in `also`'s order (no object per row for them).
 */
export function readEach<T extends TableSpec>(r: Reader, spec: T, opts: ReadOptions<T>, each: (row: RowOf<T>, raw: readonly unknown[], at: number) => void): Promise<number> {
  const convert = rowConverter(spec, opts.present)
  const cell = opts.cellUuid
  const at = spec.row.length + newerPresent(spec, opts.present).length
  return r.eachArray(spec.name, selectSql(spec, opts), (x) => each(convert(x, cell) as RowOf<T>, x, at), opts.params)
}

/** A table's rows, converted, in primary-key order. */
export async function readRows<T extends TableSpec>(r: Reader, spec: T, opts: ReadOptions<T> = {}): Promise<Array<RowOf<T>>> {
  const out: Array<RowOf<T>> = []
  const convert = rowConverter(spec, opts.present)
  const cell = opts.cellUuid
  await r.eachArray(spec.name, selectSql(spec, opts), (x) => out.push(convert(x, cell) as RowOf<T>), opts.params)
  return out
}
