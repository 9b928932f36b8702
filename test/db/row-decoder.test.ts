import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {eachRow} from '../../src/lib/db/row-stream.js'
import {ByteMemo, int, text} from '../../src/lib/db/row-decoder.js'
import {openReader, type Reader, readRows, selectSql} from '../../src/lib/db/table-reader.js'
import {rowConverter} from '../support/row-converter.js'
import {createTableDdl, defineTable, type TableSpec} from '../../src/lib/domain/tables/define.js'
import {NOVA_API_READ_TABLES, NOVA_CELL_READ_TABLES, PLACEMENT_READ_TABLES} from '../../src/lib/domain/tables/index.js'
import {parseDbUrl} from '../../src/lib/db/url.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {FAULT_CODES, generateCloud} from '../support/generator.js'

/** The rows the driver's parser and table-reader's converter make of `spec`'s table: the reference. */
async function converted(conn: Connection, spec: TableSpec, cellUuid?: string): Promise<unknown[]> {
  const convert = rowConverter(spec)
  const out: unknown[] = []
  await eachRow<unknown[]>(conn, selectSql(spec), [], (x) => out.push(convert(x, cellUuid)), {}, true)
  return out
}

describe('row decoder: the converter’s rows, from the packet bytes', () => {
  let cloud: TestCloud
  beforeAll(async () => {
    const seeded = generateCloud({seed: 11, cells: 2, hostsPerCell: 30, requestSpecs: true, migrationsInProgress: 2, completedMigrations: 2, faults: Object.fromEntries(FAULT_CODES.map((c) => [c, 1]))}).snapshot
    cloud = await createTestCloud('rowdec', {cells: seeded.cells.filter((c) => !c.is_cell0).map((c) => c.name as string)})
    await seedSnapshot(seeded, cloud)
  })
  afterAll(async () => cloud?.drop())

  const families: Array<[string, TableSpec[], (c: TestCloud) => string]> = [
    ['nova_api', NOVA_API_READ_TABLES, (c) => c.apiUrl],
    ['placement', PLACEMENT_READ_TABLES, (c) => c.placementUrl],
    ['cell', NOVA_CELL_READ_TABLES, (c) => Object.values(c.cellUrls)[0] as string],
  ]
  for (const [family, specs, urlOf] of families) {
    it(`every ${family} table decodes as the converter converts`, async () => {
      const reader = await openReader(family, parseDbUrl(urlOf(cloud)), () => {})
      try {
        let rows = 0
        for (const spec of specs) {
          const cell = spec.cell ? 'cell-uuid' : undefined
          const expected = await converted(reader.conn, spec, cell)
          const actual = await readRows(reader, spec, {cellUuid: cell})
          expect(actual, spec.name).toEqual(expected)
          // Same keys in the same order: every row of a table has one shape.
          expect(actual.map((r) => Object.keys(r).join()), spec.name).toEqual(expected.map((r) => Object.keys(r as object).join()))
          rows += actual.length
        }
        expect(rows).toBeGreaterThan(100)
      } finally {
        await closeConnection(reader.conn)
      }
    })
  }
})

// Every kind of value a column can hold, at the edges of the length-coded format.
const EDGE = defineTable({
  name: 'decoder_edges',
  columns: {
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    n: 'int(11) DEFAULT NULL',
    big: 'bigint(20) DEFAULT NULL',
    req: 'int(11) NOT NULL',
    ratio: 'float DEFAULT NULL',
    flag: 'tinyint(1) DEFAULT NULL',
    state: "enum('a','bb','ccc') DEFAULT NULL",
    label: 'varchar(400) NOT NULL',
    body: 'mediumtext',
    host: 'varchar(255) DEFAULT NULL',
    blob: 'text',
    consumer: 'varchar(300) DEFAULT NULL',
    deleted: 'int(11) DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)'],
  row: ['id', 'n', 'big', 'req', 'ratio', 'flag', 'state', 'label', 'body', 'host', 'blob', 'consumer', 'deleted'],
  repeats: ['host', 'blob'],
  runs: ['consumer'],
})

