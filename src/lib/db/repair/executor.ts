/**
 * The repair executor: the only code that writes to nova's databases.
 *
 * Protocol (docs/repairs.md): GET_LOCK on nova_api; one transaction per database; every row a step
 * relies on is locked with SELECT ... FOR UPDATE and compared with the values the plan observed; every
 * write is guarded by those values and must touch exactly one row; the after-images are read back; the
 * undo file (before- and after-image of every row) is fsync'd before the first COMMIT; then every
 * `check` step is read again, and right before each COMMIT the lock is checked to be still ours;
 * commits follow the plan's database order. Any mismatch before the first commit rolls every
 * transaction back.
 */
import {randomBytes} from 'node:crypto'
import {closeSync, fsyncSync, mkdirSync, openSync, appendFileSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

import {CloudctlError, ExitCode, RepairAbortedError} from '../../errors.js'
import {scrub} from '../../util/redact.js'
import {type Connection, closeConnection, mapDbError} from '../connection.js'
import {
  type DbKey,
  type RepairPlan,
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
import type {UndoFileLike as UndoFile, UndoRecordLike as UndoRecord} from '../../repairs/undo.js'

export const REPAIR_LOCK_NAME = 'cloudctl-repair'

// The undo file format is defined with its validator in the pure core; the executor writes it.
export type {UndoFile, UndoRecord}

export interface ExecuteHooks {
  /** After every write of every database, before the undo file is written. */
  afterWrites?: (conns: Map<DbKey, Connection>) => Promise<void>
  /** After the undo file is fsync'd, before the first COMMIT. */
  afterUndoWritten?: (file: string) => Promise<void>
  /** After each database's COMMIT. */
  afterCommit?: (db: DbKey) => Promise<void>
}

export interface ExecuteOptions {
  /** Opens a new connection to a database of the plan (and 'nova_api' for the lock). */
  connect: (db: DbKey) => Promise<Connection>
  undoFile: string
  auditLog?: string
  operator?: string
  hooks?: ExecuteHooks
  /** Default REPAIR_LOCK_NAME; tests sharing one server use one name per test cloud. */
  lockName?: string
}

/**
 * Hooks every plan of this process runs after its own (ExecuteOptions.hooks). They are how a test
 * holds the real CLI at a point of the protocol to SIGKILL it or race it from a second connection
 * (test/support/repair-pause.mjs, loaded with `node --import` by the test harness only): nothing in
 * the database can hold a COMMIT back without stalling the whole server. None is registered otherwise.
 */
const processHooks: ExecuteHooks[] = []

export function addProcessExecuteHooks(hooks: ExecuteHooks): void {
  processHooks.push(hooks)
}

async function runHooks(own: ExecuteHooks | undefined, call: (h: ExecuteHooks) => Promise<void> | undefined): Promise<void> {
  for (const h of own ? [own, ...processHooks] : processHooks) await call(h)
}

export interface ExecuteResult {
  plan_id: string
  committed: DbKey[]
  undo_file: string
  rows_changed: number
  /** Rows a restore step found already in their target state. */
  rows_already: number
  records: UndoRecord[]
}

/** The commit of a later database failed after an earlier one committed. */
export class PartialApplyError extends CloudctlError {
  constructor(
    message: string,
    readonly committed: DbKey[],
    readonly undoFile: string,
  ) {
    super(message, {
      exitCode: ExitCode.PARTIAL,
      code: 'RepairPartiallyApplied',
      hint: `Re-run the same command: the audit reports what is left and the plan finishes it. Undo file: ${undoFile}`,
    })
  }
}

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

function fsyncWrite(path: string, text: string): void {
  mkdirSync(dirname(path), {recursive: true, mode: 0o700})
  const fd = openSync(path, 'wx', 0o600)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    const dfd = openSync(dirname(path), 'r')
    try {
      fsyncSync(dfd)
    } finally {
      closeSync(dfd)
    }
  } catch {
    // some filesystems refuse fsync on a directory; the file itself is synced
  }
}

export function appendAuditLog(path: string, entry: Record<string, unknown>): void {
  mkdirSync(dirname(path), {recursive: true, mode: 0o700})
  appendFileSync(path, `${scrub(JSON.stringify(entry))}\n`, {mode: 0o600})
}

class Aborted extends Error {}

/** A `check` step as it ran: the full rows it locked, to be compared again before the COMMIT. */
interface HeldCheck {
  n: number
  step: CheckStep
  rows: Row[]
}

/** Runs a plan. Throws RepairAbortedError (exit 5) when anything differs from what the plan observed. */
export async function executePlan(plan: RepairPlan, opts: ExecuteOptions): Promise<ExecuteResult> {
  const planId = randomBytes(6).toString('hex')
  const lockName = opts.lockName ?? REPAIR_LOCK_NAME
  const label = (db: DbKey) => plan.db_labels[db] ?? db
  const conns = new Map<DbKey, Connection>()
  const records: UndoRecord[] = []
  const committed: DbKey[] = []
  let rowsAlready = 0
  let undoWritten = false
  let lockConn: Connection | undefined
  const held: HeldCheck[] = []
  let stage = 'lock'
  const audit = (outcome: string, extra: Record<string, unknown> = {}) => {
    if (!opts.auditLog) return
    try {
      appendAuditLog(opts.auditLog, {
        time: new Date().toISOString(),
        operator: opts.operator ?? null,
        plan_id: planId,
        kind: plan.kind,
        outcome,
        committed: committed.map(label),
        // Only a file that exists: an abort before the undo stage leaves none.
        undo_file: undoWritten ? opts.undoFile : null,
        findings: plan.findings.map((f) => `${f.code} ${f.subject}`),
        steps: plan.steps.length,
        rows_changed: records.length,
        ...extra,
      })
    } catch {
      // the audit log is best effort once the databases have spoken; the undo file is not
    }
  }

  try {
    lockConn = await opts.connect('nova_api')
    const [lockRows] = await lockConn.query('SELECT GET_LOCK(?, 0) AS l', [lockName])
    const got = (lockRows as Array<{l: number | null}>)[0]?.l
    if (got !== 1) {
      throw new CloudctlError(`another cloudctl repair holds the lock '${lockName}' on the nova_api server`, {
        exitCode: ExitCode.UNEXPECTED,
        code: 'RepairLockHeld',
        hint: `Wait for it to finish (SELECT IS_USED_LOCK('${lockName}') names its connection), then re-run.`,
      })
    }

    stage = 'begin'
    for (const db of plan.db_order) {
      const conn = await opts.connect(db)
      conns.set(db, conn)
      await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED')
      await conn.query('START TRANSACTION')
    }

    stage = 'steps'
    for (const [i, step] of plan.steps.entries()) {
      const conn = conns.get(step.db)
      if (!conn) throw new Error(`plan step ${i + 1} names database ${step.db}, which is not in db_order`)
      rowsAlready += await runStep(conn, step, i + 1, planId, label(step.db), records, held)
    }
    await runHooks(opts.hooks, (h) => h.afterWrites?.(conns))

    stage = 'undo'
    const undo: UndoFile = {
      undo_version: 1,
      plan_id: planId,
      kind: plan.kind,
      created_at: new Date().toISOString(),
      db_order: plan.db_order,
      db_labels: plan.db_labels,
      records,
    }
    if (records.length > 0) {
      fsyncWrite(opts.undoFile, `${JSON.stringify(undo, null, 1)}\n`)
      undoWritten = true
    }
    await runHooks(opts.hooks, (h) => h.afterUndoWritten?.(opts.undoFile))

    stage = 'commit'
    // READ COMMITTED takes no gap locks: a row inserted after a check step (an allocation of the
    // consumer being removed, a build request) is not held off, so every check is read again once
    // everything else is done, before anything commits.
    const own = new OwnWrites(records)
    for (const h of held) await revalidate(conns.get(h.step.db) as Connection, h, own, label(h.step.db))
    for (const db of plan.db_order) {
      const conn = conns.get(db) as Connection
      // GET_LOCK is tied to its session: once that session is gone (KILL CONNECTION, a proxy timeout)
      // another repair can hold the lock while these transactions are still open.
      await assertLockHeld(lockConn, lockName)
      try {
        await conn.query('COMMIT')
      } catch (error) {
        if (committed.length === 0) throw error
        throw new PartialApplyError(
          `committed ${committed.map(label).join(', ')} but the commit of ${label(db)} failed: ${mapDbError(error, {label: label(db)}).message}`,
          [...committed],
          opts.undoFile,
        )
      }
      committed.push(db)
      await runHooks(opts.hooks, (h) => h.afterCommit?.(db))
    }
    audit('applied', {rows_already: rowsAlready})
    return {plan_id: planId, committed, undo_file: opts.undoFile, rows_changed: records.length, rows_already: rowsAlready, records}
  } catch (error) {
    for (const [db, conn] of conns) {
      if (committed.includes(db)) continue
      try {
        await conn.query('ROLLBACK')
      } catch {
        // a dead connection has rolled back on the server already
      }
    }
    if (committed.length > 0) {
      const e =
        error instanceof PartialApplyError
          ? error
          : new PartialApplyError(
              `committed ${committed.map(label).join(', ')}, then failed: ${error instanceof Error ? error.message : String(error)}`,
              [...committed],
              opts.undoFile,
            )
      audit('partial', {error: e.message})
      throw e
    }
    if (error instanceof CloudctlError && error.code === 'RepairLockHeld') throw error
    const e = toAbort(error, stage)
    audit('aborted', {error: e.message})
    throw e
  } finally {
    for (const conn of conns.values()) await closeConnection(conn)
    if (lockConn) {
      try {
        await lockConn.query('SELECT RELEASE_LOCK(?)', [lockName])
      } catch {
        // closing the connection releases it too
      }
      await closeConnection(lockConn)
    }
  }
}

function toAbort(error: unknown, stage: string): CloudctlError {
  if (error instanceof RepairAbortedError) return error
  if (error instanceof Aborted) return new RepairAbortedError(error.message)
  if (error instanceof CloudctlError && stage === 'lock') return error
  if (error instanceof CloudctlError && stage === 'begin') return error
  const mapped = error instanceof CloudctlError ? error : mapDbError(error)
  return new RepairAbortedError(`${stage === 'undo' ? 'could not write the undo file' : 'the repair failed'} (${mapped.message}); every transaction was rolled back`)
}

async function assertLockHeld(conn: Connection, lockName: string): Promise<void> {
  let holder: unknown
  let me: unknown
  try {
    const [rows] = await conn.query('SELECT IS_USED_LOCK(?) AS holder, CONNECTION_ID() AS me', [lockName])
    ;({holder, me} = (rows as Array<{holder: unknown; me: unknown}>)[0] ?? {})
  } catch (error) {
    throw new Aborted(`the repair lock '${lockName}' was lost with its connection (${mapDbError(error, {label: 'nova_api'}).message}): another repair may hold it now`)
  }
  if (holder === null || holder === undefined || Number(holder) !== Number(me))
    throw new Aborted(
      `the repair lock '${lockName}' is no longer held by this repair (${holder === null || holder === undefined ? 'it is free' : `connection ${holder} holds it`})`,
    )
}

const pkText = (table: string, row: Record<string, unknown>) => JSON.stringify(primaryKeyOf(table).map((c) => String(row[c] ?? null)))

/** Equal for any two values `sameValue` calls equal (and for some it does not: candidates only). */
function valueKey(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  const n = Number(v)
  return Number.isNaN(n) ? `s${String(v)}` : `n${Math.fround(n)}`
}

/** This transaction's writes as they now stand: a row's last after-image (null = deleted), by table and primary key. */
class OwnWrites {
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
async function revalidate(conn: Connection, h: HeldCheck, own: OwnWrites, dbLabel: string): Promise<void> {
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
  const [rows] = await conn.query(`SELECT * FROM ${q(table)} WHERE ${w.sql} FOR UPDATE`, w.params)
  return (rows as Array<Record<string, unknown>>).map(plainRow).sort(cmpKeys(table))
}

async function write(conn: Connection, sql: string, params: Scalar[], tag: string): Promise<{affectedRows: number; insertId: number}> {
  const [res] = await conn.query(`/* ${tag} */ ${sql}`, params)
  const r = res as {affectedRows: number; insertId: number}
  return {affectedRows: r.affectedRows, insertId: r.insertId}
}

const show = (r: Row | null | undefined) => (r ? JSON.stringify(r) : 'no row')

/** Returns 1 when a restore step found its row already restored, else 0. */
async function runStep(conn: Connection, step: Step, n: number, planId: string, dbLabel: string, records: UndoRecord[], held: HeldCheck[]): Promise<number> {
  const tag = `cloudctl repair=${planId} step=${n}`
  const where = `step ${n} (${dbLabel} ${step.table})`
  const fail = (msg: string): never => {
    throw new Aborted(`${where}: ${msg}. ${step.why}`)
  }
  switch (step.op) {
    case 'check': {
      const rows = await lockRows(conn, step.table, step.where)
      if (rows.length !== step.rows.length || !step.rows.every((exp, i) => rowMatches(rows[i], exp)))
        fail(`expected ${step.rows.length === 0 ? 'no row' : JSON.stringify(step.rows)} where ${JSON.stringify(step.where)}, found ${rows.length === 0 ? 'none' : JSON.stringify(rows)}`)
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
      const res = await write(conn, sql, params, tag)
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
      const res = await write(conn, sql, params, tag)
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
      const res = await write(conn, sql, params, tag)
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
      if (!rowsEqual(current, step.after)) fail(`${describeKey(step.table, step.key)} changed since the repair: expected ${show(step.after)}, found ${show(current)}`)
      const {sql, params} = stepSql(step)
      const res = await write(conn, sql, params, tag)
      if (res.affectedRows !== 1) fail(`expected 1 row affected, got ${res.affectedRows}`)
      const after = step.before === null ? null : ((await lockRows(conn, step.table, step.key))[0] ?? null)
      records.push({db: step.db, table: step.table, key: step.key, before: current, after, step: n})
      return 0
    }
  }
}
