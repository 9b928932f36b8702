/**
 * Least privilege (issue 26 item 7): before a plan is confirmed or the repair lock is taken, every
 * statement the executor will run is PREPAREd on a connection opened as the executor opens its own
 * (repair/targets.ts). PREPARE makes the server check the privileges and runs nothing, so the answer
 * is the server's own: the account's roles as they are active on login (MariaDB default roles, MySQL
 * default or mandatory roles), wildcard database grants, column grants, partial revokes and grants to
 * PUBLIC all count exactly as they will during the repair. Parsing SHOW GRANTS could only approximate
 * that and would refuse a repair the server allows (or the reverse).
 *
 * The repair lock and the session settings need no privilege: GET_LOCK, IS_USED_LOCK and
 * RELEASE_LOCK are open to every account, and lock_wait_timeout, innodb_lock_wait_timeout,
 * max_statement_time / max_execution_time and the transaction isolation level are session settings
 * any account may change.
 */
import {CloudctlError, ExitCode} from '../errors.js'
import type {DbKey, RepairPlan} from '../repairs/plan.js'
import {type MissingGrant, type PrivilegeProbe, describeMissing, grantStatements, parseDenial, planProbes} from '../repairs/privileges.js'
import type {Snapshot} from '../domain/snapshot.js'
import {type Connection, closeConnection, connectionContext, queryWithin, sessionOf} from './connection.js'
import {connectorFor, resolveRepairTargets} from './repair/targets.js'
import {dbTimeouts} from './timeouts.js'
import type {SourceOptions} from '../snapshot/source.js'

const DENIED = new Set(['ER_TABLEACCESS_DENIED_ERROR', 'ER_COLUMNACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_SPECIFIC_ACCESS_DENIED_ERROR'])

function driverCode(error: unknown): {code: string; message: string} | undefined {
  const cause = error instanceof CloudctlError ? (error as {cause?: unknown}).cause : error
  const c = cause as {code?: unknown; sqlMessage?: unknown} | undefined
  if (typeof c?.code !== 'string') return undefined
  return {code: c.code, message: typeof c.sqlMessage === 'string' ? c.sqlMessage : ''}
}

export interface GrantCheck {
  missing: MissingGrant[]
  /** Databases whose grants could not be asked (unreachable, a metadata lock held): label and reason. */
  unchecked: Array<{db: DbKey; label: string; reason: string}>
}

/** The statement the Galera repair lock runs (repair/cluster-lock.ts), asked like the plan's own. */
const CLUSTER_LOCK_PROBE: PrivilegeProbe = {
  db: 'nova_api',
  table: 'cell_mappings',
  privilege: 'UPDATE',
  sql: 'UPDATE cell_mappings SET updated_at = updated_at WHERE id = 0',
}

/** How long a PREPARE waits for a table's metadata lock (LOCK TABLES, DDL) before the database is left unchecked. */
const PROBE_LOCK_WAIT_S = 2

/** The privilege denials of one database's statements (all of them, not the first). */
async function probeDatabase(conn: Connection, db: DbKey, label: string, probes: PrivilegeProbe[], missing: MissingGrant[]): Promise<void> {
  const ms = dbTimeouts().readIdleMs
  const ctx = connectionContext(conn)
  await queryWithin(conn, 'SET SESSION lock_wait_timeout = ?', [PROBE_LOCK_WAIT_S], ms, ctx)
  const [who] = (await queryWithin(conn, 'SELECT DATABASE() AS d, CURRENT_USER() AS u', [], ms, ctx)) as Array<{d: string | null; u: string}>
  for (const p of probes) {
    try {
      // A user variable carries the text: PREPARE takes a literal or a variable, never a placeholder.
      await queryWithin(conn, 'SET @cloudctl_grant_probe = ?', [p.sql], ms, ctx)
      await queryWithin(conn, 'PREPARE cloudctl_grant_probe FROM @cloudctl_grant_probe', [], ms, connectionContext(conn, p.table))
      await queryWithin(conn, 'DEALLOCATE PREPARE cloudctl_grant_probe', [], ms, ctx)
    } catch (error) {
      const d = driverCode(error)
      if (!d || !d.code.startsWith('ER_') || d.code === 'ER_LOCK_WAIT_TIMEOUT') throw error
      // Only a denial is this check's business; any other answer of the server (a table that is
      // not there) is the executor's to report, inside its transaction, as before this check.
      if (!DENIED.has(d.code)) continue
      const denial = parseDenial(d.message, p.privilege)
      const m: MissingGrant = {db, label, database: who?.d ?? '?', table: p.table, privilege: denial.privilege, account: who?.u ?? '?'}
      if (denial.column !== undefined) m.column = denial.column
      if (!missing.some((x) => x.db === m.db && x.table === m.table && x.privilege === m.privilege && x.column === m.column)) missing.push(m)
    }
  }
}

