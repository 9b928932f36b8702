import {createRequire} from 'node:module'
import {describe, expect, it} from 'vitest'

import {cliTable3Utils, drawTable, NARROW_TEXT, renderTable} from '../../src/lib/output/table.js'

const UUID = '9c089546-670c-4fce-b963-d08860d435c7'
const LONG = `Instance ${UUID} is deleted in cell cell1 but still holds VCPU=2, MEMORY_MB=4096, DISK_GB=40 on cmp-r1-04.`
const head = ['Severity', 'Code', 'Subject', 'Finding']
const rows = [['error', 'allocation.consumer-deleted', `rp=${UUID}`, LONG]]
const width = (t: string) => Math.max(...t.split('\n').map((l) => l.length))
const words = (t: string) => t.replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ').split(/\s+/).filter(Boolean)

describe('renderTable', () => {
  it('keeps a finding on one line when --max-width 0 asks for no fitting', () => {
    const t = renderTable(head, rows, {wrap: [3], maxWidth: 0})
    expect(t.split('\n').filter((l) => l.includes('allocation.consumer-deleted'))[0]).toContain(LONG)
  })

  it('fits piped output to $COLUMNS', () => {
    const saved = process.env.COLUMNS
    try {
      process.env.COLUMNS = '140'
      expect(width(renderTable(head, rows, {wrap: [3]}))).toBeLessThanOrEqual(140)
      expect(width(renderTable(head, rows, {wrap: [3]}))).toBeGreaterThan(130)
    } finally {
      if (saved === undefined) delete process.env.COLUMNS
      else process.env.COLUMNS = saved
    }
  })

  it('wraps only the free-text column to the terminal width, losing no word and no uuid', () => {
    const t = renderTable(head, rows, {wrap: [3], maxWidth: 140})
    expect(width(t)).toBeLessThanOrEqual(140)
    expect(width(t)).toBeGreaterThan(130)
    expect(t.split('\n').length).toBeGreaterThan(5)
    expect(words(t)).toEqual(expect.arrayContaining(words(LONG)))
    expect(t).toContain(UUID)
    // the subject column is not wrapped
    expect(t).toContain(`rp=${UUID}`)
  })

  it('leaves a table that already fits alone', () => {
    const t = renderTable(['a', 'b'], [['x', 'short text']], {wrap: [1], maxWidth: 120})
    expect(t).toBe(renderTable(['a', 'b'], [['x', 'short text']]))
  })

  it('keeps a uuid whole while other columns can give way (key= breaks off first)', () => {
    const t = renderTable(head, rows, {wrap: [3], maxWidth: 110})
    expect(width(t)).toBeLessThanOrEqual(110)
    expect(t).toContain(UUID)
  })

  it('fits even a width no uuid fits in, losing nothing (words broken, never truncated)', () => {
    const t = renderTable(head, rows, {wrap: [3], maxWidth: 60})
    expect(width(t)).toBeLessThanOrEqual(60)
    expect(t).not.toContain('…')
    const joined = t.split('\n').map((l) => l.split('│').map((c) => c.trim())).filter((c) => c.length > 3)
    const column = (i: number) => joined.map((r) => r[i] ?? '').join('')
    expect(column(3)).toContain(`rp=${UUID}`)
    expect(column(2)).toContain('allocation.consumer-deleted')
  })

  it('shows a row blob wrapped into a narrow column by its ends, with the count of lines left out', () => {
    // Spaced as nova writes its blobs, so no single word is long enough to be elided on its own.
    const blob = JSON.stringify({cells: Array.from({length: 40}, (_, i) => ({id: i, cpuset: [i, i + 1], pinned_cpus: []}))}).replace(/([,:])/g, '$1 ')
    const t = renderTable(['step', 'before', 'after'], [['1 restore compute_nodes', blob, blob]], {maxWidth: 80})
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

describe('drawTable in parts (long tables)', () => {
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

  it.each([
    ['natural widths', undefined, undefined],
    ['fitted widths (lines longer than a column are cut)', [9, 14, 20, 30], undefined],
    ['aligned columns', undefined, ['left', 'right', 'center', 'left'] as Array<'left' | 'right' | 'center'>],
  ])('gives the text of one table: %s', (_name, widths, align) => {
    const whole = drawTable(heads, body, widths, align, Number.POSITIVE_INFINITY)
    for (const part of [1, 7, 52]) expect(drawTable(heads, body, widths, align, part)).toBe(whole)
    expect(whole.split('\n').filter((l) => l.startsWith('├'))).toHaveLength(body.length)
  })
})

describe('renderTable on long tables', () => {
  it('fits 5,000 rows of 50 words each (more words than a call takes arguments), every row drawn', () => {
    const message = Array.from({length: 50}, (_, i) => `w${i}`).join(' ')
    const many = Array.from({length: 5000}, (_, i) => ['warning', `code-${i}`, `host=cmp-${i}`, message])
    const t = renderTable(head, many, {wrap: [3], maxWidth: 120})
    expect(width(t)).toBeLessThanOrEqual(120)
    expect(t.split('\n').filter((l) => /│ warning/.test(l))).toHaveLength(5000)
  }, 120_000)
})

describe("the fast paths in cli-table3's measuring functions", () => {
  const utils = createRequire(import.meta.url)('cli-table3/src/utils.js') as ReturnType<typeof cliTable3Utils>
  const ascii = Array.from({length: 95}, (_, i) => String.fromCharCode(32 + i)).join('')
  const corpus = [
    '',
    ascii,
    `${ascii}\n${ascii.slice(10, 40)}`,
    'host=cmp-1.example.org',
    '\u001B[31merror\u001B[39m allocation.consumer-deleted',
    '\u001B[1mSeverity\u001B[22m',
    '\u001B[38;5;208morange\u001B[0m',
    'tab\there',
    '宿主机-1',
    'emoji 🚀 and #️⃣',
    'e\u0301 combining',
    'ctl\u0007bell',
    'a\nb\n\u001B[33mwarning\u001B[39m\nlonger line here',
    '1234567890#*',
    'compute-0001.example.org  VCPU=2 → 4 … ×2 · ÷ — •',
    '\u001B[2m…\u001B[22m ─┼┤├░█',
  ]

  it('counts each character of the fast path one column, as string-width does', () => {
    const cliTable3 = cliTable3Utils()
    let n = 0
    for (let code = 0; code <= 0xffff; code++) {
      const ch = String.fromCharCode(code)
      if (!NARROW_TEXT.test(ch)) continue
      n++
      expect(cliTable3.strlen(ch), code.toString(16)).toBe(1)
      expect(cliTable3.strlen(`a${ch}${ch}b`), code.toString(16)).toBe(4)
    }
    expect(n).toBe(95 + 7 + 160)
  })

  it('measure, cut and pad every text as cli-table3 does', () => {
    const cliTable3 = cliTable3Utils()
    expect(utils.strlen).not.toBe(cliTable3.strlen)
    for (const text of corpus) {
      expect(utils.strlen(text), JSON.stringify(text)).toBe(cliTable3.strlen(text))
      for (let width = 0; width <= 40; width += 3) {
        for (const dir of ['left', 'right', 'center']) expect(utils.pad(text, width, ' ', dir)).toBe(cliTable3.pad(text, width, ' ', dir))
        if (!text.includes('\n')) expect(utils.truncate(text, width)).toBe(cliTable3.truncate(text, width))
      }
    }
  })
})
