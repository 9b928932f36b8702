/**
 * The effect of a repair plan on a snapshot: the rows as the databases will hold them once the
 * executor has committed every step (src/lib/db/repair/executor.ts). One definition of what a plan
 * does, so that `simulate --apply-repairs` shows exactly what the repair commands would write, and the
 * executor tests can state the database they expect after `--apply`.
 *
 * Pure: the input snapshot is not touched (tables a plan writes are copied, rows replaced, never
 * edited). Steps on tables the snapshot does not hold (the nova_api request_specs, an instance's
 * faults) change nothing here. A step whose row or guard does not match the snapshot throws: the
 * executor would abort on it, and a plan made from this snapshot never does.
 */
import type {Snapshot} from '../domain/snapshot.js'
import {type RowColumn, type TableSpec, rowColumns} from '../domain/tables/define.js'
import {NOVA_API_SNAPSHOT_TABLES, NOVA_CELL_SNAPSHOT_TABLES, PLACEMENT_SNAPSHOT_TABLES} from '../domain/tables/index.js'
import {type RepairPlan, type Row, type Scalar, type Step, type Value, type WriteRow, describeKey, isColumnRef, isNow, sameValue} from './plan.js'

export interface ApplyPlanOptions {
  /** The time NOW stands for ('YYYY-MM-DD HH:MM:SS', UTC); default the plan's created_at. */
  now?: string
}

type AnyRow = Record<string, unknown>

/** 'YYYY-MM-DD HH:MM:SS' as MySQL prints a DATETIME, from an ISO 8601 instant. */
export function mysqlTimestamp(iso: string): string {
  return iso.slice(0, 19).replace('T', ' ')
}

export function applyPlan(snapshot: Snapshot, plan: RepairPlan, opts: ApplyPlanOptions = {}): Snapshot {
  const out: Snapshot = {...snapshot, nova_api: {...snapshot.nova_api}, nova: {...snapshot.nova}, placement: {...snapshot.placement}}
  const tables = new Tables(out, opts.now ?? mysqlTimestamp(plan.created_at))
  for (const step of plan.steps) tables.apply(step)
  return out
}

const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v))

const SPECS = new Map<string, TableSpec>([...NOVA_API_SNAPSHOT_TABLES, ...NOVA_CELL_SNAPSHOT_TABLES, ...PLACEMENT_SNAPSHOT_TABLES].map((t) => [t.name, t]))

/** A column's value in the type a snapshot row holds it in (the capture's conversion, by the column's kind). */
function asKind(v: unknown, c: RowColumn): unknown {
  if (v === null || v === undefined) return null
  if (c.kind === 'i' || c.kind === 'n') return Number(v)
  if (c.kind === 'b') return Boolean(Number(v))
  return String(v)
}

/** A written row as the snapshot holds it: the table spec's row columns, typed as the capture types them. */
function rowOf(spec: TableSpec, values: Row, id: number): AnyRow {
  if (spec.extras) throw new Error(`applyPlan: writing whole ${spec.name} rows is not modelled (the snapshot folds other tables into them)`)
  const row: AnyRow = {}
  for (const c of rowColumns(spec)) {
    if (c.name === 'cell_uuid' || (c.optional && !(c.name in values))) continue
    row[c.name] = c.name === 'id' ? id : asKind(values[c.name], c)
  }
  return row
}

const NOVA_API_HELD = new Set(NOVA_API_SNAPSHOT_TABLES.map((t) => t.name))
const PLACEMENT_HELD = new Set(PLACEMENT_SNAPSHOT_TABLES.map((t) => t.name))
const CELL_HELD = new Set(NOVA_CELL_SNAPSHOT_TABLES.map((t) => t.name))

interface TableRef {
  rows: AnyRow[]
  /** The cell the database is, for the cell tables (their rows of every cell share one array). */
  cell: string | null
  key: string
}

class Tables {
  private readonly copied = new Set<string>()
  private readonly lastId = new Map<string, number>()

  constructor(
    private readonly s: Snapshot,
    private readonly now: string,
  ) {}

  apply(step: Step): void {
    if (step.op === 'check') return
    if (step.table === 'instance_extra') return this.instanceExtra(step)
    const t = this.table(step.db, step.table)
    if (!t) return
    switch (step.op) {
      case 'delete': {
        const i = this.find(t, step.key, step)
        this.guard(t.rows[i], step.expect, step)
        t.rows.splice(i, 1)
        return
      }
      case 'update': {
        const i = this.find(t, step.key, step)
        this.guard(t.rows[i], step.expect, step)
        t.rows[i] = this.written(t.rows[i], step.set)
        return
      }
      case 'insert':
        return this.insert(t, this.resolve(step.values, {}), step)
      case 'restore':
        return this.restore(t, step)
      case 'update-all':
      case 'delete-all':
        return this.applyAll(t, step)
    }
  }

  /** Steps over every row matching a condition (update-all / delete-all), where the snapshot holds the table. */
  private applyAll(t: TableRef, step: Extract<Step, {op: 'update-all' | 'delete-all'}>): void {
    for (let i = t.rows.length - 1; i >= 0; i--) {
      if (!this.matches(t, t.rows[i], step.where)) continue
      if (step.op === 'delete-all') t.rows.splice(i, 1)
      else t.rows[i] = this.written(t.rows[i], step.set)
    }
  }

