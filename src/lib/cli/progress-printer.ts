import {humanText} from '../output/terminal.js'
import type {ProgressEvent, ProgressSink} from '../snapshot/source.js'

// Off with -q/--quiet and with machine output (-f json...): set once by the base command.
let enabled = true
// The stream holding a progress line not yet cleared (the next report line must not land on it).
let active: NodeJS.WriteStream | undefined

export function setProgressEnabled(on: boolean): void {
  enabled = on
}

/** Erase the progress line, if one is showing: called before any report or diagnostic line. */
export function clearProgress(): void {
  if (!active) return
  active.write('\r\u001B[2K')
  active = undefined
}

/**
 * One progress line on stderr, redrawn in place as the read goes from table to table and database to
 * database, and erased before the report; only on a TTY, so that pipes, runbooks and CI logs get
 * none, and stdout is never touched.
 */
export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  if (!enabled || !stream.isTTY) return () => {}
  let last = 0
  const done = new Set<string>()
  return (e: ProgressEvent) => {
    if (e.done) done.add(`${e.database}/${e.table}`)
    const now = Date.now()
    if (now - last < 100) return
    last = now
    // The database label can be a cell name from cell_mappings.
    const text = humanText(`reading ${e.database}: ${e.table} ${e.rows.toLocaleString('en-US')} rows (${done.size} tables read)`)
    const width = stream.columns > 0 ? stream.columns - 1 : 79
    // Never wider than the terminal: a wrapped line cannot be redrawn in place.
    stream.write(`\r\u001B[2K${Array.from(text).slice(0, width).join('')}`)
    active = stream
  }
}
