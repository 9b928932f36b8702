/**
 * Output formats, as the `openstack` client (cliff) offers them: `table` (the human report), `json`,
 * `yaml`, `csv` and `value`, with `-c/--column` to pick columns of a command's listing. A command can
 * add a format of its own (e.g. `openmetrics` for `audit all`) without touching the others: see
 * `ExtraFormat` and `formatFlags` in src/lib/cli/format-flags.ts.
 *
 * Every command returns one result document (what `--json` prints). Its *listing* is the rows a
 * table, csv or value output shows: an array of objects in the document (`findings`, `cells`,
 * `steps`, ...), each row flattened one level (`subject.host`), or, for a document without one, a
 * single row of its top-level scalars.
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

/** A nested object becomes `parent.child` columns; deeper values stay JSON text in their cell. */
export function flattenRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(row)) {
    if (isPlainObject(v)) for (const [k2, v2] of Object.entries(v)) out[`${k}.${k2}`] = v2
    else out[k] = v
  }
  return out
}

function listingOf(rows: Array<Record<string, unknown>>): Listing {
  const flat = rows.map(flattenRow)
  const columns = new Set<string>()
  for (const r of flat) for (const k of Object.keys(r)) columns.add(k)
  return {columns: [...columns], rows: flat}
}

/**
 * The rows of a result document: the named array when the command says which (`key`), else its first
 * top-level array of objects, else one row of its top-level scalars.
 */
export function inferListing(doc: unknown, key?: string): Listing {
  if (Array.isArray(doc)) return listingOf(doc.filter(isPlainObject))
  if (!isPlainObject(doc)) return {columns: ['value'], rows: [{value: doc}]}
  if (key !== undefined && Array.isArray(doc[key])) return listingOf((doc[key] as unknown[]).filter(isPlainObject))
  for (const v of Object.values(doc)) {
    if (Array.isArray(v) && v.length > 0 && v.every(isPlainObject)) return listingOf(v as Array<Record<string, unknown>>)
  }
  const scalars: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(doc)) if (!isPlainObject(v) && !Array.isArray(v)) scalars[k] = v
  return {columns: Object.keys(scalars), rows: [scalars]}
}

const norm = (s: string) => s.toLowerCase().replace(/[\s-]+/g, '_')

/** Keep the columns asked for, in the order asked; an unknown name is a usage error listing the valid ones. */
export function selectColumns(listing: Listing, wanted: string[] | undefined): Listing {
  if (!wanted || wanted.length === 0) return listing
  const names = wanted.flatMap((w) => w.split(',')).map((w) => w.trim()).filter((w) => w !== '')
  const columns = names.map((w) => {
    const hit = listing.columns.find((c) => c === w) ?? listing.columns.find((c) => norm(c) === norm(w))
    if (hit === undefined) {
      throw new ConfigError(
        `no column "${w}" in this output`,
        listing.columns.length > 0 ? `Columns: ${listing.columns.join(', ')}` : 'This command has no rows to pick columns from.',
        'UsageError',
      )
    }
    return hit
  })
  return {columns, rows: listing.rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]])))}
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
