/**
 * Streaming a query's rows: each row handed on as the driver reads its packet, parsed by the
 * driver (eachRow) or decoded from the packet's bytes (eachDecodedRow, row-decoder.ts).
 */
import {type Connection, type DbErrorContext, mapDbError, rawConnection} from './connection.js'
import {dbTimeouts, noAnswerError} from './timeouts.js'

/**
 * Runs a query and hands each row to `onRow` as the driver parses it; resolves with the row count.
 *
 * Nothing is buffered: a row is consumed synchronously, in the same tick as the bytes that carried
 * it, so memory stays bounded on a 1M-row table. No object stream and no promise per
 * row (with them, a third of the CPU of a capture went there). `asArrays`: each row is an array in
 * SELECT order, not an object keyed by column name. If `onRow` throws, the
 * rest of the result is drained unread and the query rejects with that error.
 */
export function eachRow<T = Record<string, unknown>>(conn: Connection, sql: string, params: unknown[], onRow: (row: T) => void, ctx: DbErrorContext = {}, asArrays = false): Promise<number> {
  return stream(conn, sql, params, onRow, ctx, asArrays, undefined)
}

/** How eachDecodedRow turns a row packet into a row. */
export interface PacketDecoder<T> {
  /** The SELECT's column names, in order: checked against the result's before the first row. */
  names: readonly string[]
  /** The row whose first column starts at `offset` in `buffer`. */
  decode(buffer: Buffer, offset: number): T
}

/**
 * As eachRow, each row made by `decoder` from the bytes of its packet (row-decoder.ts) instead of
 * by the driver. The driver still reads the packets, the column definitions and errors; only its
 * row parser is replaced, on this query alone.
 */
export function eachDecodedRow<T>(conn: Connection, sql: string, params: unknown[], decoder: PacketDecoder<T>, onRow: (row: T) => void, ctx: DbErrorContext = {}): Promise<number> {
  return stream(conn, sql, params, onRow, ctx, true, decoder)
}

interface DriverPacket {
  buffer: Buffer
  offset: number
}

function stream<T>(conn: Connection, sql: string, params: unknown[], onRow: (row: T) => void, ctx: DbErrorContext, asArrays: boolean, decoder: PacketDecoder<T> | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const raw = rawConnection(conn)
    let n = 0
    let failed: unknown
    let settled = false
    // No statement limit on a read (a big cloud's tables stream for minutes), only on the server's
    // silence: a frozen server sends nothing, and the connection is dropped after the idle bound.
    // Checked on a coarse interval against a counter: no timer per row of a 1M-row table.
    const idleMs = dbTimeouts().readIdleMs
    let activity = 0
    let seen = -1
    let quietSince = Date.now()
    const watchdog = setInterval(
      () => {
        const now = Date.now()
        if (activity !== seen) {
          seen = activity
          quietSince = now
        } else if (now - quietSince >= idleMs) {
          failed ??= mapDbError(noAnswerError(idleMs), ctx)
          settle()
          raw.destroy()
        }
      },
      Math.max(50, Math.min(1000, idleMs / 4)),
    )
    const settle = (): void => {
      if (settled) return
      settled = true
      clearInterval(watchdog)
      raw.removeListener('error', onLost)
      if (failed === undefined) resolve(n)
      else reject(failed)
    }
    // A lost connection is reported on the connection, not on a query that has no callback.
    const onLost = (error: unknown): void => {
      failed ??= mapDbError(error, ctx)
      settle()
    }
    raw.on('error', onLost)
    const q = raw.query({sql, rowsAsArray: asArrays}, params)
    q.on('fields', () => activity++)
    // Rows the decoder made: a row the driver parsed itself would mean its internals moved.
    let decoded = 0
    if (decoder) {
      const parser = {
        next(packet: DriverPacket, fields: ReadonlyArray<{name: string}>): T {
          if (decoded === 0) checkColumns(fields, decoder.names)
          decoded++
          return decoder.decode(packet.buffer, packet.offset)
        },
      }
      // mysql2 makes a query's row parser when the column definitions arrive and calls its next()
      // for each row packet; this query's own property hands it ours.
      if (!Object.hasOwn(q, '_rowParser')) throw new Error('mysql2 query has no _rowParser: the packet decoder needs updating for this mysql2')
      Object.defineProperty(q, '_rowParser', {configurable: true, get: () => parser, set: () => {}})
    }
    q.on('result', (row) => {
      activity++
      if (failed !== undefined) return
      if (decoder && decoded !== n + 1) {
        failed = new Error('mysql2 parsed a row itself: the packet decoder needs updating for this mysql2')
        return
      }
      try {
        onRow(row as T)
        n++
      } catch (error) {
        failed = error ?? new Error('row handler failed')
      }
    })
    q.on('error', (error) => {
      failed ??= mapDbError(error, ctx)
    })
    q.on('end', settle)
  })
}

function checkColumns(fields: ReadonlyArray<{name: string}>, names: readonly string[]): void {
  if (fields.length !== names.length || fields.some((f, i) => f.name !== names[i])) {
    throw new Error(`result columns ${fields.map((f) => f.name).join(',')} are not the decoder's ${names.join(',')}`)
  }
}
