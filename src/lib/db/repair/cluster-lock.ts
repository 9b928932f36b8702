/**
 * The repair lock on a Galera cluster (docs/repairs.md "Galera"). GET_LOCK is held by one node only:
 * a second repair through another node takes its own. So on a node with `@@wsrep_on` the repair
 * also takes a row lock that Galera holds on every node:
 *
 * its lock session opens a transaction with streaming replication, one row per fragment
 * (wsrep_trx_fragment_unit = 'rows', wsrep_trx_fragment_size = 1), and changes one row of nova_api's
 * cell_mappings (the lowest id). The fragment is certified and applied on every node before the
 * statement returns, and from then on every node holds that row's lock for this transaction. A
 * second repair, through any node, changes the same row: it waits for the lock and gives up after
 * CLAIM_WAIT_S (its node applied our fragment), or its own fragment fails certification (both wrote
 * at once and ours was ordered first): either way it stops with "lock held" (exit 1) before it has
 * begun anything else.
 *
 * The transaction is never committed: it is rolled back when the repair ends, and the server rolls
 * it back on every node when the session or its node goes away (a killed cloudctl, a crashed node),
 * so no stale lock is left behind and no row of nova's ever changes. cell_mappings is the row's
 * table because every repair already depends on it (which database each cell is) and nova writes it
 * only when an operator maps or changes a cell: holding it still while a repair runs is what that
 * repair wants anyway. No table of cloudctl's own is created in nova's databases.
 */
import {CloudctlError, ExitCode} from '../../errors.js'
import {type Connection, sessionOf} from '../connection.js'
import {timedQuery} from './bounded.js'

/** How long a second repair waits for the row before it says the lock is held elsewhere. */
const CLAIM_WAIT_S = 2

/** Two values nova never writes: the one the row does not hold is written, so the row always changes. */
const MARKS = ['1970-01-02 00:00:00', '1970-01-03 00:00:00'] as const

export interface ClusterLock {
  id: number
  mark: string
  node: string | null
}

export function lockHeldError(lockName: string, where: string, hint?: string): CloudctlError {
  return new CloudctlError(`another cloudctl repair holds the lock '${lockName}' ${where}`, {
    exitCode: ExitCode.UNEXPECTED,
    code: 'RepairLockHeld',
    hint: hint ?? `Wait for it to finish (SELECT IS_USED_LOCK('${lockName}') on each node names its connection), then re-run.`,
  })
}

/** Takes the cluster-wide lock when `conn` is a Galera node; undefined on any other server. */
export async function takeClusterLock(conn: Connection, lockName: string): Promise<ClusterLock | undefined> {
  const session = sessionOf(conn)
  if (!session.wsrep) return undefined
  const node = session.nodeName
  const refuse = (why: string): CloudctlError =>
    new CloudctlError(`cannot make the repair lock cluster-wide on the Galera node ${node ?? '(unnamed)'}: ${why}; refusing to repair`, {
      exitCode: ExitCode.CONFIG,
      code: 'RepairLockNotClusterWide',
      hint: 'A repair on Galera needs Galera 4 (streaming replication) and UPDATE on nova_api.cell_mappings; see docs/repairs.md "Galera".',
    })
  try {
    await timedQuery(conn, "SET SESSION wsrep_trx_fragment_unit = 'rows', SESSION wsrep_trx_fragment_size = 1, SESSION innodb_lock_wait_timeout = ?", [
      CLAIM_WAIT_S,
    ])
  } catch (error) {
    if (error instanceof CloudctlError && error.code === 'Db_ER_UNKNOWN_SYSTEM_VARIABLE')
      throw refuse('the server has no streaming replication (Galera 3 or older)')
    throw error
  }
  await timedQuery(conn, 'START TRANSACTION')
  try {
    const rows = (await timedQuery(conn, 'SELECT id, updated_at FROM cell_mappings ORDER BY id LIMIT 1 FOR UPDATE', [], 'cell_mappings')) as Array<{
      id: number
      updated_at: string | null
    }>
    const row = rows[0]
    if (!row) throw refuse('nova_api.cell_mappings has no row to hold')
    const mark = row.updated_at === MARKS[0] ? MARKS[1] : MARKS[0]
    await timedQuery(conn, 'UPDATE cell_mappings SET updated_at = ? WHERE id = ?', [mark, row.id], 'cell_mappings')
    return {id: Number(row.id), mark, node}
  } catch (error) {
    await rollbackQuietly(conn)
    // 1205: the row is held (our node applied the holder's fragment); 1213: both claimed at once and
    // the other claim was certified first.
    if (error instanceof CloudctlError && (error.code === 'DbLockTimeout' || error.code === 'DbDeadlock'))
      throw lockHeldError(
        lockName,
        `elsewhere in the Galera cluster (this repair reached node ${node ?? '(unnamed)'}; the holder keeps a row of nova_api.cell_mappings locked on every node)`,
        'Wait for the other repair to finish (SHOW PROCESSLIST on each node shows its cloudctl session), then re-run.',
      )
    if (error instanceof CloudctlError && error.code === 'DbAccessDenied') throw refuse(`no UPDATE on nova_api.cell_mappings (${error.message})`)
    throw error
  }
}

/** The lock is still ours: our transaction is open and still holds the row as we wrote it. */
export async function clusterLockHeld(conn: Connection, lock: ClusterLock): Promise<string | undefined> {
  try {
    const rows = (await timedQuery(conn, 'SELECT updated_at FROM cell_mappings WHERE id = ?', [lock.id], 'cell_mappings')) as Array<{updated_at: string | null}>
    if (rows[0]?.updated_at !== lock.mark) return 'its transaction on nova_api.cell_mappings is no longer open (the node left the cluster or aborted it)'
    return undefined
  } catch (error) {
    return `its transaction on nova_api.cell_mappings was lost (${error instanceof Error ? error.message : String(error)})`
  }
}

export async function releaseClusterLock(conn: Connection): Promise<void> {
  await rollbackQuietly(conn)
}

async function rollbackQuietly(conn: Connection): Promise<void> {
  try {
    await timedQuery(conn, 'ROLLBACK')
  } catch {
    // a lost session is rolled back by the server, on every node
  }
}
