/**
 * Reading one table into snapshot rows, driven by its spec (domain/tables): the SELECT lists the
 * row's columns, ordered by the primary key, and the row converter (row-converter.ts) is compiled
 * from the column types.
 * Family readers (read-nova-api.ts, read-cell.ts, read-placement.ts) and targeted reads use it.
 *
 * FLOAT columns are selected as `col + 0e0`: the server prints FLOAT with 6 significant digits in the
 * text protocol (0.123456789 reads '0.123457'), while DOUBLE arithmetic widens the stored single
 * exactly (0.9 reads 0.8999999761581421), which is what the snapshot records.
 */
import type {ProgressSink} from '../snapshot/source.js'
import {type RowOf, sqlKind, type TableSpec} from '../domain/tables/define.js'
import {beginConsistentRead, closeConnection, type Connection, connectionContext, type DbErrorContext, openConnection, type OpenOptions} from './connection.js'
import {eachDecodedRow, eachRow, type PacketDecoder} from './row-stream.js'
import {rowConverter} from './row-converter.js'
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
    return this.stream(table, sql, each, params)
  }

  /** As `each`, each row made by `decoder` from the bytes of its packet. */
  eachDecoded<T>(table: string, sql: string, decoder: PacketDecoder<T>, each: (row: T) => void, params: unknown[] = []): Promise<number> {
    return this.stream(table, sql, each, params, decoder)
  }

  private async stream<T>(table: string, sql: string, each: (row: T) => void, params: unknown[], decoder?: PacketDecoder<T>): Promise<number> {
    // The Galera node too (connectionContext), when the server is one.
    const ctx: DbErrorContext = {...connectionContext(this.conn, table), label: this.label, url: this.url}
    let n = 0
    const progress = this.progress
    const database = this.label
    const onRow = (row: T): void => {
      each(row)
      n++
      if (n % PROGRESS_EVERY === 0) progress({database, table, rows: n, done: false})
    }
    await (decoder ? eachDecodedRow<T>(this.conn, sql, params, decoder, onRow, ctx) : eachRow<T>(this.conn, sql, params, onRow, ctx))
    this.progress({database: this.label, table, rows: n, done: true})
    return n
  }

  /** A small query that is not a table of the snapshot (no progress). */
  async query(table: string, sql: string, params: unknown[] = []): Promise<Row[]> {
    const out: Row[] = []
    await eachRow<Row>(this.conn, sql, params, (row) => out.push(row), {...connectionContext(this.conn, table), label: this.label, url: this.url})
    return out
  }
}

export async function openReader(label: string, url: DbUrl, progress: ProgressSink, open: Omit<OpenOptions, 'label'> = {}): Promise<Reader> {
  const conn = await openConnection(url, {...open, label})
  try {
    await beginConsistentRead(conn, {...connectionContext(conn), label, url})
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
  /** Row columns not selected: the rows hold null for them (an audit view, capture.ts). */
  leaveOut?: readonly string[]
}

const id = (name: string): string => `\`${name}\``

function newerPresent(spec: TableSpec, present: ReadonlySet<string> | undefined): string[] {
  return Object.keys(spec.newer ?? {}).filter((c) => present?.has(`${spec.name}.${c}`) ?? false)
}

function primaryKey(spec: TableSpec): string[] {
  const pk = spec.keys.find((k) => k.startsWith('PRIMARY KEY'))
  return pk ? [...pk.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string) : []
}

/** The column names a read selects, in order: the row's (but those left out), the newer ones present, then `also`. */
function selectedNames<T extends TableSpec>(spec: T, opts: ReadOptions<T>): string[] {
  const leaveOut = opts.leaveOut ?? []
  return [...spec.row.filter((n) => !leaveOut.includes(n)), ...newerPresent(spec, opts.present), ...(opts.also ?? [])]
}

/** The SELECT for a spec's rows (and `also` columns), in primary-key order. */
export function selectSql<T extends TableSpec>(spec: T, opts: ReadOptions<T> = {}): string {
  const names = selectedNames(spec, opts)
  const ddl = (n: string): string => spec.columns[n] ?? spec.newer?.[n] ?? ''
  const list = names.map((n) => (sqlKind(ddl(n)) === 'float' ? `${id(n)} + 0e0 AS ${id(n)}` : id(n)))
  return `SELECT ${list.join(', ')} FROM ${id(spec.name)}${opts.where ? ` WHERE ${opts.where}` : ''} ORDER BY ${primaryKey(spec).map(id).join(', ')}`
}

/** A row converter for one read of `spec`'s rows, the `also` columns' values written to `also`. */
function packetDecoder<T extends TableSpec>(spec: T, opts: ReadOptions<T>, also: unknown[]): PacketDecoder<RowOf<T>> {
  const convert = rowConverter(spec, newerPresent(spec, opts.present), opts.also ?? [], opts.leaveOut ?? [])
  const cell = opts.cellUuid
  return {names: selectedNames(spec, opts), decode: (columns) => convert(columns, cell, also) as RowOf<T>}
}

/**
 * Streams a table's rows, decoded, to `each`, with the values of the `also` columns in `raw` from
 * position `at` on, in `also`'s order (no object per row for them; overwritten by the next row).
 */
export function readEach<T extends TableSpec>(
  r: Reader,
  spec: T,
  opts: ReadOptions<T>,
  each: (row: RowOf<T>, raw: readonly unknown[], at: number) => void,
): Promise<number> {
  const also: unknown[] = []
  return r.eachDecoded(spec.name, selectSql(spec, opts), packetDecoder(spec, opts, also), (row) => each(row, also, 0), opts.params)
}

/**
 * Rows gathered in arrays of this many (64 KB of pointers), joined once at the end: an array grown
 * row by row to 900k rows leaves its outgrown copies (about twice its final size) as garbage in the
 * large-object space until the next full collection, and ends up to half empty itself.
 */
const CHUNK = 8192

/** A table's rows, decoded, in primary-key order. */
export async function readRows<T extends TableSpec>(r: Reader, spec: T, opts: ReadOptions<T> = {}): Promise<Array<RowOf<T>>> {
  const chunks: Array<Array<RowOf<T>>> = []
  let chunk: Array<RowOf<T>> = []
  await r.eachDecoded(
    spec.name,
    selectSql(spec, opts),
    packetDecoder(spec, opts, []),
    (row) => {
      if (chunk.push(row) === CHUNK) {
        chunks.push(chunk)
        chunk = []
      }
    },
    opts.params,
  )
  if (chunks.length === 0) return chunk
  chunks.push(chunk)
  return joinChunks(chunks)
}

/** One array of exactly the chunks' rows (concat sizes it once). */
export function joinChunks<R>(chunks: ReadonlyArray<readonly R[]>): R[] {
  return ([] as R[]).concat(...chunks)
}