  private table(db: string, table: string): TableRef | undefined {
    let group: 'placement' | 'nova_api' | 'nova'
    let cell: string | null = null
    if (db === 'placement' && PLACEMENT_HELD.has(table)) group = 'placement'
    else if (db === 'nova_api' && NOVA_API_HELD.has(table)) group = 'nova_api'
    else if (db.startsWith('cell:') && CELL_HELD.has(table)) {
      group = 'nova'
      cell = db.slice('cell:'.length)
    } else return undefined
    const holder = this.s[group] as unknown as Record<string, AnyRow[]>
    const key = `${group}.${table}`
    if (!this.copied.has(key)) {
      holder[table] = [...(holder[table] ?? [])]
      this.copied.add(key)
    }
    return {rows: holder[table], cell, key: `${db}/${table}`}
  }

  private matches(t: TableRef, row: AnyRow, where: Row): boolean {
    if (t.cell !== null && row.cell_uuid !== t.cell) return false
    return Object.entries(where).every(([c, v]) => {
      if (!(c in row)) throw new Error(`applyPlan: ${t.key} rows have no column ${c}`)
      return sameValue(row[c] ?? null, v)
    })
  }

  private find(t: TableRef, key: Row, step: Step): number {
    const hits = t.rows.flatMap((r, i) => (this.matches(t, r, key) ? [i] : []))
    if (hits.length !== 1) throw new Error(`applyPlan: ${step.op} ${describeKey(step.table, key)} in ${step.db} matches ${hits.length} row(s) of the snapshot`)
    return hits[0]
  }

  /** The observed values a write is guarded by, where the snapshot holds the column. */
  private guard(row: AnyRow, expect: Row, step: Step): void {
    for (const [c, v] of Object.entries(expect))
      if (c in row && !sameValue(row[c] ?? null, v))
        throw new Error(
          `applyPlan: ${step.op} on ${step.table} in ${step.db} expects ${c} = ${JSON.stringify(v)}, the snapshot holds ${JSON.stringify(row[c])}`,
        )
  }

  private resolve(values: WriteRow, row: AnyRow): Row {
    const out: Row = {}
    for (const [c, v] of Object.entries(values)) out[c] = this.value(v, row)
    return out
  }

  private value(v: Value, row: AnyRow): Scalar {
    if (isNow(v)) return this.now
    if (isColumnRef(v)) return (row[v.$col] ?? null) as Scalar
    return v
  }

  /** The row with `set` written, on the columns the snapshot holds, in the types it holds them in. */
  private written(row: AnyRow, set: WriteRow): AnyRow {
    const next: AnyRow = {...row}
    for (const [c, v] of Object.entries(set)) {
      if (!(c in row)) continue
      const x = this.value(v, row)
      next[c] = typeof row[c] === 'boolean' && x !== null ? Boolean(Number(x)) : x
    }
    return next
  }

  private insert(t: TableRef, values: Row, step: Step): void {
    const spec = SPECS.get(step.table)
    if (!spec) throw new Error(`applyPlan: inserting into ${step.table} is not modelled`)
    const explicit = values.id === undefined || values.id === null ? undefined : Number(values.id)
    const id = explicit ?? this.nextId(t)
    if (explicit !== undefined) this.lastId.set(t.key, Math.max(this.lastId.get(t.key) ?? 0, explicit))
    const row = rowOf(spec, values, id)
    t.rows.push(t.cell === null ? row : {cell_uuid: t.cell, ...row})
  }

  /** AUTO_INCREMENT: past the highest id the table held or was given, even when that row is gone since. */
  private nextId(t: TableRef): number {
    const seen = this.lastId.get(t.key) ?? t.rows.reduce((m, r) => (t.cell === null || r.cell_uuid === t.cell ? Math.max(m, Number(r.id ?? 0)) : m), 0)
    this.lastId.set(t.key, seen + 1)
    return seen + 1
  }

  /** Undo: the row back at its before-image (absent when null); a row already there is left alone. */
  private restore(t: TableRef, step: Extract<Step, {op: 'restore'}>): void {
    const i = t.rows.findIndex((r) => this.matches(t, r, step.key))
    if (step.before === null) {
      if (i >= 0) t.rows.splice(i, 1)
      return
    }
    if (i >= 0) t.rows[i] = this.written(t.rows[i], step.before)
    else this.insert(t, step.before, step)
  }

  /**
   * The snapshot keeps an instance's live instance_extra row on the instance (Instance.extra):
   * soft-deleting that row leaves the instance of that cell without one.
   */
  private instanceExtra(step: Step): void {
    if (step.op === 'restore') return this.restoreExtra(step)
    const where = step.op === 'update' ? step.key : step.op === 'update-all' ? step.where : undefined
    const set = step.op === 'update' || step.op === 'update-all' ? step.set : undefined
    if (!where || !set || !('deleted' in set) || typeof where.instance_uuid !== 'string')
      throw new Error(`applyPlan: step ${step.op} on instance_extra is not modelled`)
    const cell = step.db.slice('cell:'.length)
    const t = this.table(step.db, 'instances') as TableRef
    t.rows.forEach((r, i) => {
      if (r.cell_uuid === cell && r.uuid === where.instance_uuid && r.extra !== null) t.rows[i] = {...r, extra: null}
    })
  }

  /** Undo of an instance_extra soft delete: the instance of that cell holds the row again. */
  private restoreExtra(step: Extract<Step, {op: 'restore'}>): void {
    const row = step.before ?? step.after
    if (!row || typeof row.instance_uuid !== 'string') throw new Error('applyPlan: restore of instance_extra without instance_uuid')
    const live = step.before !== null && Number(step.before.deleted) === 0
    const extra = live ? {numa_topology: strOrNull(row.numa_topology), pci_requests: strOrNull(row.pci_requests), flavor: strOrNull(row.flavor)} : null
    const cell = step.db.slice('cell:'.length)
    const t = this.table(step.db, 'instances') as TableRef
    t.rows.forEach((r, i) => {
      if (r.cell_uuid === cell && r.uuid === row.instance_uuid) t.rows[i] = {...r, extra}
    })
  }
}
