import {describe, expect, it} from 'vitest'

import {CELL0_UUID, emptySnapshot} from '../../src/lib/domain/snapshot.js'
import {checkRow, TABLE_COLUMNS, validateSnapshotShape} from '../../src/lib/snapshot/schema.js'

// validateSnapshotShape runs a check compiled per table and words a failure with the generic
// checkRow. These pin down that both agree on every column of every table, for every way a value
// can be wrong: a row the compiled check passes must be one checkRow passes, and the reverse.

type Columns = Parameters<typeof checkRow>[1]

const GOOD: Record<string, unknown> = {i: 7, n: 0.5, s: 'x', b: true, o: {}, a: []}
const BAD: Record<string, unknown[]> = {
  i: [1.5, '7', NaN, true],
  n: [Infinity, NaN, '0.5', false],
  s: [3, true, {}, []],
  b: [0, 'true', 1],
  o: [[], 'x', 3],
  a: [{}, 'x', 3],
}

function validRow(columns: Columns): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const c of columns) row[c.name] = c.name === 'cell_uuid' ? CELL0_UUID : c.name === 'status' ? 'available' : GOOD[c.kind]
  return row
}

/** The problems for a document holding `row` as the only row of `section.table`. */
function problemsFor(section: string, table: string, row: unknown): string[] {
  const doc = emptySnapshot({kind: 'file', description: 't'}) as unknown as Record<string, Record<string, unknown[]>> & {cells: unknown[]}
  doc.cells.push({...validRow(TABLE_COLUMNS.root.cells), uuid: CELL0_UUID})
  if (section === 'root') doc.cells[0] = row
  else doc[section][table] = [row]
  return validateSnapshotShape(doc, 5).map((p) => `${p.where} ${p.problem}`)
}

const tables = Object.entries(TABLE_COLUMNS).flatMap(([section, ts]) => Object.entries(ts).map(([table, columns]) => ({section, table, columns})))

describe('validateSnapshotShape: compiled row checks agree with checkRow', () => {
  it.each(tables)('$section / $table: a valid row passes', ({section, table, columns}) => {
    expect(checkRow(validRow(columns), columns)).toBeNull()
    expect(problemsFor(section, table, validRow(columns))).toEqual([])
  })

  it.each(tables)('$section / $table: every missing, null, undefined or mistyped column is reported as checkRow words it', ({section, table, columns}) => {
    const where = section === 'root' ? `${table}[0]` : `${section}.${table}[0]`
    let reported = 0
    for (const c of columns) {
      const variants: Array<Record<string, unknown>> = []
      const missing = validRow(columns)
      delete missing[c.name]
      variants.push(missing, {...validRow(columns), [c.name]: null}, {...validRow(columns), [c.name]: undefined})
      for (const bad of BAD[c.kind]) variants.push({...validRow(columns), [c.name]: bad})
      for (const row of variants) {
        const want = checkRow(row, columns)
        const got = problemsFor(section, table, row)
        expect(got).toEqual(want === null ? [] : [`${where} ${want}`])
        if (want !== null) reported++
      }
    }
    // at least the mistyped values are errors in every column
    expect(reported).toBeGreaterThanOrEqual(columns.length)
  })

  it('rejects a row that is not an object', () => {
    expect(problemsFor('placement', 'allocations', [1, 2])).toEqual(['placement.allocations[0] is not an object'])
    expect(problemsFor('placement', 'allocations', null)).toEqual(['placement.allocations[0] is not an object'])
  })
})