describe('row decoder: edge values', () => {
  let cloud: TestCloud
  let conn: Connection
  let reader: Reader
  beforeAll(async () => {
    cloud = await createTestCloud('rowdec_edge')
    conn = await openConnection(cloud.apiUrl)
    // The server's enum has a value the spec does not: the converter reads it as null. utf8mb4 for
    // four-byte characters (nova's tables are utf8, three bytes at most).
    await conn.query(createTableDdl(EDGE).replace("enum('a','bb','ccc')", "enum('a','bb','ccc','dddd')").replace(/CHARSET=utf8$/, 'CHARSET=utf8mb4'))
    const long = (n: number, c = 'x'): string => c.repeat(n)
    const blobA = `{"flavor": ${JSON.stringify(long(700, 'f'))}}`
    const blobB = `{"flavor": ${JSON.stringify(long(700, 'g'))}}`
    const rows: unknown[][] = [
      [0, 0, 0, 0, 0, 'a', '', '', 'h1', blobA, 'c1', 0],
      [-1, -9007199254740993n.toString(), -7, 0.9, 1, 'bb', 'é', 'ü'.repeat(10), 'h2', blobB, 'c1', null],
      [2147483647, '9007199254740993', 123456789, 1e-7, 0, 'ccc', '中文', long(250), 'h1', blobA, 'c1', 3],
      [-2147483648, '123456789012345678', 1, 16.0, null, 'dddd', '😀', long(251), 'h2', blobB, 'c2', 0],
      [null, null, 42, null, 1, null, long(300), long(65_535), null, null, null, 0],
      [7, '1000000000000000', 0, 3.4e38, 1, 'a', long(255), long(65_536), 'é', 'é', long(200, 'k'), 0],
      [8, '999999999999999', 0, -0.5, 0, 'a', 'x', long(70_000, 'é'), 'é', blobA, long(200, 'k'), 0],
      [9, '-0', 0, 0, 0, 'bb', 'y', 'z', 'h1', blobB, long(200, 'j'), 0],
      [10, '10', 0, 0, 0, 'bb', 'y', 'z', 'ü', 'ü', 'c1', 0],
    ]
    for (const r of rows) await conn.query('INSERT INTO decoder_edges (n, big, req, ratio, flag, state, label, body, host, `blob`, consumer, deleted) VALUES (?)', [r])
    reader = await openReader('edges', parseDbUrl(cloud.apiUrl), () => {})
  })
  afterAll(async () => {
    await closeConnection(reader?.conn)
    await closeConnection(conn)
    await cloud?.drop()
  })

  it('decodes each row as the converter converts it', async () => {
    const expected = await converted(reader.conn, EDGE)
    const actual = await readRows(reader, EDGE)
    expect(actual).toEqual(expected)
    expect(actual.map((r) => r.state)).toEqual(['a', 'bb', 'ccc', null, null, 'a', 'a', 'bb', 'bb'])
    expect(actual[1]?.big).toBe(-9007199254740992)
    expect(actual[6]?.body).toBe('é'.repeat(70_000))
    expect(actual[4]?.deleted).toBe(0)
  })

  it('reads repeating and run columns by value, NULLs included', async () => {
    const rows = await readRows(reader, EDGE)
    expect(rows.map((r) => r.host)).toEqual(['h1', 'h2', 'h1', 'h2', null, 'é', 'é', 'h1', 'ü'])
    expect(rows.map((r) => r.consumer)).toEqual(['c1', 'c1', 'c1', 'c2', null, 'k'.repeat(200), 'k'.repeat(200), 'j'.repeat(200), 'c1'])
  })
})

describe('ByteMemo', () => {
  it('makes each distinct value once and finds it again, through growth and equal hashes', () => {
    let made = 0
    const memo = new ByteMemo((t) => {
      made++
      return `v:${t}`
    })
    const values = Array.from({length: 5000}, (_, i) => (i % 3 === 0 ? `compute-${i}` : i % 3 === 1 ? `é${i}` : 'x'.repeat(i % 90)))
    const distinct = new Set(values)
    for (let round = 0; round < 2; round++) {
      for (const v of values) {
        const b = Buffer.from(`..${v}..`, 'utf8')
        expect(memo.get(b, 2, b.length - 2)).toBe(`v:${v}`)
      }
    }
    expect(made).toBe(distinct.size)
  })
})

describe('row decoder: numbers and text from bytes', () => {
  const at = (s: string): [Buffer, number, number] => {
    const b = Buffer.concat([Buffer.from('##'), Buffer.from(s, 'utf8'), Buffer.from('##')])
    return [b, 2, b.length - 2]
  }
  it('reads integers as Number() reads their text', () => {
    for (const s of ['0', '-0', '7', '-7', '2147483647', '-2147483648', '999999999999999', '1000000000000000', '9007199254740993', '-9007199254740993', '1.5', '1e3', '']) {
      expect(Object.is(int(...at(s)), Number(s)), s).toBe(true)
    }
  })
  it('reads text as UTF-8', () => {
    for (const s of ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'é', 'éa', '中', '😀', 'x'.repeat(100), 'ü'.repeat(40)]) expect(text(...at(s)), s).toBe(s)
  })
})
