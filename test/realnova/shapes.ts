/**
 * The shape of a snapshot's rows, to hold the clouds our builders write against clouds nova wrote:
 * per table column, how many rows hold NULL and how many a value; the distinct values of short
 * string/number columns (enums); and for JSON columns the key paths of every blob (nova objects
 * unwrapped, with their name and version; `nova_object.changes` left out: it depends on what the
 * writer changed last).
 */
import type {Snapshot} from '../../src/lib/domain/snapshot.js'

export interface ColumnShape {
  nulls: number
  values: number
  /** Distinct scalar values (strings up to 40 characters, numbers), for enum-like columns. */
  distinct: Set<string>
  /** JSON columns: key paths seen in any row, and those seen in every parsed row. */
  json: number
  paths: Set<string>
  alwaysPaths: Set<string> | null
}

export type Shape = Map<string, ColumnShape>

/**
 * Keys that are data, not shape: flavor extra specs, the vCPU numbers of an instance's pinning, and
 * compute_nodes.stats counters named after a project, os_type, vm_state or task_state.
 */
function keyOf(prefix: string, k: string): string {
  if (prefix.endsWith('.extra_specs') || prefix.endsWith('.cpu_pinning_raw')) return '*'
  const counter = /^(num_proj_|num_os_type_|num_vm_|num_task_)/.exec(k)
  return counter ? `${counter[1]}*` : k
}

function jsonPaths(v: unknown, prefix: string, out: Set<string>): void {
  if (Array.isArray(v)) {
    for (const x of v) jsonPaths(x, `${prefix}[]`, out)
    return
  }
  if (v === null || typeof v !== 'object') return
  const o = v as Record<string, unknown>
  if (typeof o['nova_object.name'] === 'string') {
    const name = `${prefix}<${String(o['nova_object.name'])} ${String(o['nova_object.version'])}>`
    out.add(name)
    for (const [k, x] of Object.entries((o['nova_object.data'] ?? {}) as Record<string, unknown>)) {
      const path = `${name}.${keyOf(name, k)}`
      out.add(path)
      jsonPaths(x, path, out)
    }
    return
  }
  for (const [k, x] of Object.entries(o)) {
    if (k === 'nova_object.changes') continue
    const path = `${prefix}.${keyOf(prefix, k)}`
    out.add(path)
    jsonPaths(x, path, out)
  }
}

/** The key paths of one JSON blob (nova objects with name and version), as compareShapes sees them. */
export function blobPaths(text: string): Set<string> {
  const out = new Set<string>()
  jsonPaths(JSON.parse(text) as unknown, '', out)
  return out
}

function parseJson(v: string): unknown {
  if (!/^\s*[[{]/.test(v)) return undefined
  try {
    return JSON.parse(v) as unknown
  } catch {
    return undefined
  }
}

function note(shape: Shape, column: string, v: unknown): void {
  let c = shape.get(column)
  if (!c) shape.set(column, (c = {nulls: 0, values: 0, distinct: new Set(), json: 0, paths: new Set(), alwaysPaths: null}))
  if (v === null || v === undefined) {
    c.nulls++
    return
  }
  c.values++
  if (typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length <= 40)) c.distinct.add(String(v))
  const parsed = typeof v === 'string' ? parseJson(v) : undefined
  if (parsed !== undefined) {
    c.json++
    const mine = new Set<string>()
    jsonPaths(parsed, '', mine)
    for (const p of mine) c.paths.add(p)
    c.alwaysPaths = c.alwaysPaths === null ? mine : new Set([...c.alwaysPaths].filter((p) => mine.has(p)))
  }
}

function rows(shape: Shape, table: string, list: unknown[]): void {
  for (const row of list) {
    for (const [k, v] of Object.entries(row as Record<string, unknown>)) {
      // Nested rows of the snapshot model (instance extra), not arrays of names (aggregate hosts).
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        if (Object.values(v).every((x) => x === null || typeof x !== 'object')) rows(shape, `${table}.${k}`, [v])
        continue
      }
      note(shape, `${table}.${k}`, v)
    }
  }
}

/** The shape of all the given snapshots' rows together. */
export function shapeOf(...snapshots: Snapshot[]): Shape {
  const shape: Shape = new Map()
  for (const s of snapshots)
    for (const [group, tables] of [
      ['nova_api', s.nova_api],
      ['nova', s.nova],
      ['placement', s.placement],
    ] as const)
      for (const [t, list] of Object.entries(tables as unknown as Record<string, unknown>)) if (Array.isArray(list)) rows(shape, `${group}.${t}`, list)
  return shape
}

export interface ShapeDifference {
  column: string
  what: string
}

/**
 * How `ours` departs from what nova wrote (`nova`), for the columns both have rows for:
 * - a value where nova's rows are all NULL, or NULL where nova always writes one;
 * - JSON: a key path nova never writes, or one nova writes in every blob that ours lacks somewhere;
 * - `enums`: columns whose values must be among `allowed[column]`.
 */
export function compareShapes(nova: Shape, ours: Shape, allowed: Record<string, string[]> = {}): ShapeDifference[] {
  const out: ShapeDifference[] = []
  for (const [column, mine] of ours) {
    const real = nova.get(column)
    if (!real || real.nulls + real.values === 0 || mine.nulls + mine.values === 0) continue
    if (real.values === 0 && mine.values > 0)
      out.push({column, what: `set in ${mine.values} row(s); nova leaves it NULL (e.g. ${[...mine.distinct].slice(0, 3).join(', ')})`})
    if (real.nulls === 0 && mine.nulls > 0) out.push({column, what: `NULL in ${mine.nulls} row(s); nova always writes it`})
    if (real.json > 0 && mine.json > 0) {
      for (const p of mine.paths) if (!real.paths.has(p)) out.push({column, what: `JSON path ${p} nova does not write`})
      for (const p of real.alwaysPaths ?? [])
        if (!(mine.alwaysPaths ?? new Set()).has(p)) out.push({column, what: `JSON path ${p}: nova writes it in every blob, ours not always`})
    }
    if (real.json > 0 && mine.json === 0 && mine.values > 0) out.push({column, what: 'not JSON; nova writes JSON'})
    const enumValues = allowed[column]
    if (enumValues)
      for (const v of mine.distinct)
        if (!enumValues.includes(v)) out.push({column, what: `value ${JSON.stringify(v)} nova does not write (${enumValues.join(', ')})`})
  }
  return out.sort((a, b) => a.column.localeCompare(b.column) || a.what.localeCompare(b.what))
}
