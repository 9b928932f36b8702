import {humanText} from '../output/terminal.js'
import type {ProgressEvent, ProgressSink} from '../snapshot/source.js'

/*
 * One progress line on stderr for the phase a command is in (reading the databases or a file,
 * auditing, planning, simulating), redrawn in place and erased before the report: only on a TTY, so
 * that pipes, runbooks and CI logs get none and stdout is never touched. Written here rather than
 * with a progress library: one line, clipped to the terminal and cleared before any output, is all
 * it needs to do, and every text passes through humanText (cell names come from the databases).
 */

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

function draw(stream: NodeJS.WriteStream, text: string): void {
  const width = stream.columns > 0 ? stream.columns - 1 : 79
  // Never wider than the terminal: a wrapped line cannot be redrawn in place.
  stream.write(`\r\u001B[2K${Array.from(humanText(text)).slice(0, width).join('')}`)
  active = stream
}

/** A new phase: its line replaces the previous one at once. */
export function showPhase(text: string, stream: NodeJS.WriteStream = process.stderr): void {
  if (enabled && stream.isTTY) draw(stream, `${text} ...`)
}

/**
 * The reading phase of the live databases: the line follows the read from table to table and
 * database to database, redrawn at most every 100 ms.
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
    draw(stream, `reading ${e.database}: ${e.table} ${e.rows.toLocaleString('en-US')} rows (${done.size} tables read)`)
  }
}
