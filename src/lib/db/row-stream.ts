/**
 * Streaming a query's rows: each row handed on as the driver parses its packet, as an object
 * (eachRow) or as an array made into a snapshot row (eachDecodedRow, row-converter.ts). Only
 * mysql2's public query options and events are used (rowsAsArray, 'fields', 'result'), so a patch
 * release of the driver cannot change what is read.
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
export function eachRow<T = Record<string, unknown>>(
  conn: Connection,
  sql: string,
  params: unknown[],
  onRow: (row: T) => void,
  ctx: DbErrorContext = {},
  asArrays = false,
): Promise<number> {
  return stream(conn, sql, params, onRow, ctx, asArrays, undefined)
}

/** How eachDecodedRow turns the driver's row (an array in SELECT order) into a row. */
export interface PacketDecoder<T> {
  /** The SELECT's column names, in order: checked against the result's before the first row. */
  names: readonly string[]
  decode(columns: unknown[]): T
}

/** As eachRow, each row the driver parsed as an array made into a row by `decoder`. */
export function eachDecodedRow<T>(
  conn: Connection,
  sql: string,
  params: unknown[],
  decoder: PacketDecoder<T>,
  onRow: (row: T) => void,
  ctx: DbErrorContext = {},
): Promise<number> {
  return stream(conn, sql, params, onRow, ctx, true, decoder)
}

function stream<T>(
  conn: Connection,
  sql: string,
  params: unknown[],
  onRow: (row: T) => void,
  ctx: DbErrorContext,
  asArrays: boolean,
  decoder: PacketDecoder<T> | undefined,
): Promise<number> {
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
    q.on('fields', (fields: ReadonlyArray<{name: string}>) => {
      activity++
      if (decoder && failed === undefined) {
        try {
          checkColumns(fields, decoder.names)
        } catch (error) {
          failed = error
        }
      }
    })
    q.on('result', (row) => {
      activity++
      if (failed !== undefined) return
      try {
        onRow(decoder ? decoder.decode(row as unknown as unknown[]) : (row as T))
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
