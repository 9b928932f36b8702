/**
 * One step of a repair plan against its open transaction, and the re-check of the rows a `check`
 * step held. Apart from executor.ts, which owns the protocol around the steps (lock, transactions,
 * undo file, commit order): these are the row-level guards, each failure an Aborted.
 */
import type {Connection} from '../connection.js'
import {timedQuery} from './bounded.js'
import {
  type DbKey,
  type Row,
  type Scalar,
  type Step,
  type CheckStep,
  describeKey,
  isNow,
  primaryKeyOf,
  rowMatches,
  sameValue,
  stepSql,
} from '../../repairs/plan.js'
import type {UndoRecordLike as UndoRecord} from '../../repairs/undo.js'

const q = (c: string) => `\`${c.replace(/`/g, '``')}\``

function whereOf(row: Row): {sql: string; params: Scalar[]} {
  const params: Scalar[] = []
  const sql = Object.entries(row)
    .map(([c, v]) => {
      if (v === null) return `${q(c)} IS NULL`
      params.push(v)
      return `${q(c)} = ?`
    })
    .join(' AND ')
  return {sql, params}
}

function keyOf(table: string, row: Record<string, unknown>): Row {
  return Object.fromEntries(primaryKeyOf(table).map((c) => [c, (row[c] ?? null) as Scalar]))
}

function cmpKeys(table: string) {
  const pk = primaryKeyOf(table)
  return (a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const c of pk) {
      const x = Number(a[c])
      const y = Number(b[c])
      if (x !== y) return x - y
    }
    return 0
  }
}

function plainRow(r: Record<string, unknown>): Row {
  const out: Row = {}
  for (const [k, v] of Object.entries(r)) out[k] = v === undefined ? null : typeof v === 'bigint' ? Number(v) : (v as Scalar)
  return out
}

function rowsEqual(a: Row | null, b: Row | null): boolean {
  if (a === null || b === null) return a === b
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  for (const k of keys) if (!sameValue(a[k] ?? null, b[k] ?? null)) return false
  return true
}

export class Aborted extends Error {}

/** A `check` step as it ran: the full rows it locked, to be compared again before the COMMIT. */
export interface HeldCheck {
  n: number
  step: CheckStep
  rows: Row[]
}

const pkText = (table: string, row: Record<string, unknown>) => JSON.stringify(primaryKeyOf(table).map((c) => String(row[c] ?? null)))

/** Equal for any two values `sameValue` calls equal (and for some it does not: candidates only). */
function valueKey(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  const n = Number(v)
  return Number.isNaN(n) ? `s${String(v)}` : `n${Math.fround(n)}`
}

/** This transaction's writes as they now stand: a row's last after-image (null = deleted), by table and primary key. */
export class OwnWrites {
  private readonly rows = new Map<string, Map<string, Row | null>>()
  private readonly indexes = new Map<string, Map<string, Row[]>>()

  constructor(records: UndoRecord[]) {
    for (const r of records) {
      const t = `${r.db}\u0000${r.table}`
      let m = this.rows.get(t)
      if (!m) this.rows.set(t, (m = new Map()))
      m.set(pkText(r.table, r.key), r.after)
    }
  }

  /** undefined: not written by this transaction. */
  final(db: DbKey, table: string, pk: string): Row | null | undefined {
    return this.rows.get(`${db}\u0000${table}`)?.get(pk)
  }

  /** Rows this transaction wrote that now match `where`. */
  matching(db: DbKey, table: string, where: Row): Row[] {
    const t = `${db}\u0000${table}`
    const rows = this.rows.get(t)
    if (!rows) return []
    const [col] = Object.keys(where)
    if (col === undefined) return [...rows.values()].filter((r): r is Row => r !== null)
    // Indexed by the first column of the where: a large plan re-checks thousands of consumers.
    let index = this.indexes.get(`${t}\u0000${col}`)
    if (!index) {
      index = new Map()
      for (const r of rows.values()) {
        if (r === null) continue
        const k = valueKey(r[col])
        const list = index.get(k)
        if (list) list.push(r)
        else index.set(k, [r])
      }
      this.indexes.set(`${t}\u0000${col}`, index)
    }
    return (index.get(valueKey(where[col])) ?? []).filter((r) => rowMatches(r, where))
  }
}

/**
 * Reads a check step again (locking) and requires exactly the rows it locked then, as this
 * transaction's own writes have changed them since: anything else was written by someone else.
 */
export async function revalidate(conn: Connection, h: HeldCheck, own: OwnWrites, dbLabel: string): Promise<void> {
  const {db, table, where} = h.step
  const expected = new Map<string, Row>()
  for (const r of h.rows) {
    const k = pkText(table, r)
    const now = own.final(db, table, k)
    if (now === undefined) expected.set(k, r)
    else if (now !== null && rowMatches(now, where)) expected.set(k, now)
  }
  for (const r of own.matching(db, table, where)) expected.set(pkText(table, r), r)
  const want = [...expected.values()].sort(cmpKeys(table))
  const found = await lockRows(conn, table, where)
  if (found.length !== want.length || !found.every((r, i) => rowsEqual(r, want[i])))
    throw new Aborted(
      `step ${h.n} (${dbLabel} ${table}): rows where ${JSON.stringify(where)} changed while the repair held its locks: expected ${want.length === 0 ? 'none' : JSON.stringify(want)}, found ${found.length === 0 ? 'none' : JSON.stringify(found)}. ${h.step.why}`,
    )
}

