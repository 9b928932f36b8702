import {describe, expect, it} from 'vitest'

import {ProgressLine} from '../../src/lib/cli/progress-printer.js'

const ERASE = '\r\u001B[2K'

/** A stand-in for process.stderr: what was written, whether it is a terminal, how wide. */
function fakeStream(isTTY: boolean, columns = 80): {stream: NodeJS.WriteStream; written: string[]} {
  const written: string[] = []
  const stream = {isTTY, columns, write: (s: string) => written.push(s) > 0}
  return {stream: stream as unknown as NodeJS.WriteStream, written}
}

describe('progress line', () => {
  it('a phase redraws the one line in place, and clear erases it once', () => {
    const {stream, written} = fakeStream(true)
    const p = new ProgressLine(true, stream)
    p.phase('reading demo.yaml')
    p.phase('auditing leaks')
    expect(written).toEqual([`${ERASE}reading demo.yaml ...`, `${ERASE}auditing leaks ...`])
    p.clear()
    p.clear()
    expect(written.slice(2)).toEqual([ERASE])
  })

  it('the database read redraws the line with the database, table and counts', () => {
    const {stream, written} = fakeStream(true)
    new ProgressLine(true, stream).sink()({database: 'cell1', table: 'instances', rows: 12_345, done: true})
    // (Later events within 100 ms are skipped; how often it redraws is not asserted: it depends on the clock.)
    expect(written).toEqual([`${ERASE}reading cell1: instances 12,345 rows (1 tables read)`])
  })

  it('nothing at all when stderr is not a terminal (pipes, CI logs)', () => {
    const {stream, written} = fakeStream(false)
    const p = new ProgressLine(true, stream)
    p.phase('auditing leaks')
    p.sink()({database: 'nova_api', table: 'cell_mappings', rows: 2, done: true})
    p.clear()
    expect(written).toEqual([])
  })

  it('nothing at all when disabled (-q, or machine output such as -f json)', () => {
    const {stream, written} = fakeStream(true)
    const p = new ProgressLine(false, stream)
    p.phase('auditing leaks')
    p.sink()({database: 'nova_api', table: 'cell_mappings', rows: 2, done: true})
    p.clear()
    expect(written).toEqual([])
  })

  it("one command's line is its own: a quiet command neither draws nor erases another's", () => {
    const {stream, written} = fakeStream(true)
    const shown = new ProgressLine(true, stream)
    const quiet = new ProgressLine(false, stream)
    shown.phase('auditing leaks')
    quiet.phase('planning')
    quiet.clear()
    expect(written).toEqual([`${ERASE}auditing leaks ...`])
    shown.clear()
    expect(written).toEqual([`${ERASE}auditing leaks ...`, ERASE])
  })

  it('never wider than the terminal, and no control character of a database name reaches it', () => {
    const {stream, written} = fakeStream(true, 20)
    new ProgressLine(true, stream).sink()({database: 'cell\u001B]0;owned\u0007one', table: 'instances', rows: 1, done: false})
    const line = written[0].slice(ERASE.length)
    expect(Array.from(line).length).toBeLessThanOrEqual(19)
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001F\u007F]/)
  })
})
