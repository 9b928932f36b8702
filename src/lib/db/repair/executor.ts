/**
 * The repair executor (with steps.ts, which runs each step): the only code that writes to nova's databases.
 *
 * Protocol (docs/repairs.md): GET_LOCK on nova_api (on Galera also a row lock every node holds,
 * cluster-lock.ts); one transaction per database, every session with
 * bounded lock waits and statements (timeouts.ts); every row a step relies on is locked with SELECT ...
 * FOR UPDATE and compared with the values the plan observed, the other databases' rows before
 * placement's; every write is guarded by those values and must touch exactly one row; the
 * after-images are read back; the undo file (before- and after-image of every row) and the audit
 * log's `committing` line are fsync'd before the first COMMIT; then every `check` step is read again,
 * and right before each COMMIT the lock is checked to be still ours; commits follow the plan's
 * database order. Any mismatch or timeout before the first commit rolls every transaction back.
 */
import {randomBytes} from 'node:crypto'
import {closeSync, fsyncSync, mkdirSync, openSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

import {CloudctlError, ExitCode, RepairAbortedError} from '../../errors.js'
import {type Connection, closeConnection, connectionContext, mapDbError} from '../connection.js'
import {boundQueries, timedQuery} from './bounded.js'
import {CLIENT_MARGIN_MS, type DbTimeouts, REVALIDATE_LOCK_WAIT_S, dbTimeouts} from '../timeouts.js'
import type {DbKey, RepairPlan, Step} from '../../repairs/plan.js'
import type {UndoFileLike as UndoFile, UndoRecordLike as UndoRecord} from '../../repairs/undo.js'
import {AuditLog, appendFailure} from './audit-log.js'
import {Aborted, type HeldCheck, OwnWrites, revalidate, runStep} from './steps.js'
import {type ClusterLock, clusterLockHeld, lockHeldError, releaseClusterLock, takeClusterLock} from './cluster-lock.js'

export const REPAIR_LOCK_NAME = 'cloudctl-repair'

// The undo file format is defined with its validator in the pure core; the executor writes it.
export type {UndoFile, UndoRecord}

export interface ExecuteHooks {
  /** After every transaction has begun, before the first step (nothing is locked yet). */
  afterBegin?: () => Promise<void>
  /** After every write of every database, before the undo file is written. */
  afterWrites?: (conns: Map<DbKey, Connection>) => Promise<void>
  /** After the undo file is fsync'd, before the re-checks and the first COMMIT. */
  afterUndoWritten?: (file: string) => Promise<void>
  /** Right before each database's COMMIT (the audit log's `committing` line is on disk before the first). */
  beforeCommit?: (db: DbKey) => Promise<void>
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
 * The build makes this module an entry point of the commands' bundle (scripts/bundle-commands.mjs),
 * so the preload and the command share one instance of it.
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
  /** What went wrong after the data was committed (the audit log's outcome line could not be written). */
  warnings: string[]
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

/**
 * Steps in the order they run: every other database's before placement's. Placement's rows are the
 * ones every scheduler decision and every nova-compute update writes: they are locked last, so that a
 * cell that stalls (a table lock, a frozen server) is met before any of them is held. Steps of one
 * database keep their order; each database has its own transaction, so nothing else depends on it.
 */
function executionOrder(plan: RepairPlan): Array<[number, Step]> {
  const entries = plan.steps.map((step, i): [number, Step] => [i + 1, step])
  return [...entries.filter(([, s]) => s.db !== 'placement'), ...entries.filter(([, s]) => s.db === 'placement')]
}

/** A repair session's bounds on the server: lock waits and statements (MariaDB, else MySQL's SELECT-only limit). */
async function limitRepairSession(conn: Connection, t: DbTimeouts): Promise<void> {
  const waits = 'SET SESSION lock_wait_timeout = ?, SESSION innodb_lock_wait_timeout = ?'
  try {
    await timedQuery(conn, `${waits}, SESSION max_statement_time = ?`, [t.repairLockWaitS, t.repairLockWaitS, t.repairStatementS])
  } catch (error) {
    if (!(error instanceof CloudctlError) || error.code !== 'Db_ER_UNKNOWN_SYSTEM_VARIABLE') throw error
    await timedQuery(conn, `${waits}, SESSION max_execution_time = ?`, [t.repairLockWaitS, t.repairLockWaitS, Math.round(t.repairStatementS * 1000)])
  }
}

const GAVE_UP = new Set(['DbTimeout', 'DbLockTimeout', 'DbStatementTimeout'])

/** Runs a plan. Throws RepairAbortedError (exit 5) when anything differs from what the plan observed, or a database stalls. */
export async function executePlan(plan: RepairPlan, opts: ExecuteOptions): Promise<ExecuteResult> {
  const planId = randomBytes(6).toString('hex')
  const lockName = opts.lockName ?? REPAIR_LOCK_NAME
  const label = (db: DbKey) => plan.db_labels[db] ?? db
  const limits = dbTimeouts()
  // The client waits a little longer than the server's own limit: past it, the server is not answering.
  const statementMs = limits.repairStatementS * 1000 + CLIENT_MARGIN_MS
  // Before anything is locked: an audit log that cannot hold a line refuses the run (exit 2).
  const log = opts.auditLog ? AuditLog.open(opts.auditLog) : undefined
  const conns = new Map<DbKey, Connection>()
  const records: UndoRecord[] = []
  const committed: DbKey[] = []
  const warnings: string[] = []
  let rowsAlready = 0
  let undoWritten = false
  let lockConn: Connection | undefined
  let clusterLock: ClusterLock | undefined
  const held: HeldCheck[] = []
  let stage = 'lock'
  /** One line of the audit log; the reason it could not be written, if it could not. */
  const audit = (outcome: string, extra: Record<string, unknown> = {}): string | undefined => {
    if (!log) return undefined
    try {
      log.append({
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
        // Rows of the databases that committed: an aborted run changed none.
        rows_changed: records.filter((r) => committed.includes(r.db)).length,
        ...extra,
      })
      return undefined
    } catch (error) {
      return `the audit log ${log.path} could not record the outcome (${appendFailure(error)})`
    }
  }

  try {
    lockConn = await opts.connect('nova_api')
    boundQueries(lockConn, statementMs)
    const lockRows = await timedQuery(lockConn, 'SELECT GET_LOCK(?, 0) AS l', [lockName])
    const got = (lockRows as Array<{l: number | null}>)[0]?.l
    if (got !== 1)
      throw lockHeldError(lockName, 'on the nova_api server', `Wait for it to finish (SELECT IS_USED_LOCK('${lockName}') names its connection), then re-run.`)
    // GET_LOCK is per node on Galera: there the exclusion is a row every node holds (cluster-lock.ts).
    clusterLock = await takeClusterLock(lockConn, lockName)

    stage = 'begin'
    for (const db of plan.db_order) {
      const conn = await opts.connect(db)
      conns.set(db, conn)
      boundQueries(conn, statementMs)
      await limitRepairSession(conn, limits)
      await timedQuery(conn, 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED')
      await timedQuery(conn, 'START TRANSACTION')
    }
    await runHooks(opts.hooks, (h) => h.afterBegin?.())

    stage = 'steps'
    for (const [n, step] of executionOrder(plan)) {
      const conn = conns.get(step.db)
      if (!conn) throw new Error(`plan step ${n} names database ${step.db}, which is not in db_order`)
      rowsAlready += await runStep(conn, step, n, planId, label(step.db), records, held)
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
    await revalidateAll(conns, held, records, label)
    for (const db of plan.db_order) {
      const conn = conns.get(db) as Connection
      // GET_LOCK is tied to its session: once that session is gone (KILL CONNECTION, a proxy timeout)
      // another repair can hold the lock while these transactions are still open.
      await assertLockHeld(lockConn, lockName, clusterLock)
      if (db === plan.db_order[0] && records.length > 0) {
        // The promised line per applied run, on disk before anything commits: without it, nothing does.
        const failed = audit('committing', {committing: plan.db_order.map(label), rows_to_commit: records.length})
        if (failed) throw new Aborted(`${failed.replace('the outcome', 'this run before its COMMIT')}: an applied run must be recorded first`)
      }
      await runHooks(opts.hooks, (h) => h.beforeCommit?.(db))
      await commit(conn, db, committed, label, opts.undoFile)
      committed.push(db)
      await runHooks(opts.hooks, (h) => h.afterCommit?.(db))
    }
    const failed = audit('applied', {rows_already: rowsAlready})
    if (failed) warnings.push(failed)
    return {plan_id: planId, committed, undo_file: opts.undoFile, rows_changed: records.length, rows_already: rowsAlready, records, warnings}
  } catch (error) {
    for (const [db, conn] of conns) {
      if (committed.includes(db)) continue
      // Briefly: a server that does not answer rolls back by itself once the connection is closed.
      boundQueries(conn, CLIENT_MARGIN_MS)
      try {
        await timedQuery(conn, 'ROLLBACK')
      } catch {
        // a dead or stalled connection is closed: the server rolls back what it had open
      }
    }
    if (committed.length > 0 || error instanceof PartialApplyError) {
      const e =
        error instanceof PartialApplyError
          ? error
          : new PartialApplyError(
              `committed ${committed.map(label).join(', ')}, then failed: ${error instanceof Error ? error.message : String(error)}`,
              [...committed],
              opts.undoFile,
            )
      throw withAuditNote(e, audit('partial', {error: e.message}))
    }
    if (error instanceof CloudctlError && error.code === 'RepairLockHeld') throw error
    const e = toAbort(error, stage)
    throw withAuditNote(e, audit('aborted', {error: e.message}))
  } finally {
    log?.close()
    for (const conn of conns.values()) await closeConnection(conn)
    if (lockConn) {
      boundQueries(lockConn, CLIENT_MARGIN_MS)
      if (clusterLock) await releaseClusterLock(lockConn)
      try {
        await timedQuery(lockConn, 'SELECT RELEASE_LOCK(?)', [lockName])
      } catch {
        // closing the connection releases it too
      }
      await closeConnection(lockConn)
    }
  }
}

/**
 * Every check step read again, the other databases first. Placement's rows are held by now: the
 * others already hold their own rows, so a lock met there is someone writing a row the plan relies
 * on; they wait REVALIDATE_LOCK_WAIT_S for it (and the client as little longer), then the repair
 * aborts and releases placement rather than keep it locked behind a cell.
 */
async function revalidateAll(conns: Map<DbKey, Connection>, held: HeldCheck[], records: UndoRecord[], label: (db: DbKey) => string): Promise<void> {
  const placementHeld = conns.has('placement')
  const brief = REVALIDATE_LOCK_WAIT_S * 1000 + CLIENT_MARGIN_MS
  if (placementHeld)
    for (const [db, conn] of conns) {
      if (db === 'placement') continue
      boundQueries(conn, brief)
      await timedQuery(conn, 'SET SESSION lock_wait_timeout = ?, SESSION innodb_lock_wait_timeout = ?', [REVALIDATE_LOCK_WAIT_S, REVALIDATE_LOCK_WAIT_S])
    }
  // READ COMMITTED takes no gap locks: a row inserted after a check step (an allocation of the
  // consumer being removed, a build request) is not held off, so every check is read again once
  // everything else is done, before anything commits.
  const own = new OwnWrites(records)
  const order = [...held.filter((h) => h.step.db !== 'placement'), ...held.filter((h) => h.step.db === 'placement')]
  for (const h of order) await revalidate(conns.get(h.step.db) as Connection, h, own, label(h.step.db))
  if (placementHeld) {
    const statementMs = dbTimeouts().repairStatementS * 1000 + CLIENT_MARGIN_MS
    for (const conn of conns.values()) boundQueries(conn, statementMs)
  }
}

/**
 * One database's COMMIT. A COMMIT the server does not answer may still be applied once it reads it
 * (a frozen server resumes): that is neither committed nor rolled back, and is said so (exit 6).
 */
async function commit(conn: Connection, db: DbKey, committed: DbKey[], label: (db: DbKey) => string, undoFile: string): Promise<void> {
  try {
    await timedQuery(conn, 'COMMIT')
  } catch (error) {
    const e = mapDbError(error, connectionContext(conn))
    const before = committed.length === 0 ? 'nothing committed before it' : `committed before it: ${committed.map(label).join(', ')}`
    if (e.code === 'DbTimeout')
      throw new PartialApplyError(
        `the COMMIT of ${label(db)} got no answer (${e.message}); whether it was applied is unknown (${before})`,
        [...committed],
        undoFile,
      )
    if (committed.length === 0 && e.code === 'DbDeadlock')
      // Galera certifies a transaction at COMMIT: a write another node committed first to a row this
      // one changed fails it there, after every guard in this transaction had passed.
      throw new RepairAbortedError(
        `the COMMIT of ${label(db)}${nodeOf(conn)} was refused: a concurrent write, possibly on another Galera node, changed rows this repair wrote (error 1213); every transaction was rolled back`,
        'Nothing was written. Run the audit again to see what the other writer left; on Galera, send nova-manage and cloudctl writes through the same node (the VIP) to meet as lock waits instead of certification failures.',
      )
    if (committed.length === 0) throw e
    throw new PartialApplyError(`committed ${committed.map(label).join(', ')} but the commit of ${label(db)} failed: ${e.message}`, [...committed], undoFile)
  }
}

function nodeOf(conn: Connection): string {
  const node = connectionContext(conn).node
  return node ? ` (node ${node})` : ''
}

function withAuditNote(e: CloudctlError, failure: string | undefined): CloudctlError {
  if (failure) e.message = `${e.message} (${failure})`
  return e
}

function toAbort(error: unknown, stage: string): CloudctlError {
  if (error instanceof RepairAbortedError) return error
  if (error instanceof Aborted) return new RepairAbortedError(error.message)
  if (error instanceof CloudctlError && GAVE_UP.has(error.code))
    return new RepairAbortedError(`gave up: ${error.message}; every transaction was rolled back`, `Nothing was written. ${error.hint ?? ''}`.trim())
  if (error instanceof CloudctlError && stage === 'lock') return error
  if (error instanceof CloudctlError && stage === 'begin') return error
  if (stage === 'undo' && !(error instanceof CloudctlError))
    return new RepairAbortedError(
      `could not write the undo file (${error instanceof Error ? error.message : String(error)}); every transaction was rolled back`,
      'Nothing was written. Free space or fix the permissions of the undo directory (--undo-dir), then re-run.',
    )
  const mapped = error instanceof CloudctlError ? error : mapDbError(error)
  // The database's own advice (the primary for a read-only server, the node for a lagging one) stays.
  const hint = mapped.hint ? `Nothing was written. ${mapped.hint}` : undefined
  return new RepairAbortedError(
    `${stage === 'undo' ? 'could not write the undo file' : 'the repair failed'} (${mapped.message}); every transaction was rolled back`,
    hint,
  )
}

async function assertLockHeld(conn: Connection, lockName: string, cluster: ClusterLock | undefined): Promise<void> {
  let holder: unknown
  let me: unknown
  try {
    const rows = await timedQuery(conn, 'SELECT IS_USED_LOCK(?) AS holder, CONNECTION_ID() AS me', [lockName])
    ;({holder, me} = (rows as Array<{holder: unknown; me: unknown}>)[0] ?? {})
  } catch (error) {
    throw new Aborted(
      `the repair lock '${lockName}' was lost with its connection (${mapDbError(error, {label: 'nova_api'}).message}): another repair may hold it now`,
    )
  }
  if (holder === null || holder === undefined || Number(holder) !== Number(me))
    throw new Aborted(
      `the repair lock '${lockName}' is no longer held by this repair (${holder === null || holder === undefined ? 'it is free' : `connection ${holder} holds it`})`,
    )
  const lost = cluster ? await clusterLockHeld(conn, cluster) : undefined
  if (lost) throw new Aborted(`the cluster-wide repair lock '${lockName}' is no longer held by this repair: ${lost}; another repair may hold it now`)
}
