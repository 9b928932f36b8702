/**
 * The client-side bound of a repair's statements, per connection: the executor sets it once a
 * session is open (the statement limit plus a margin), shortens it while placement holds rows, and
 * every step's statement runs within it (connection.ts queryWithin).
 */
import {type Connection, connectionContext, queryWithin} from '../connection.js'

const bounds = new WeakMap<Connection, number>()

/** Every later timedQuery on `conn` gives up after `ms`. */
export function boundQueries(conn: Connection, ms: number): void {
  bounds.set(conn, ms)
}

/** A statement within its connection's bound; errors name the connection's database and `table`. */
export function timedQuery(conn: Connection, sql: string, params: unknown[] = [], table?: string): Promise<unknown> {
  return queryWithin(conn, sql, params, bounds.get(conn), connectionContext(conn, table))
}
