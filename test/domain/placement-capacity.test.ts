/**
 * The FLOAT reading is pinned against the real server: what MariaDB prints for a FLOAT column over
 * the text protocol (what placement's Python reads) must be what floatRead computes from the widened
 * double a snapshot holds (`col + 0e0`).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection} from '../../src/lib/db/connection.js'
import {capacityOf, floatRead, floatStored, sqlCapacityOf, summaryCapacityOf} from '../../src/lib/domain/placement-capacity.js'
import {createRng} from '../../src/lib/engine/rng.js'
import {adminConnection} from '../support/db.js'

describe('placement capacity', () => {
  it('SQL compares with the widened single, Python with the value read back', () => {
    const inv = {total: 10, reserved: 0, allocation_ratio: floatStored(0.9)}
    expect(sqlCapacityOf(inv)).toBe(8.999999761581421)
    expect(capacityOf(inv)).toBe(9)
    expect(summaryCapacityOf({total: 7, reserved: 2, allocation_ratio: floatStored(1.1)})).toBe(5)
  })
})

describe('floatRead agrees with MariaDB', () => {
  let conn: Connection
  const db = `cloudctl_float_${process.pid}_${Date.now()}`
  beforeAll(async () => {
    conn = await adminConnection()
    await conn.query(`CREATE DATABASE \`${db}\``)
    await conn.query(`CREATE TABLE \`${db}\`.f (id int NOT NULL AUTO_INCREMENT PRIMARY KEY, v float NOT NULL)`)
  })
  afterAll(async () => {
    await conn.query(`DROP DATABASE IF EXISTS \`${db}\``)
    await closeConnection(conn)
  })

  it('on ties, long fractions, large and small values and random ratios', async () => {
    const rng = createRng(7)
    const values = [0.9, 1.1, 1.5, 16, 0.123456789, 1.0000001, 7115.625, 1234565, 1234567.89, 0.1234565, 3.14159265, 100000.5, 1e-7, 0.333333333]
    for (let i = 0; i < 1000; i++) values.push(Number((rng.next() * 10 ** (Math.floor(rng.next() * 8) - 3)).toPrecision(1 + Math.floor(rng.next() * 10))))
    await conn.query(`INSERT INTO \`${db}\`.f (v) VALUES ${values.map(() => '(?)').join(',')}`, values)
    const [rows] = (await conn.query({
      sql: `SELECT v + 0e0 AS d, CAST(v AS CHAR) AS t FROM \`${db}\`.f ORDER BY id`,
      typeCast: (field: {string(): string | null}) => field.string(),
    })) as unknown as [Array<{d: string; t: string}>]
    const wrong = rows.filter((r) => floatRead(Number(r.d)) !== Number(r.t)).map((r) => `${r.d} reads ${r.t}, floatRead ${floatRead(Number(r.d))}`)
    expect(wrong).toEqual([])
    expect(rows).toHaveLength(values.length)
  })
})
