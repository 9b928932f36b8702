/**
 * Where a repair writes: the nova_api and placement URLs from the same resolution as every live read
 * (config/resolve.ts), and each cell's URL from nova_api.cell_mappings unless overridden (--cell-db).
 */
import type {SourceOptions} from '../../snapshot/source.js'
import {resolveConnections} from '../../config/resolve.js'
import {CloudctlError, ExitCode} from '../../errors.js'
import type {DbKey} from '../../repairs/plan.js'
import {type Connection, closeConnection, connectionContext, openConnection, queryWithin} from '../connection.js'
import {dbTimeouts} from '../timeouts.js'
import {formatTemplatedDbUrl} from '../url-template.js'
import {parseDbUrl} from '../url.js'
import {confSyncWaits} from '../session.js'
import {REPAIR_LOCK_NAME} from './executor.js'

export interface RepairTargets {
  apiDb: string
  placementDb: string
  /** cell uuid -> {name, url}; url null when cell_mappings has none (or its template cannot be filled: error). */
  cells: Map<string, {name: string | null; url: string | null; error?: CloudctlError}>
  /** nova.conf's wsrep_sync_wait per kind of database (session.ts), as the audit's read used. */
  syncWaits?: ReturnType<typeof confSyncWaits>
}

export async function resolveRepairTargets(opts: SourceOptions): Promise<RepairTargets> {
  const r = resolveConnections(opts)
  const syncWaits = confSyncWaits(r)
  const conn = await openConnection(r.apiDb, {label: 'nova_api', wsrepSyncWait: syncWaits.api})
  try {
    const rows = await queryWithin(
      conn,
      'SELECT uuid, name, database_connection FROM cell_mappings ORDER BY id',
      [],
      dbTimeouts().readIdleMs,
      connectionContext(conn, 'cell_mappings'),
    )
    const cells: RepairTargets['cells'] = new Map()
    for (const row of rows as Array<{uuid: string; name: string | null; database_connection: string | null}>) {
      const override = r.cellDb[row.uuid] ?? (row.name === null ? undefined : r.cellDb[row.name])
      if (override !== undefined || row.database_connection === null) {
        cells.set(row.uuid, {name: row.name, url: override ?? null})
        continue
      }
      // The same builder as the audit's read (capture.ts): a repair writes where the audit read.
      try {
        cells.set(row.uuid, {
          name: row.name,
          url: formatTemplatedDbUrl(row.database_connection, r.novaConfDatabase, `cell ${row.name ?? row.uuid} database_connection`),
        })
      } catch (error) {
        // Only a failure for the cells the plan writes to: the connector throws it when asked.
        if (!(error instanceof CloudctlError)) throw error
        cells.set(row.uuid, {name: row.name, url: null, error})
      }
    }
    return {apiDb: r.apiDb, placementDb: r.placementDb, cells, syncWaits}
  } finally {
    await closeConnection(conn)
  }
}

export function connectorFor(t: RepairTargets, labels: Record<string, string>): (db: DbKey) => Promise<Connection> {
  return async (db: DbKey) => {
    const w = t.syncWaits ?? {}
    if (db === 'nova_api') return openConnection(t.apiDb, {label: 'nova_api', wsrepSyncWait: w.api})
    if (db === 'placement') return openConnection(t.placementDb, {label: 'placement', wsrepSyncWait: w.placement})
    const uuid = db.slice('cell:'.length)
    const cell = t.cells.get(uuid)
    if (cell?.error) throw cell.error
    if (!cell || !cell.url)
      throw new CloudctlError(`${labels[db] ?? db} has no database connection in cell_mappings`, {
        exitCode: ExitCode.CONFIG,
        code: 'CellUnavailable',
        hint: 'Pass --cell-db NAME=URL for it, or fix cell_mappings.',
      })
    return openConnection(cell.url, {label: labels[db] ?? `cell ${cell.name ?? uuid}`, wsrepSyncWait: w.cell})
  }
}

/**
 * The GET_LOCK name for repairs of this cloud: one per nova_api database, so that two repairs of one
 * cloud exclude each other while clouds that share a database server (a staging copy next to
 * production, test clouds) do not. MariaDB lock names are at most 64 characters.
 */
export function repairLockName(t: Pick<RepairTargets, 'apiDb'>): string {
  const db = parseDbUrl(t.apiDb, 'nova_api database URL').database ?? ''
  return `${REPAIR_LOCK_NAME}:${db}`.slice(0, 64)
}
