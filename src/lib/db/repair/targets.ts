/**
 * Where a repair writes: the nova_api and placement URLs from the same resolution as every live read
 * (config/resolve.ts), and each cell's URL from nova_api.cell_mappings unless overridden (--cell-db).
 */
import type {SourceOptions} from '../../cli/source-flags.js'
import {resolveConnections} from '../../config/resolve.js'
import {CloudctlError, ExitCode} from '../../errors.js'
import type {DbKey} from '../../repairs/plan.js'
import {type Connection, closeConnection, openConnection} from '../connection.js'
import {parseDbUrl} from '../url.js'
import {REPAIR_LOCK_NAME} from './executor.js'

export interface RepairTargets {
  apiDb: string
  placementDb: string
  /** cell uuid -> {name, url}; url null when cell_mappings has none. */
  cells: Map<string, {name: string | null; url: string | null}>
}

export async function resolveRepairTargets(opts: SourceOptions): Promise<RepairTargets> {
  const r = resolveConnections(opts)
  const conn = await openConnection(r.apiDb, {label: 'nova_api'})
  try {
    const [rows] = await conn.query('SELECT uuid, name, database_connection FROM cell_mappings ORDER BY id')
    const cells = new Map<string, {name: string | null; url: string | null}>()
    for (const row of rows as Array<{uuid: string; name: string | null; database_connection: string | null}>) {
      const override = r.cellDb[row.uuid] ?? (row.name === null ? undefined : r.cellDb[row.name])
      cells.set(row.uuid, {name: row.name, url: override ?? fillTemplate(row.database_connection, r.novaConfDatabase)})
    }
    return {apiDb: r.apiDb, placementDb: r.placementDb, cells}
  } finally {
    await closeConnection(conn)
  }
}

/** cell_mappings may hold a template ({username}, {password}, {hostname}, ...) filled from [database] connection. */
function fillTemplate(url: string | null, base: string | undefined): string | null {
  if (url === null || !url.includes('{') || base === undefined) return url
  try {
    const b = new URL(base.replace(/^[a-z0-9+]+:\/\//i, 'mysql://'))
    const scheme = /^([a-z0-9+]+):\/\//i.exec(base)?.[1] ?? 'mysql'
    const values: Record<string, string> = {
      scheme,
      username: decodeURIComponent(b.username),
      password: decodeURIComponent(b.password),
      hostname: b.hostname,
      port: b.port,
      path: b.pathname.replace(/^\//, ''),
      query: b.search.replace(/^\?/, ''),
      fragment: b.hash.replace(/^#/, ''),
    }
    return url.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m)
  } catch {
    return url
  }
}

export function connectorFor(t: RepairTargets, labels: Record<string, string>): (db: DbKey) => Promise<Connection> {
  return async (db: DbKey) => {
    if (db === 'nova_api') return openConnection(t.apiDb, {label: 'nova_api'})
    if (db === 'placement') return openConnection(t.placementDb, {label: 'placement'})
    const uuid = db.slice('cell:'.length)
    const cell = t.cells.get(uuid)
    if (!cell || !cell.url)
      throw new CloudctlError(`${labels[db] ?? db} has no database connection in cell_mappings`, {
        exitCode: ExitCode.CONFIG,
        code: 'CellUnavailable',
        hint: 'Pass --cell-db NAME=URL for it, or fix cell_mappings.',
      })
    return openConnection(cell.url, {label: labels[db] ?? `cell ${cell.name ?? uuid}`})
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
