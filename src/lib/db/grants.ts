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
import {type MissingGrant, describeMissing, grantStatements, parseDenial, planProbes} from '../repairs/privileges.js'
import {type Connection, closeConnection, connectionContext, queryWithin} from './connection.js'
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

/** The grants the plan's statements need that the server refuses, per database (all of them, not the first). */
export async function missingGrants(plan: RepairPlan, connect: (db: DbKey) => Promise<Connection>): Promise<MissingGrant[]> {
  const probes = planProbes(plan.steps)
  const missing: MissingGrant[] = []
  const ms = dbTimeouts().readIdleMs
  for (const db of plan.db_order) {
    const mine = probes.filter((p) => p.db === db)
    if (mine.length === 0) continue
    const conn = await connect(db)
    try {
      const ctx = connectionContext(conn)
      const [who] = (await queryWithin(conn, 'SELECT DATABASE() AS d, CURRENT_USER() AS u', [], ms, ctx)) as Array<{d: string | null; u: string}>
      for (const p of mine) {
        try {
          // A user variable carries the text: PREPARE takes a literal or a variable, never a placeholder.
          await queryWithin(conn, 'SET @cloudctl_grant_probe = ?', [p.sql], ms, ctx)
          await queryWithin(conn, 'PREPARE cloudctl_grant_probe FROM @cloudctl_grant_probe', [], ms, connectionContext(conn, p.table))
          await queryWithin(conn, 'DEALLOCATE PREPARE cloudctl_grant_probe', [], ms, ctx)
        } catch (error) {
          const d = driverCode(error)
          if (!d) throw error
          // Only a denial is this check's business; any other answer of the server (a table that is
          // not there) is the executor's to report, inside its transaction, as before this check.
          if (!DENIED.has(d.code)) {
            if (d.code.startsWith('ER_')) continue
            throw error
          }
          const denial = parseDenial(d.message, p.privilege)
          const m: MissingGrant = {db, label: plan.db_labels[db] ?? db, database: who?.d ?? '?', table: p.table, privilege: denial.privilege, account: who?.u ?? '?'}
          if (denial.column !== undefined) m.column = denial.column
          if (!missing.some((x) => x.db === m.db && x.table === m.table && x.privilege === m.privilege && x.column === m.column)) missing.push(m)
        }
      }
    } finally {
      await closeConnection(conn)
    }
  }
  return missing
}

/**
 * The one check of the repair flow (RepairCommand.runPlan). With --apply a missing grant refuses the
 * run (exit 2) before the plan is confirmed and before any lock or transaction; a dry run keeps its
 * plan and says in a note what --apply would lack.
 */
export async function checkPlanGrants(plan: RepairPlan, source: SourceOptions, apply: boolean): Promise<void> {
  let missing: MissingGrant[]
  try {
    const targets = await resolveRepairTargets(source)
    missing = await missingGrants(plan, connectorFor(targets, plan.db_labels))
  } catch (error) {
    if (apply) throw error
    plan.notes.push(`the account's grants could not be checked: ${error instanceof Error ? error.message : String(error)}`)
    return
  }
  if (missing.length === 0) return
  const grants = grantStatements(missing)
  const hint = `Grant what the plan needs (README "Prerequisites"): ${grants.slice(0, 3).join('; ')}${grants.length > 3 ? `; ... (${grants.length - 3} more)` : ''}`
  if (!apply) {
    plan.notes.push(`--apply would be refused: ${describeMissing(missing)}. ${hint}`)
    return
  }
  throw new CloudctlError(`refusing to apply: ${describeMissing(missing)}; nothing was locked or written`, {exitCode: ExitCode.CONFIG, code: 'MissingGrant', hint})
}
