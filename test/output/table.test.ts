import {describe, expect, it} from 'vitest'

import {renderTable} from '../../src/lib/output/table.js'

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