async function lockRows(conn: Connection, table: string, where: Row): Promise<Row[]> {
  const w = whereOf(where)
  const rows = await timedQuery(conn, `SELECT * FROM ${q(table)} WHERE ${w.sql} FOR UPDATE`, w.params, table)
  return (rows as Array<Record<string, unknown>>).map(plainRow).sort(cmpKeys(table))
}

async function write(conn: Connection, table: string, sql: string, params: Scalar[], tag: string): Promise<{affectedRows: number; insertId: number}> {
  const res = await timedQuery(conn, `/* ${tag} */ ${sql}`, params, table)
  const r = res as {affectedRows: number; insertId: number}
  return {affectedRows: r.affectedRows, insertId: r.insertId}
}

const show = (r: Row | null | undefined) => (r ? JSON.stringify(r) : 'no row')

/** Returns 1 when a restore step found its row already restored, else 0. */
export async function runStep(
  conn: Connection,
  step: Step,
  n: number,
  planId: string,
  dbLabel: string,
  records: UndoRecord[],
  held: HeldCheck[],
): Promise<number> {
  const tag = `cloudctl repair=${planId} step=${n}`
  const where = `step ${n} (${dbLabel} ${step.table})`
  const fail = (msg: string): never => {
    throw new Aborted(`${where}: ${msg}. ${step.why}`)
  }
  switch (step.op) {
    case 'check': {
      const rows = await lockRows(conn, step.table, step.where)
      if (rows.length !== step.rows.length || !step.rows.every((exp, i) => rowMatches(rows[i], exp)))
        fail(
          `expected ${step.rows.length === 0 ? 'no row' : JSON.stringify(step.rows)} where ${JSON.stringify(step.where)}, found ${rows.length === 0 ? 'none' : JSON.stringify(rows)}`,
        )
      held.push({n, step, rows})
      return 0
    }
    case 'delete':
    case 'update': {
      const rows = await lockRows(conn, step.table, step.key)
      if (rows.length !== 1) fail(`${describeKey(step.table, step.key)} is gone`)
      const before = rows[0]
      const changed = Object.entries(step.expect).filter(([c, v]) => !sameValue(before[c] ?? null, v))
      if (changed.length > 0) fail(`${describeKey(step.table, step.key)} changed: ${changed.map(([c, v]) => `${c} was ${v}, now ${before[c]}`).join(', ')}`)
      const {sql, params} = stepSql(step)
      const res = await write(conn, step.table, sql, params, tag)
      if (res.affectedRows !== 1) fail(`expected 1 row affected, got ${res.affectedRows}`)
      // The row by its primary key: the step's key may be a filter the write itself changes (deleted = 0).
      const pk = keyOf(step.table, before)
      const after = step.op === 'delete' ? null : ((await lockRows(conn, step.table, pk))[0] ?? null)
      if (step.op === 'update' && !after) fail(`${describeKey(step.table, pk)} cannot be read back`)
      records.push({db: step.db, table: step.table, key: pk, before, after, step: n})
      return 0
    }
    case 'update-all':
    case 'delete-all': {
      const rows = await lockRows(conn, step.table, step.where)
      if (rows.length === 0) return 0
      const {sql, params} = stepSql(step)
      const res = await write(conn, step.table, sql, params, tag)
      if (res.affectedRows !== rows.length) fail(`locked ${rows.length} row(s) where ${JSON.stringify(step.where)}, ${res.affectedRows} affected`)
      for (const before of rows) {
        // By primary key: the write may change the filter itself (deleted = 0).
        const pk = keyOf(step.table, before)
        const after = step.op === 'delete-all' ? null : ((await lockRows(conn, step.table, pk))[0] ?? null)
        if (step.op === 'update-all' && !after) fail(`${describeKey(step.table, pk)} cannot be read back`)
        records.push({db: step.db, table: step.table, key: pk, before, after, step: n})
      }
      return 0
    }
    case 'insert': {
      const existing = await lockRows(conn, step.table, step.unique)
      if (existing.length > 0) fail(`${describeKey(step.table, step.unique)} exists already: ${show(existing[0])}`)
      const {sql, params} = stepSql(step)
      const res = await write(conn, step.table, sql, params, tag)
      if (res.affectedRows !== 1) fail(`expected 1 row inserted, got ${res.affectedRows}`)
      const pk = primaryKeyOf(step.table)
      const key: Row = pk.length === 1 && pk[0] === 'id' && !('id' in step.values) ? {id: res.insertId} : keyOf(step.table, step.values)
      if (Object.values(key).some((v) => isNow(v))) fail('a primary key cannot be NOW')
      const after = (await lockRows(conn, step.table, key))[0] ?? null
      if (!after) fail(`inserted ${describeKey(step.table, key)} cannot be read back`)
      records.push({db: step.db, table: step.table, key, before: null, after, step: n})
      return 0
    }
    case 'restore': {
      const rows = await lockRows(conn, step.table, step.key)
      const current = rows[0] ?? null
      if (rowsEqual(current, step.before)) return 1
      // A row the repair wrote twice and that holds none of those writes any more (a second undo).
      if (step.origin !== undefined && rowsEqual(current, step.origin)) return 1
      if (!rowsEqual(current, step.after))
        fail(`${describeKey(step.table, step.key)} changed since the repair: expected ${show(step.after)}, found ${show(current)}`)
      const {sql, params} = stepSql(step)
      const res = await write(conn, step.table, sql, params, tag)
      if (res.affectedRows !== 1) fail(`expected 1 row affected, got ${res.affectedRows}`)
      const after = step.before === null ? null : ((await lockRows(conn, step.table, step.key))[0] ?? null)
      records.push({db: step.db, table: step.table, key: step.key, before: current, after, step: n})
      return 0
    }
  }
}
