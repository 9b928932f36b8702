/**
 * The repair executor (with steps.ts, which runs each step): the only code that writes to nova's databases.
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
import type {DbKey, RepairPlan} from '../../repairs/plan.js'
import type {UndoFileLike as UndoFile, UndoRecordLike as UndoRecord} from '../../repairs/undo.js'
import {Aborted, type HeldCheck, OwnWrites, revalidate, runStep} from './steps.js'

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
 * They live on the process, not in this module: the CLI runs the copy of this module bundled into its
 * command (scripts/bundle-commands.mjs), the preload imports dist/lib/db/repair/executor.js.
 */
const HOOKS = Symbol.for('cloudctl.repair.processExecuteHooks')
const processHooks: ExecuteHooks[] = ((globalThis as {[HOOKS]?: ExecuteHooks[]})[HOOKS] ??= [])

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
