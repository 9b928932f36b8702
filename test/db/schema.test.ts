/**
 * test/support/schema.ts must be the real Zed schema: every column (order, type, nullability, default,
 * key, auto_increment), every index and foreign key of the reference read off databases created by
 * nova-manage / placement-manage (zed-schema.md, a copy of the reference), compared with what
 * MariaDB reports for the databases createTestCloud builds.
 */
import {readFileSync} from 'node:fs'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {NOVA_API_SCHEMA_TABLES, NOVA_CELL_SCHEMA_TABLES, PLACEMENT_SCHEMA_TABLES} from '../support/schema.js'
import {createTestCloud, type TestCloud} from '../support/db.js'

interface RefTable {
  columns: string[]
  indexes: string[]
  fks: string[]
}

function parseReference(): Record<string, Record<string, RefTable>> {
  const text = readFileSync(new URL('zed-schema.md', import.meta.url), 'utf8')
  const out: Record<string, Record<string, RefTable>> = {}
  let db = ''
  let table: RefTable | undefined
  for (const line of text.split('\n')) {
    const dbm = /^## Database `([^`]+)`/.exec(line)
    if (dbm) {
      db = dbm[1]
      out[db] = {}
      continue
    }
    const tm = /^### `([^`]+)`/.exec(line)
    if (tm) {
      table = {columns: [], indexes: [], fks: []}
      out[db][tm[1]] = table
      continue
    }
    if (!table) continue
    const cm = /^\| (\S+) \| (.+?) \| (YES|NO) \| (.*?) \| (.*?) \|$/.exec(line)
    if (cm) {
      const [, name, type, nullable, def, key] = cm
      table.columns.push([name, type, nullable, def.trim(), key.trim().replace(/\s+/g, ' ')].join(' | '))
      continue
    }
    if (line.startsWith('Indexes: '))
      table.indexes = line
        .slice(9)
        .split('; ')
        .map((s) => s.trim())
        .sort()
    if (line.startsWith('Foreign keys: '))
      table.fks = line
        .slice(14)
        .split('; ')
        .map((s) => s.trim())
        .sort()
  }
  return out
}

async function describeDb(conn: Connection, db: string, tables: string[]): Promise<Record<string, RefTable>> {
  const out: Record<string, RefTable> = {}
  for (const t of tables) out[t] = {columns: [], indexes: [], fks: []}
  const [cols] = (await conn.query(
    'SELECT TABLE_NAME t, COLUMN_NAME c, COLUMN_TYPE ty, IS_NULLABLE n, COLUMN_DEFAULT d, COLUMN_KEY k, EXTRA e FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION',
    [db],
  )) as unknown as [Array<Record<string, string | null>>]
  for (const r of cols) {
    if (!out[r.t as string]) continue
    const def = r.d === null ? '' : (r.d as string)
    const key = [r.k, r.e].filter((x) => x).join(' ')
    out[r.t as string].columns.push([r.c, r.ty, r.n, def, key].join(' | '))
  }
  const [idx] = (await conn.query(
    'SELECT TABLE_NAME t, INDEX_NAME i, NON_UNIQUE u, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) cs FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE',
    [db],
  )) as unknown as [Array<Record<string, string | number>>]
  for (const r of idx) out[r.t as string]?.indexes.push(`${Number(r.u) === 0 ? 'UNIQUE ' : ''}${r.i}(${r.cs})`)
  const [fks] = (await conn.query(
    'SELECT TABLE_NAME t, COLUMN_NAME c, REFERENCED_TABLE_NAME rt, REFERENCED_COLUMN_NAME rc FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL',
    [db],
  )) as unknown as [Array<Record<string, string>>]
  for (const r of fks) out[r.t]?.fks.push(`${r.c} -> ${r.rt}.${r.rc}`)
  for (const t of Object.values(out)) {
    t.indexes.sort()
    t.fks.sort()
  }
  return out
}

describe('test schema = reference Zed schema', () => {
  const ref = parseReference()
  let cloud: TestCloud
  let conn: Connection
  beforeAll(async () => {
    cloud = await createTestCloud('schema', {cells: ['cell1']})
    conn = await openConnection(cloud.apiUrl)
  })
  afterAll(async () => {
    await closeConnection(conn)
    await cloud?.drop()
  })

  it('the reference parses into the three databases', () => {
    expect(Object.keys(ref)).toEqual(['nova_api', 'nova', 'placement'])
    expect(Object.keys(ref.nova_api).sort()).toEqual([...NOVA_API_SCHEMA_TABLES].sort())
    expect(Object.keys(ref.nova).sort()).toEqual([...NOVA_CELL_SCHEMA_TABLES].sort())
    expect(Object.keys(ref.placement).sort()).toEqual([...PLACEMENT_SCHEMA_TABLES].sort())
    expect(ref.nova.compute_nodes.columns).toContain('mapped | int(11) | YES | NULL | ')
  })

  it.each([
    ['nova_api', (c: TestCloud) => c.databases.api, NOVA_API_SCHEMA_TABLES],
    ['nova', (c: TestCloud) => c.databases.cells.cell1, NOVA_CELL_SCHEMA_TABLES],
    ['nova (cell0)', (c: TestCloud) => c.databases.cell0, NOVA_CELL_SCHEMA_TABLES],
    ['placement', (c: TestCloud) => c.databases.placement, PLACEMENT_SCHEMA_TABLES],
  ] as const)('%s: columns, indexes and foreign keys', async (kind, dbOf, tables) => {
    const actual = await describeDb(conn, dbOf(cloud), [...tables])
    const want = ref[kind.split(' ')[0]]
    for (const t of tables) expect({table: t, ...actual[t]}).toEqual({table: t, ...want[t]})
  })
})
