import {humanText} from '../output/terminal.js'
import type {ProgressEvent, ProgressSink} from '../snapshot/source.js'

/*
 * One progress line on stderr for the phase a command is in (reading the databases or a file,
 * auditing, planning, simulating), redrawn in place and erased before the report: only on a TTY, so
 * that pipes, runbooks and CI logs get none and stdout is never touched. Written here rather than
 * with a progress library: one line, clipped to the terminal and cleared before any output, is all
 * it needs to do, and every text passes through humanText (cell names come from the databases).
 */

/** The progress line of one command: the base command makes one per command and clears it before every report line. */
export class ProgressLine {
  // The progress line not yet cleared (the next report line must not land on it).
  private showing = false

  /** `enabled`: off with -q/--quiet and with machine output (-f json...). */
  constructor(
    private readonly enabled: boolean,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  /** Erase the progress line, if one is showing: called before any report or diagnostic line. */
  clear(): void {
    if (!this.showing) return
    this.stream.write('\r\u001B[2K')
    this.showing = false
  }

  /** A new phase: its line replaces the previous one at once. */
  phase(text: string): void {
    if (this.on()) this.draw(`${text} ...`)
  }

  /**
   * The reading phase of the live databases: the line follows the read from table to table and
   * database to database, redrawn at most every 100 ms.
   */
  sink(): ProgressSink {
    if (!this.on()) return () => {}
    let last = 0
    const done = new Set<string>()
    return (e: ProgressEvent) => {
      if (e.done) done.add(`${e.database}/${e.table}`)
      const now = Date.now()
      if (now - last < 100) return
      last = now
      this.draw(`reading ${e.database}: ${e.table} ${e.rows.toLocaleString('en-US')} rows (${done.size} tables read)`)
    }
  }

  private on(): boolean {
    return this.enabled && Boolean(this.stream.isTTY)
  }

  private draw(text: string): void {
    const width = this.stream.columns > 0 ? this.stream.columns - 1 : 79
    // Never wider than the terminal: a wrapped line cannot be redrawn in place.
    this.stream.write(`\r\u001B[2K${Array.from(humanText(text)).slice(0, width).join('')}`)
    this.showing = true
  }
}
