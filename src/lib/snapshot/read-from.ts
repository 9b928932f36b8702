/**
 * Which server, and on Galera which node, each database of a live snapshot was read from (the
 * snapshot header's source.databases and each cell's identity): `snapshot show` and `snapshot
 * capture` report it, so that an audit read through a lagging or wrong node can be told apart.
 */
import type {CellDatabaseIdentity, Snapshot} from '../domain/snapshot.js'

export interface ReadFrom {
  /** 'nova_api', 'placement', or 'cell NAME'. */
  database: string
  /** host:port/database (or socket/database) as connected. */
  address: string
  /** @@hostname and @@port of the server that answered. */
  hostname: string | null
  port: number | null
  /** wsrep_node_name of the Galera node (null: not a Galera node). */
  wsrep_node_name: string | null
  /** The wsrep_sync_wait the read used (null: not a Galera node). */
  wsrep_sync_wait: number | null
}

function entry(database: string, id: CellDatabaseIdentity): ReadFrom {
  return {
    database,
    address: id.address,
    hostname: id.hostname,
    port: id.port,
    wsrep_node_name: id.wsrep?.node_name ?? null,
    wsrep_sync_wait: id.wsrep?.sync_wait ?? null,
  }
}

/** Empty for a snapshot that records none (files from older versions, generated clouds). */
export function readFrom(s: Snapshot): ReadFrom[] {
  const out: ReadFrom[] = []
  const dbs = s.source.databases
  if (dbs) out.push(entry('nova_api', dbs.nova_api), entry('placement', dbs.placement))
  for (const c of s.cells) if (c.identity) out.push(entry(`cell ${c.name ?? c.uuid}`, c.identity))
  return out
}
