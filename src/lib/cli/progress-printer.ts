import {humanText} from '../output/terminal.js'
import type {ProgressEvent, ProgressSink} from './progress.js'

/**
 * Rows-per-table progress on stderr, redrawn in place on a TTY; silent otherwise, so runbooks and
 * CI logs stay clean and stdout is never touched.
 */
export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): ProgressSink {
  if (!stream.isTTY) return () => {}
  let last = 0
  return (e: ProgressEvent) => {
    const now = Date.now()
    if (!e.done && now - last < 100) return
    last = now
    // The database label can be a cell name from cell_mappings.
    const text = humanText(`${e.database}: ${e.table} ${e.rows.toLocaleString('en-US')} rows${e.done ? ' ✓' : ''}`)
    stream.write(`\r\u001B[2K${text}${e.done ? '\n' : ''}`)
  }
}
