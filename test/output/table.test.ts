import Table from 'cli-table3'
import stringWidth from 'string-width'
import {describe, expect, it} from 'vitest'

import {asciiLocale, fixedDisplay, terminalDisplay} from '../../src/lib/output/display.js'
import {drawTable, NARROW_TEXT, renderTable, textWidth} from '../../src/lib/output/table.js'

const UUID = '9c089546-670c-4fce-b963-d08860d435c7'
const LONG = `Instance ${UUID} is deleted in cell cell1 but still holds VCPU=2, MEMORY_MB=4096, DISK_GB=40 on cmp-r1-04.`
const head = ['Severity', 'Code', 'Subject', 'Finding']
const rows = [['error', 'allocation.consumer-deleted', `rp=${UUID}`, LONG]]
const width = (t: string) => Math.max(...t.split('\n').map((l) => l.length))
const words = (t: string) =>
  t
    .replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ')
    .split(/\s+/)
    .filter(Boolean)

describe('renderTable', () => {
  it('keeps a finding on one line when --max-width 0 asks for no fitting', () => {
    const t = renderTable(fixedDisplay(0), head, rows, {wrap: [3]})
    expect(t.split('\n').filter((l) => l.includes('allocation.consumer-deleted'))[0]).toContain(LONG)
  })

  it('fits piped output to $COLUMNS, and --max-width wins over it', () => {
    // vitest's stdout is no terminal: $COLUMNS is the first width asked.
    const piped = terminalDisplay(undefined, {...process.env, COLUMNS: '140'})
    expect(width(renderTable(piped, head, rows, {wrap: [3]}))).toBeLessThanOrEqual(140)
    expect(width(renderTable(piped, head, rows, {wrap: [3]}))).toBeGreaterThan(130)
    expect(width(renderTable(terminalDisplay(100, {...process.env, COLUMNS: '140'}), head, rows, {wrap: [3]}))).toBeLessThanOrEqual(100)
    expect(terminalDisplay(0, {COLUMNS: '140'}).width).toBeUndefined()
  })

  it("draws ASCII borders when the command's locale is not UTF-8", () => {
    const t = renderTable(terminalDisplay(80, {LANG: 'C'}), ['a', 'b'], [['x', 'y']])
    expect(t.split('\n')[0]).toBe('+---+---+')
    expect(renderTable(terminalDisplay(80, {LANG: 'en_US.UTF-8'}), ['a', 'b'], [['x', 'y']]).split('\n')[0]).toBe('┌───┬───┐')
  })

  it('wraps only the free-text column to the terminal width, losing no word and no uuid', () => {
    const t = renderTable(fixedDisplay(140), head, rows, {wrap: [3]})
    expect(width(t)).toBeLessThanOrEqual(140)
    expect(width(t)).toBeGreaterThan(130)
    expect(t.split('\n').length).toBeGreaterThan(5)
    expect(words(t)).toEqual(expect.arrayContaining(words(LONG)))
    expect(t).toContain(UUID)
    // the subject column is not wrapped
    expect(t).toContain(`rp=${UUID}`)
  })

  it('leaves a table that already fits alone', () => {
    const t = renderTable(fixedDisplay(120), ['a', 'b'], [['x', 'short text']], {wrap: [1]})
    expect(t).toBe(renderTable(fixedDisplay(0), ['a', 'b'], [['x', 'short text']]))
  })

  it('keeps a uuid whole while other columns can give way (key= breaks off first)', () => {
    const t = renderTable(fixedDisplay(110), head, rows, {wrap: [3]})
    expect(width(t)).toBeLessThanOrEqual(110)
    expect(t).toContain(UUID)
  })

  it('fits even a width no uuid fits in, losing nothing (words broken, never truncated)', () => {
    const t = renderTable(fixedDisplay(60), head, rows, {wrap: [3]})
    expect(width(t)).toBeLessThanOrEqual(60)
    expect(t).not.toContain('…')
    const joined = t
      .split('\n')
      .map((l) => l.split('│').map((c) => c.trim()))
      .filter((c) => c.length > 3)
    const column = (i: number) => joined.map((r) => r[i] ?? '').join('')
    expect(column(3)).toContain(`rp=${UUID}`)
    expect(column(2)).toContain('allocation.consumer-deleted')
  })

  it('shows a row blob wrapped into a narrow column by its ends, with the count of lines left out', () => {
    // Spaced as nova writes its blobs, so no single word is long enough to be elided on its own.
    const blob = JSON.stringify({cells: Array.from({length: 40}, (_, i) => ({id: i, cpuset: [i, i + 1], pinned_cpus: []}))}).replace(/([,:])/g, '$1 ')
    const t = renderTable(fixedDisplay(80), ['step', 'before', 'after'], [['1 restore compute_nodes', blob, blob]])
    expect(width(t)).toBeLessThanOrEqual(80)
    const lines = t.split('\n')
    // 24 lines a cell at most, plus the borders and the heading.
    expect(lines.length).toBeLessThanOrEqual(24 + 4)
    expect(t).toMatch(/…\[\d+ more/) // the marker itself is cut to the column
    // Both ends of the blob are still shown.
    expect(t).toContain('{"cells": ')
    expect(t.replace(/[│\s]/g, '')).toContain('[]}]}')
  })
})

describe('drawTable draws what cli-table3 draws (its public API, as the oracle)', () => {
  // Deterministic variety: several lines, colour, wide characters, empty cells, overlong lines.
  const RED = '\u001B[31m'
  const OFF = '\u001B[39m'
  const cell = (i: number, col: number): string => {
    const k = (i * 7 + col * 13) % 11
    if (k === 0) return ''
    if (k === 1) return `${RED}error${OFF}`
    if (k === 2) return `cell=cell${i}\nhost=cmp-${i}\nrp=${UUID}`
    if (k === 3) return `宿主机-${i}`
    if (k === 4) return `${RED}warning${OFF} allocation.consumer-deleted\nhost=cmp-${i}`
    if (k === 5) return LONG.slice(0, 20 + (i % 60))
    return `${i}-${col}`
  }
  const body = Array.from({length: 53}, (_, i) => [0, 1, 2, 3].map((col) => cell(i, col)))
  const heads = head.map((h) => `\u001B[1m${h}\u001B[22m`)
  const oracle = (h: string[], rows: string[][], widths?: number[], align?: Array<'left' | 'right' | 'center'>) => {
    const t = new Table({head: h, style: {head: [], border: []}, wordWrap: false, ...(widths ? {colWidths: widths} : {}), ...(align ? {colAligns: align} : {})})
    for (const r of rows) t.push(r)
    return t.toString()
  }
  // cli-table3 keeps the colour codes of a line it cuts; drawTable drops them (a cut may split one).
  // eslint-disable-next-line no-control-regex
  const plain = (t: string) => t.replace(/\u001B\[[0-9;]*m/g, '')

  it.each([
    ['natural widths', undefined, undefined],
    ['aligned columns', undefined, ['left', 'right', 'center', 'left'] as Array<'left' | 'right' | 'center'>],
  ])('the same text: %s', (_name, widths, align) => {
    expect(drawTable(heads, body, widths, align, 'unicode')).toBe(oracle(heads, body, widths, align))
  })

  it('the same text once colour is taken away: fitted widths, lines longer than a column cut with …', () => {
    const widths = [9, 14, 20, 30]
    expect(plain(drawTable(heads, body, widths, undefined, 'unicode'))).toBe(plain(oracle(heads, body, widths)))
  })

  it('a header alone, and rows without a header', () => {
    expect(drawTable(['a', 'bb'], [], undefined, undefined, 'unicode')).toBe(oracle(['a', 'bb'], []))
    expect(
      drawTable(
        [],
        [
          ['x', 'y\nz'],
          ['1', '2'],
        ],
        undefined,
        undefined,
        'unicode',
      ),
    ).toBe(
      oracle(
        [],
        [
          ['x', 'y\nz'],
          ['1', '2'],
        ],
      ),
    )
  })

  it('ASCII borders: the same layout, character for character', () => {
    const unicode = drawTable(heads, body, undefined, undefined, 'unicode')
    const ascii = drawTable(heads, body, undefined, undefined, 'ascii')
    expect(ascii).toBe(
      unicode
        .replace(/[┌┬┐├┼┤└┴┘]/g, '+')
        .replace(/─/g, '-')
        .replace(/│/g, '|'),
    )
    expect(ascii).not.toMatch(/[\u2500-\u257F]/)
  })
})

describe('the locale decides the borders', () => {
  it.each([
    [{LANG: 'C'}, true],
    [{LANG: 'POSIX'}, true],
    [{LANG: 'en_US.ISO-8859-1'}, true],
    [{LANG: 'en_US.UTF-8'}, false],
    [{LANG: 'C.utf8'}, false],
    [{LC_ALL: 'C', LANG: 'en_US.UTF-8'}, true],
    [{LC_CTYPE: 'en_US.UTF-8', LANG: 'C'}, false],
    [{}, false],
  ])('%j: ascii=%s', (env, ascii) => {
    expect(asciiLocale(env)).toBe(ascii)
  })
})

describe('renderTable on long tables', () => {
  it('fits 5,000 rows of 50 words each (more words than a call takes arguments), every row drawn', () => {
    const message = Array.from({length: 50}, (_, i) => `w${i}`).join(' ')
    const many = Array.from({length: 5000}, (_, i) => ['warning', `code-${i}`, `host=cmp-${i}`, message])
    const t = renderTable(fixedDisplay(120), head, many, {wrap: [3]})
    expect(width(t)).toBeLessThanOrEqual(120)
    expect(t.split('\n').filter((l) => /│ warning/.test(l))).toHaveLength(5000)
  }, 120_000)
})

describe('textWidth', () => {
  it('counts each character of the fast path one column, as string-width does', () => {
    let n = 0
    for (let code = 0; code <= 0xffff; code++) {
      const ch = String.fromCharCode(code)
      if (!NARROW_TEXT.test(ch)) continue
      n++
      expect(stringWidth(ch), code.toString(16)).toBe(1)
      expect(textWidth(`a${ch}${ch}b`), code.toString(16)).toBe(4)
    }
    expect(n).toBe(95 + 7 + 160)
  })

  it.each([
    '',
    'host=cmp-1.example.org',
    '\u001B[31merror\u001B[39m allocation.consumer-deleted',
    '宿主机-1',
    'emoji 🚀 and #️⃣',
    'e\u0301 combining',
    'compute-0001  VCPU=2 → 4 … ×2',
  ])('%j as string-width measures it', (text) => {
    expect(textWidth(text)).toBe(stringWidth(text))
  })
})
