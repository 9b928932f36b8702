/**
 * Structural validation of a snapshot read from a file: every table present, every row with the
 * columns and types the model promises. Hand-written (not a JSON-schema library) because it runs over
 * a million rows and must say which table, row and column is wrong in one line.
 */
import {SNAPSHOT_FORMAT_VERSION, type Snapshot} from '../domain/snapshot.js'
import {type Kind, type RowColumn, rowColumns, type TableSpec} from '../domain/tables/define.js'
import {NOVA_API_SNAPSHOT_TABLES, NOVA_CELL_SNAPSHOT_TABLES, PLACEMENT_SNAPSHOT_TABLES} from '../domain/tables/index.js'

type Col = RowColumn

/** 'name:s? error:s?!' — i integer, n number, s string, b boolean, o object, a array; ? nullable; ! optional key */
function cols(spec: string): Col[] {
  return spec
    .trim()
    .split(/\s+/)
    .map((tok) => {
      const [name, t] = tok.split(':') as [string, string]
      return {name, kind: t[0] as Kind, nullable: t.includes('?'), optional: t.includes('!')}
    })
}

const section = (specs: TableSpec[]): Record<string, Col[]> => Object.fromEntries(specs.map((t) => [t.name, rowColumns(t)]))

/** Row columns per section and table: the table specs' rows, and the cells list (not a table). */
export const TABLE_COLUMNS: Record<string, Record<string, Col[]>> = {
  root: {
    cells: cols(`id:i uuid:s name:s? database_connection:s? transport_url:s? disabled:b is_cell0:b status:s error:s?! identity:o!`),
  },
  nova_api: section(NOVA_API_SNAPSHOT_TABLES),
  nova: section(NOVA_CELL_SNAPSHOT_TABLES),
  placement: section(PLACEMENT_SNAPSHOT_TABLES),
}

const OPTIONAL_TABLES = new Set(['request_specs'])

function typeOk(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'i':
      return typeof v === 'number' && Number.isInteger(v)
    case 'n':
      return typeof v === 'number' && Number.isFinite(v)
    case 's':
      return typeof v === 'string'
    case 'b':
      return typeof v === 'boolean'
    case 'o':
      return typeof v === 'object' && v !== null && !Array.isArray(v)
    case 'a':
      return Array.isArray(v)
  }
}

const KIND_NAME: Record<Kind, string> = {i: 'an integer', n: 'a number', s: 'a string', b: 'a boolean', o: 'an object', a: 'a list'}

/** Checks one row; returns a problem description or null. Exported for the streaming reader. */
export function checkRow(row: unknown, columns: Col[]): string | null {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return 'is not an object'
  const r = row as Record<string, unknown>
  for (const c of columns) {
    if (!(c.name in r)) {
      if (c.optional) continue
      return `has no column "${c.name}"`
    }
    const v = r[c.name]
    if (v === null) {
      if (c.nullable) continue
      return `column "${c.name}" is null`
    }
    if (!typeOk(v, c.kind)) return `column "${c.name}" is not ${KIND_NAME[c.kind]} (${JSON.stringify(v)?.slice(0, 40)})`
  }
  return null
}

const KIND_TEST: Record<Kind, (v: string) => string> = {
  i: (v) => `typeof ${v} === 'number' && Number.isInteger(${v})`,
  n: (v) => `typeof ${v} === 'number' && Number.isFinite(${v})`,
  s: (v) => `typeof ${v} === 'string'`,
  b: (v) => `typeof ${v} === 'boolean'`,
  o: (v) => `typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v})`,
  a: (v) => `Array.isArray(${v})`,
}

/**
 * A table's row check compiled to straight-line code over its (constant, schema-defined) column
 * names: the generic loop's `row[name]` with a different name each time is a slow keyed lookup,
 * and 1.9M rows of up to 33 columns made validation a tenth of a big file's load time. The
 * compiled check only says "ok"; on a failing row the generic checkRow words the problem.
 */
