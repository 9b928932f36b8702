import {afterAll, beforeAll, describe, expect, it} from 'vitest'

/**
 * Snapshot rows read through the driver's public parse and the row converter (row-converter.ts):
 * every kind of value a column holds, at the edges (NULLs, 64-bit integers, floats, enums the spec
 * does not know, multi-byte text, values past the one-byte length header, repeating and run
 * columns). test/db/generated-roundtrip.test.ts holds whole generated clouds to the same reader.
 */
import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {openReader, type Reader, readRows} from '../../src/lib/db/table-reader.js'
import {RepeatMemo} from '../../src/lib/db/row-converter.js'
import {createTableDdl, defineTable} from '../../src/lib/domain/tables/define.js'
import {parseDbUrl} from '../../src/lib/db/url.js'
import {createTestCloud, type TestCloud} from '../support/db.js'

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

describe('row converter: edge values', () => {
  let cloud: TestCloud
  let conn: Connection
  let reader: Reader
  beforeAll(async () => {
    cloud = await createTestCloud('rowdec_edge')
    conn = await openConnection(cloud.apiUrl)
    // The server's enum has a value the spec does not: the converter reads it as null. utf8mb4 for
    // four-byte characters (nova's tables are utf8, three bytes at most).
    await conn.query(
      createTableDdl(EDGE)
        .replace("enum('a','bb','ccc')", "enum('a','bb','ccc','dddd')")
        .replace(/CHARSET=utf8$/, 'CHARSET=utf8mb4'),
    )
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
    for (const r of rows)
      await conn.query('INSERT INTO decoder_edges (n, big, req, ratio, flag, state, label, body, host, `blob`, consumer, deleted) VALUES (?)', [r])
    reader = await openReader('edges', parseDbUrl(cloud.apiUrl), () => {})
  })
  afterAll(async () => {
    await closeConnection(reader?.conn)
    await closeConnection(conn)
    await cloud?.drop()
  })

  it('reads each kind of value as a snapshot holds it', async () => {
    const actual = await readRows(reader, EDGE)
    expect(actual.map((r) => r.n)).toEqual([0, -1, 2147483647, -2147483648, null, 7, 8, 9, 10])
    expect(actual.map((r) => r.req)).toEqual([0, -7, 123456789, 1, 42, 0, 0, 0, 0])
    expect(actual.map((r) => r.flag)).toEqual([false, true, false, null, true, true, false, false, false])
    expect(actual.map((r) => r.ratio)).toEqual([0, Math.fround(0.9), Math.fround(1e-7), 16, null, Math.fround(3.4e38), -0.5, 0, 0])
    expect(actual.map((r) => r.label)).toEqual(['', 'é', '中文', '😀', 'x'.repeat(300), 'x'.repeat(255), 'x', 'y', 'y'])
    expect(actual.map((r) => r.deleted)).toEqual([0, 0, 3, 0, 0, 0, 0, 0, 0])
    expect(actual[2]?.big).toBe(9007199254740992)
    expect(actual[3]?.big).toBe(123456789012345680)
    expect(actual[3]?.body).toBe('x'.repeat(251))
    expect(actual[5]?.body).toBe('x'.repeat(65_536))
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

describe('row converter: the memo of repeating columns', () => {
  // Texts of one length: blobs that never repeat (an instance's NUMA topology names its instance),
  // blobs that do (a flavor), short values that go to the hashed map (hosts); each handed back whole.
  const blob = (i: number, c: string, n: number): string => `{"instance_uuid": "${String(i).padStart(8, '0')}", "cells": "${c.repeat(n)}"}`
  const texts: string[] = []
  for (let i = 0; i < 50; i++) texts.push(blob(i, 'n', 300), blob(i % 3, 'f', 301), `host-${String(i % 20).padStart(3, '0')}`)

  it('hands back every text as it was given, past the buckets and once a length is given up', () => {
    const memo = new RepeatMemo()
    const out = texts.map((t) => memo.get(t))
    expect(out).toEqual(texts)
    // A second pass meets every text again, the given-up lengths included.
    expect(texts.map((t) => memo.get(t))).toEqual(texts)
    expect(new Set(out).size).toBe(50 + 3 + 20)
  })
})
