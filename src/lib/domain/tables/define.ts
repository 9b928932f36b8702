/**
 * One spec per table: the real Zed DDL of its columns (in the database's order) and keys, and which
 * of them a snapshot row holds (in the row's order). The snapshot row type, the file validator, the
 * capture's SELECT and converter and the test databases' DDL are all derived from it.
 *
 * A column's snapshot type follows from its DDL: int → number, float → number (the widened single,
 * see placement-capacity.ts), tinyint(1) → boolean, enum → its values, text and datetime → string;
 * `NOT NULL` or else `| null`. One nova convention overrides the DDL: `deleted` (SoftDeleteMixin,
 * `int DEFAULT NULL`) is never NULL in a row nova writes, and a snapshot reads NULL as 0.
 */

/** Value kinds the file validator checks: integer, number, string, boolean, object, list. */
export type Kind = 'i' | 'n' | 's' | 'b' | 'o' | 'a'

/** A snapshot key that is not a column of the table (a folded child table, the owning cell). */
export interface Extra<T> {
  /** Kind, then '?' when it may be null. */
  readonly kind: `${Kind}${'' | '?'}`
  /** Type carrier only: never set. */
  readonly type?: T
}

export function extra<T>(kind: Extra<T>['kind']): Extra<T> {
  return {kind}
}

/** The timestamp columns nova's and placement's models start with (TimestampMixin). */
export const TIMESTAMPS = {created_at: 'datetime DEFAULT NULL', updated_at: 'datetime DEFAULT NULL'} as const
/** nova's SoftDeleteMixin tables add deleted_at after them (and `deleted` further down). */
export const SOFT_DELETE_TIMESTAMPS = {...TIMESTAMPS, deleted_at: 'datetime DEFAULT NULL'} as const

export interface TableSpec {
  readonly name: string
  /** Every column of the real schema, in its order, with its DDL. */
  readonly columns: Readonly<Record<string, string>>
  /** PRIMARY KEY, UNIQUE KEY, KEY and CONSTRAINT lines, as SHOW CREATE TABLE lists them. */
  readonly keys: readonly string[]
  /** The columns a snapshot row holds, in the row's key order. */
  readonly row: readonly string[]
  /** Keys after the columns that are not columns of this table. */
  readonly extras?: Readonly<Record<string, Extra<unknown>>>
  /** Columns a newer nova added: read when the database has them, absent from the row otherwise. */
  readonly newer?: Readonly<Record<string, string>>
  /** Rows of a cell database start with the cell's uuid. */
  readonly cell?: boolean
  /**
   * Text columns whose values repeat across rows (the host of each of its instances, one flavor's
   * blob on every instance of it): a read keeps one string per distinct value. At 300k instances
   * the copies were a third of the heap, and collecting them most of the garbage collector's time.
   */
  readonly repeats?: readonly string[]
  /**
   * Text columns whose equal values come in runs in primary-key order (the rows one transaction
   * wrote together): a row whose value equals the previous row's shares its string.
   */
  readonly runs?: readonly string[]
}

export function defineTable<const T extends TableSpec & {row: readonly (keyof T['columns'] & string)[]}>(spec: T): T {
  return spec
}

// ---------------------------------------------------------------- types from DDL

type EnumValues<S extends string> = S extends `'${infer V}',${infer R}` ? V | EnumValues<R> : S extends `'${infer V}'` ? V : never

type BaseOf<S extends string> = S extends `tinyint(1)${string}`
  ? boolean
  : S extends `int${string}` | `bigint${string}` | `float${string}`
    ? number
    : S extends `enum(${infer L}) ${string}`
      ? EnumValues<L>
      : string

export type ColumnValue<S extends string, Name extends string = string> = Name extends 'deleted'
  ? number
  : S extends `${string}NOT NULL${string}`
    ? BaseOf<S>
    : BaseOf<S> | null

type Simplify<T> = {[K in keyof T]: T[K]} & {}

/** The snapshot row a spec describes. */
export type RowOf<T extends TableSpec> = Simplify<
  (T['cell'] extends true ? {cell_uuid: string} : unknown) & {
    -readonly [K in T['row'][number]]: ColumnValue<T['columns'][K] & string, K>
  } & (T['extras'] extends Readonly<Record<string, Extra<unknown>>>
      ? {-readonly [K in keyof T['extras']]: T['extras'][K] extends Extra<infer V> ? V : never}
      : unknown) &
    (T['newer'] extends Readonly<Record<string, string>> ? {-readonly [K in keyof T['newer'] & string]?: ColumnValue<T['newer'][K], K>} : unknown)
>

// ---------------------------------------------------------------- runtime views of the DDL

export type SqlKind = 'int' | 'float' | 'bool' | 'enum' | 'text'

export function sqlKind(ddl: string): SqlKind {
  if (ddl.startsWith('tinyint(1)')) return 'bool'
  if (/^(int|bigint)\b/.test(ddl)) return 'int'
  if (ddl.startsWith('float')) return 'float'
  if (ddl.startsWith('enum(')) return 'enum'
  return 'text'
}

export function enumValues(ddl: string): string[] {
  const m = /^enum\((.*?)\)/.exec(ddl)
  return m ? [...(m[1] as string).matchAll(/'([^']*)'/g)].map((x) => x[1] as string) : []
}

/** Whether a row's value may be null (the DDL's nullability, `deleted` excepted). */
export function nullable(name: string, ddl: string): boolean {
  return name !== 'deleted' && !ddl.includes('NOT NULL')
}

const KIND_OF: Record<SqlKind, Kind> = {int: 'i', float: 'n', bool: 'b', enum: 's', text: 's'}

export interface RowColumn {
  name: string
  kind: Kind
  nullable: boolean
  /** The key may be absent (a newer column). */
  optional: boolean
}

/** The keys of a snapshot row, in order, with what the file validator checks. */
export function rowColumns(spec: TableSpec): RowColumn[] {
  const out: RowColumn[] = []
  if (spec.cell) out.push({name: 'cell_uuid', kind: 's', nullable: false, optional: false})
  for (const name of spec.row) {
    const ddl = spec.columns[name] as string
    out.push({name, kind: KIND_OF[sqlKind(ddl)], nullable: nullable(name, ddl), optional: false})
  }
  for (const [name, e] of Object.entries(spec.extras ?? {})) out.push({name, kind: e.kind[0] as Kind, nullable: e.kind.endsWith('?'), optional: false})
  for (const [name, ddl] of Object.entries(spec.newer ?? {})) out.push({name, kind: KIND_OF[sqlKind(ddl)], nullable: nullable(name, ddl), optional: true})
  return out
}

/** CREATE TABLE as the real schema has it. */
export function createTableDdl(spec: TableSpec): string {
  const lines = [...Object.entries(spec.columns).map(([name, ddl]) => `\`${name}\` ${ddl}`), ...spec.keys]
  return `CREATE TABLE \`${spec.name}\` (\n  ${lines.join(',\n  ')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8`
}
