/**
 * Which database a cell (and nova_api, placement) was really read from, and on Galera which node. Two cell mappings (or a --cell-db override and a
 * mapping) can reach one database through different URLs, host names or proxies; what the server
 * says about itself and DATABASE() do not depend on the way in. The repair guard
 * (checks/cells/identity.ts) compares these records across cells.
 */
import type {CellDatabaseIdentity} from '../domain/snapshot.js'
import {sessionOf} from './connection.js'
import type {Reader} from './table-reader.js'
import type {DbUrl} from './url.js'

const VARIABLES = ['hostname', 'port', 'server_id', 'server_uuid']

const text = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v))
const int = (v: unknown): number | null => {
  const n = Number(v)
  return v === null || v === undefined || v === '' || !Number.isSafeInteger(n) ? null : n
}

/** Inside the cell's read transaction: one SHOW VARIABLES (no privilege needed) and DATABASE(). */
export async function readDatabaseIdentity(r: Reader, url: DbUrl): Promise<CellDatabaseIdentity> {
  const where = url.socketPath ?? `${url.host}:${url.port}`
  // SHOW VARIABLES rather than SELECT @@server_uuid: MariaDB has no such variable and would fail.
  const vars = new Map(
    (await r.query('variables', `SHOW VARIABLES WHERE Variable_name IN (${VARIABLES.map(() => '?').join(', ')})`, VARIABLES)).map((row) => [
      String(row.Variable_name).toLowerCase(),
      row.Value,
    ]),
  )
  const [db] = await r.query('database', 'SELECT DATABASE() AS db')
  const database = text(db?.db)
  const session = sessionOf(r.conn)
  return {
    address: `${where}/${database ?? url.database ?? ''}`,
    database,
    hostname: text(vars.get('hostname')),
    port: int(vars.get('port')),
    server_id: int(vars.get('server_id')),
    server_uuid: text(vars.get('server_uuid')),
    ...(session.wsrep ? {wsrep: {node_name: session.nodeName, sync_wait: session.syncWait, cluster_uuid: session.clusterUuid ?? null}} : {}),
  }
}