function compileCheck(columns: Col[]): (row: unknown) => boolean {
  const lines = ['if (typeof r !== "object" || r === null || Array.isArray(r)) return false', 'let v']
  for (const c of columns) {
    if (!/^[a-z_][a-z0-9_]*$/.test(c.name)) throw new Error(`column name ${c.name} cannot be compiled`)
    lines.push(`v = r.${c.name}`)
    const test = `${c.nullable ? 'v === null || ' : ''}(${KIND_TEST[c.kind]('v')})`
    // `in`: a key present with the value undefined is as wrong as in checkRow (only code makes one).
    if (c.optional) lines.push(`if (v === undefined ? '${c.name}' in r : !(${test})) return false`)
    else lines.push(`if (v === undefined || !(${test})) return false`)
  }
  lines.push('return true')
  // Generated from the constant column specs above, never from input.
  return new Function('r', lines.join('\n')) as (row: unknown) => boolean
}

const compiled = new Map<Col[], (row: unknown) => boolean>()
function fastCheck(columns: Col[]): (row: unknown) => boolean {
  let f = compiled.get(columns)
  if (f === undefined) {
    f = compileCheck(columns)
    compiled.set(columns, f)
  }
  return f
}

export interface ValidationProblem {
  where: string
  problem: string
}

/** Validate a parsed document; returns at most `max` problems (empty when valid). */
export function validateSnapshotShape(doc: unknown, max = 20): ValidationProblem[] {
  const problems: ValidationProblem[] = []
  const add = (where: string, problem: string): boolean => {
    problems.push({where, problem})
    return problems.length >= max
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    add('document', 'is not a JSON/YAML object')
    return problems
  }
  const d = doc as Record<string, unknown>
  if (d.format_version === undefined) {
    add('format_version', 'is missing: this is not a cloudctl snapshot')
    return problems
  }
  if (d.format_version !== SNAPSHOT_FORMAT_VERSION) {
    add('format_version', `is ${JSON.stringify(d.format_version)}; this cloudctl reads version ${SNAPSHOT_FORMAT_VERSION}`)
    return problems
  }
  if (typeof d.captured_at !== 'string') add('captured_at', 'is missing or not a string')
  if (typeof d.source !== 'object' || d.source === null) add('source', 'is missing')
  if (d.release !== undefined) {
    const r = d.release as Record<string, unknown> | null
    if (typeof r !== 'object' || r === null || Array.isArray(r)) add('release', 'is not an object')
    else if (typeof r.name !== 'string') add('release.name', 'is missing or not a string')
    else if (typeof r.cells !== 'object' || r.cells === null) add('release.cells', 'is missing or not an object')
  }
  const tableSets: Array<[string, Record<string, unknown> | undefined, Record<string, Col[]>]> = [
    ['', d, {cells: TABLE_COLUMNS.root.cells}],
    ['nova_api.', d.nova_api as Record<string, unknown> | undefined, TABLE_COLUMNS.nova_api],
    ['nova.', d.nova as Record<string, unknown> | undefined, TABLE_COLUMNS.nova],
    ['placement.', d.placement as Record<string, unknown> | undefined, TABLE_COLUMNS.placement],
  ]
  for (const [prefix, section, tables] of tableSets) {
    if (typeof section !== 'object' || section === null) {
      if (add(prefix.slice(0, -1), 'section is missing')) return problems
      continue
    }
    for (const [table, columns] of Object.entries(tables)) {
      const rows = section[table]
      if (rows === undefined && OPTIONAL_TABLES.has(table)) continue
      if (!Array.isArray(rows)) {
        if (add(`${prefix}${table}`, 'is missing or not a list')) return problems
        continue
      }
      const ok = fastCheck(columns)
      for (let i = 0; i < rows.length; i++) {
        if (ok(rows[i])) continue
        const p = checkRow(rows[i], columns)
        if (p && add(`${prefix}${table}[${i}]`, p)) return problems
      }
    }
  }
  if (problems.length === 0) {
    const snap = doc as Snapshot
    const cellUuids = new Set(snap.cells.map((c) => c.uuid))
    for (const table of ['services', 'compute_nodes', 'instances', 'migrations'] as const) {
      const rows = snap.nova[table] as Array<{cell_uuid: string}>
      for (let i = 0; i < rows.length; i++) {
        if (!cellUuids.has(rows[i].cell_uuid)) {
          if (add(`nova.${table}[${i}]`, `cell_uuid ${rows[i].cell_uuid} is not one of the snapshot's cells`)) return problems
          break
        }
      }
    }
    for (const c of snap.cells) {
      if (c.status !== 'available' && c.status !== 'unavailable') add(`cells(${c.uuid})`, `status "${c.status}" is neither available nor unavailable`)
    }
  }
  return problems
}
