import {afterEach, describe, expect, it} from 'vitest'

import {clearProgress, setProgressEnabled, showPhase, stderrProgress} from '../../src/lib/cli/progress-printer.js'

const ERASE = '\r\u001B[2K'

/** A stand-in for process.stderr: what was written, whether it is a terminal, how wide. */
function fakeStream(isTTY: boolean, columns = 80): {stream: NodeJS.WriteStream; written: string[]} {
  const written: string[] = []
  const stream = {isTTY, columns, write: (s: string) => written.push(s) > 0}
  return {stream: stream as unknown as NodeJS.WriteStream, written}
}

describe('progress printer', () => {
  afterEach(() => {
    clearProgress()
    setProgressEnabled(true)
  })

  it('a phase redraws the one line in place, and clearProgress erases it once', () => {
    const {stream, written} = fakeStream(true)
    showPhase('reading demo.yaml', stream)
    showPhase('auditing leaks', stream)
    expect(written).toEqual([`${ERASE}reading demo.yaml ...`, `${ERASE}auditing leaks ...`])
    clearProgress()
    clearProgress()
    expect(written.slice(2)).toEqual([ERASE])
  })

  it('the database read redraws the line with the database, table and counts', () => {
    const {stream, written} = fakeStream(true)
    stderrProgress(stream)({database: 'cell1', table: 'instances', rows: 12_345, done: true})
    // (Later events within 100 ms are skipped; how often it redraws is not asserted: it depends on the clock.)
    expect(written).toEqual([`${ERASE}reading cell1: instances 12,345 rows (1 tables read)`])
  })

  it('nothing at all when stderr is not a terminal (pipes, CI logs)', () => {
    const {stream, written} = fakeStream(false)
    showPhase('auditing leaks', stream)
    stderrProgress(stream)({database: 'nova_api', table: 'cell_mappings', rows: 2, done: true})
    clearProgress()
    expect(written).toEqual([])
  })

  it('nothing at all when disabled (-q, or machine output such as -f json)', () => {
    setProgressEnabled(false)
    const {stream, written} = fakeStream(true)
    showPhase('auditing leaks', stream)
    stderrProgress(stream)({database: 'nova_api', table: 'cell_mappings', rows: 2, done: true})
    clearProgress()
    expect(written).toEqual([])
  })

  it('never wider than the terminal, and no control character of a database name reaches it', () => {
    const {stream, written} = fakeStream(true, 20)
    stderrProgress(stream)({database: 'cell\u001B]0;owned\u0007one', table: 'instances', rows: 1, done: false})
    const line = written[0].slice(ERASE.length)
    expect(Array.from(line).length).toBeLessThanOrEqual(19)
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001F\u007F]/)
  })
})
