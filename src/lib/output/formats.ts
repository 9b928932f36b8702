/**
 * Output formats, as the `openstack` client (cliff) offers them: `table` (the human report), `json`,
 * `yaml`, `csv` and `value`, with `-c/--column` to pick columns of a command's listing. A command can
 * add a format of its own (e.g. `openmetrics` for `audit all`) without touching the others: see
 * `ExtraFormat` and `formatFlags` in src/lib/cli/format-flags.ts.
 *
 * Every command returns one result document (what `--json` prints). Its *listing* is the rows a
 * csv or value output shows, and what `-c` picks from: each command declares it once (`ListingSpec`:
 * which array of the document, which columns), as cliff's commands declare their columns. The columns
 * never depend on the data: a clean cloud prints the same header as a broken one, with no rows, so a
 * script's `-c code` works whatever the cloud holds.
 */

import {ConfigError} from '../errors.js'
import {yamlLib} from '../util/lazy-yaml.js'
import {jsonSafe} from './terminal.js'

export const BASE_FORMATS = ['table', 'json', 'yaml', 'csv', 'value'] as const
export type BaseFormat = (typeof BASE_FORMATS)[number]

export interface Listing {
  columns: string[]
  rows: Array<Record<string, unknown>>
}

/** What a command-specific format receives: the command's result document and its parsed flags. */
export interface FormatContext {
  commandId: string
  flags: Record<string, unknown>
}

/** A format only some commands offer (registered per command, listed in its `-f` options). */
export interface ExtraFormat<R = unknown> {
  name: string
  /** One line for --help. */
  summary: string
  render(result: R, ctx: FormatContext): string
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const norm = (s: string) => s.toLowerCase().replace(/[\s-]+/g, '_')

/** A column of a listing: its key (the csv header, `-c` name), the table's label, and how to read it. */
export interface Column {
  key: string
  /** The human table's header for it, which `-c` accepts too (case-insensitively). */
  label?: string
  /** Default: the row's field `key`, or `a.b` one level down (`subject.host`). */
  value?: (row: Record<string, unknown>) => unknown
}

export interface ListingSpec {
  /** The array of the JSON document whose items are the rows (`plan.steps`: one level down); absent: the document is the one row. */
  rows?: string
  /** Which of those items are rows (a plan's writes, not its lock/check steps, as its table shows). */
  keep?: (row: Record<string, unknown>) => boolean
  /** The columns csv and value print without -c: the human table's, in its order. */
  columns: Column[]
  /** Further columns only -c shows. */
  more?: Column[]
  /** Fields whose own fields -c may name as well (`evidence.allocations`): open-ended, as JSON. */
  open?: string[]
}

function valueAt(row: Record<string, unknown>, key: string): unknown {
  if (key in row) return row[key]
  const dot = key.indexOf('.')
  if (dot < 0) return undefined
  const parent = row[key.slice(0, dot)]
  return isPlainObject(parent) ? parent[key.slice(dot + 1)] : undefined
}

/** The declared columns -c may name (the defaults first), for the usage error's hint. */
export function columnNames(spec: ListingSpec): string[] {
  return [...spec.columns, ...(spec.more ?? [])].map((c) => c.key)
}

function findColumn(spec: ListingSpec, name: string): Column | undefined {
  const all = [...spec.columns, ...(spec.more ?? [])]
  const exact = all.find((c) => c.key === name)
  if (exact) return exact
  const n = norm(name)
  const byKey = all.find((c) => norm(c.key) === n) ?? all.find((c) => c.label !== undefined && norm(c.label) === n)
  if (byKey) return byKey
  const open = (spec.open ?? []).find((o) => n.startsWith(`${norm(o)}.`) && name.length > o.length + 1)
  return open === undefined ? undefined : {key: `${open}${name.slice(open.length)}`}
}

/**
 * A command's listing of its result document: the declared rows, and the declared columns (or those
 * -c names, by key or by the table's label). An unknown name is a usage error listing the valid ones,
 * whether or not the document holds any row.
 */
export function declaredListing(doc: unknown, spec: ListingSpec, wanted: string[] | undefined): Listing {
  const names = (wanted ?? [])
    .flatMap((w) => w.split(','))
    .map((w) => w.trim())
    .filter((w) => w !== '')
  const columns =
    names.length === 0
      ? spec.columns
      : names.map((w) => {
          const hit = findColumn(spec, w)
          if (hit === undefined) throw new ConfigError(`no column "${w}" in this output`, `Columns: ${columnNames(spec).join(', ')}`, 'UsageError')
          return hit
        })
  let rows: Array<Record<string, unknown>> = []
  if (spec.rows === undefined) rows = isPlainObject(doc) ? [doc] : []
  else if (isPlainObject(doc)) {
    const items = valueAt(doc, spec.rows)
    if (Array.isArray(items)) rows = items.filter(isPlainObject)
  }
  if (spec.keep) rows = rows.filter(spec.keep)
  return {
    columns: columns.map((c) => c.key),
    rows: rows.map((r) => Object.fromEntries(columns.map((c) => [c.key, c.value ? c.value(r) : valueAt(r, c.key)]))),
  }
}

/** A cell as text: null/undefined empty, objects and arrays as compact JSON. */
export function cellString(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

function csvField(v: unknown): string {
  // Numbers and booleans bare, text quoted (as cliff's csv formatter: QUOTE_NONNUMERIC).
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return `"${cellString(v).replace(/"/g, '""')}"`
}

export function renderCsv(listing: Listing): string {
  const lines = [listing.columns.map((c) => csvField(c)).join(',')]
  for (const r of listing.rows) lines.push(listing.columns.map((c) => csvField(r[c])).join(','))
  return lines.join('\n')
}

/** One line per row, values separated by a space, no header: for `read`, `xargs`, `while read`. */
export function renderValue(listing: Listing): string {
  // A newline inside a value would split a row in two for `while read`: show it as \n.
  return listing.rows.map((r) => listing.columns.map((c) => cellString(r[c]).replace(/\r?\n/g, '\\n')).join(' ')).join('\n')
}

export function renderJson(doc: unknown, opts: {noindent?: boolean} = {}): string {
  return jsonSafe(JSON.stringify(doc, null, opts.noindent ? undefined : 2))
}

const UNSAFE = /[\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069]/

export function renderYaml(doc: unknown): string {
  const {Document, isScalar, visit} = yamlLib()
  const d = new Document(JSON.parse(JSON.stringify(doc ?? null)))
  // The yaml library escapes C0 but leaves DEL, C1 and bidi controls raw: such strings are written
  // double-quoted, where jsonSafe's \uXXXX is a YAML escape of the same character.
  visit(d, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === 'string' && UNSAFE.test(node.value)) node.type = 'QUOTE_DOUBLE'
    },
  })
  return jsonSafe(d.toString({lineWidth: 0})).replace(/\n$/, '')
}