/**
 * What the server denies of the plan's statements, per database. A database that cannot be asked
 * (unreachable, frozen, a table locked) is listed as unchecked, never as allowed or denied: the
 * executor meets the same condition and handles it under its own bounds (exit 5, nothing written).
 */
export async function checkGrants(plan: RepairPlan, connect: (db: DbKey) => Promise<Connection>, skip: ReadonlySet<DbKey> = new Set()): Promise<GrantCheck> {
  const probes = planProbes(plan.steps)
  const out: GrantCheck = {missing: [], unchecked: []}
  // nova_api is asked even when the plan writes nothing there: the repair lock lives on it, and on a
  // Galera node that lock is a row of cell_mappings the lock session updates (repair/cluster-lock.ts).
  const dbs = plan.db_order.includes('nova_api') ? plan.db_order : ['nova_api' as const, ...plan.db_order]
  for (const db of dbs) {
    const mine: PrivilegeProbe[] = probes.filter((p) => p.db === db)
    if ((mine.length === 0 && db !== 'nova_api') || skip.has(db)) continue
    const label = plan.db_labels[db] ?? db
    let conn: Connection | undefined
    try {
      conn = await connect(db)
      if (db === 'nova_api' && sessionOf(conn).wsrep) mine.push(CLUSTER_LOCK_PROBE)
      if (mine.length === 0) continue
      await probeDatabase(conn, db, label, mine, out.missing)
    } catch (error) {
      // asked only for the lock: the executor reaches nova_api first and reports it there
      if (mine.length === 0) continue
      out.unchecked.push({db, label, reason: error instanceof Error ? error.message : String(error)})
    } finally {
      await closeConnection(conn)
    }
  }
  return out
}

/**
 * The one check of the repair flow (RepairCommand.runPlan). With --apply a missing grant refuses the
 * run (exit 2) before the plan is confirmed and before any lock or transaction; a dry run keeps its
 * plan and says in a note what --apply would lack. Cells the snapshot could not read are not asked
 * (a dry run lists them already; --apply is refused for them before this).
 */
export async function checkPlanGrants(plan: RepairPlan, source: SourceOptions, apply: boolean, snapshot: Snapshot | null): Promise<void> {
  const skip = new Set<DbKey>((snapshot?.cells ?? []).filter((c) => c.status !== 'available').map((c) => `cell:${c.uuid}` as const))
  let result: GrantCheck
  try {
    const targets = await resolveRepairTargets(source)
    result = await checkGrants(plan, connectorFor(targets, plan.db_labels), skip)
  } catch (error) {
    if (apply) throw error
    plan.notes.push(`the account's grants could not be checked: ${error instanceof Error ? error.message : String(error)}`)
    return
  }
  for (const u of result.unchecked)
    plan.notes.push(`the account's grants on ${u.label} could not be checked (${u.reason}); the repair checks each statement as it runs`)
  const {missing} = result
  if (missing.length === 0) return
  const grants = grantStatements(missing)
  const hint = `Grant what the plan needs (README "Prerequisites"): ${grants.slice(0, 3).join('; ')}${grants.length > 3 ? `; ... (${grants.length - 3} more)` : ''}`
  if (!apply) {
    plan.notes.push(`--apply would be refused: ${describeMissing(missing)}. ${hint}`)
    return
  }
  throw new CloudctlError(`refusing to apply: ${describeMissing(missing)}; nothing was locked or written`, {
    exitCode: ExitCode.CONFIG,
    code: 'MissingGrant',
    hint,
  })
}
