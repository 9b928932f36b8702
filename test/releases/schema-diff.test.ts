/**
 * What changed in the schemas since 2025.1, as each release's own nova-manage / placement-manage
 * made them (schemas.py templates): every table, column (type, nullability, default) and index of
 * nova_api, placement, cell0 and a cell, compared with 2025.1's. Each difference must be listed
 * below with what cloudctl does with it (read and used, or ignored and why); an unlisted one, or a
 * listed one that is gone, fails, so a new release's schema is never read on trust.
 */
import {describe, expect, it} from 'vitest'

import {adminConnection} from '../support/db.js'
import {closeConnection} from '../../src/lib/db/connection.js'
import {releaseTemplates, releaseUnavailable, type TestRelease} from './support.js'

type Newer = '2026.1' | '2026.2'

/** Differences from 2025.1: `+` in the release, `-` only in 2025.1; with what cloudctl does. */
const CHANGES: Record<Newer, Record<string, string>> = {
  // nova 33 and placement 15 add no migration: the same tables, columns and indexes.
  '2026.1': {},
  '2026.2': {
    '+ cell.migrations index migrations_by_dest_host_nodes_and_status_idx (deleted,dest_compute,dest_node,status)':
      "ignored: an index (nova 34, ab450ba04102) speeding nova's own lookups of moves by host and node; capture reads every migrations row by primary key, so nothing it returns changes",
    '+ cell.migrations index migrations_by_src_host_nodes_and_status_idx (deleted,source_compute,source_node,status)':
      'ignored: the same migration, for the source side',
    '+ cell0.migrations index migrations_by_dest_host_nodes_and_status_idx (deleted,dest_compute,dest_node,status)':
      'ignored: cell0 is synced by the same migration',
    '+ cell0.migrations index migrations_by_src_host_nodes_and_status_idx (deleted,source_compute,source_node,status)':
      'ignored: cell0 is synced by the same migration',
  },
}

async function describeSchema(release: TestRelease): Promise<Set<string>> {
  const tpl = await releaseTemplates(release)
  const conn = await adminConnection()
  const out = new Set<string>()
  try {
    for (const [kind, db] of Object.entries(tpl)) {
      const [cols] = (await conn.query(
        'SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS ty, IS_NULLABLE AS n, COLUMN_DEFAULT AS d FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?',
        [db],
      )) as unknown as [Array<{t: string; c: string; ty: string; n: string; d: string | null}>]
      for (const r of cols) out.add(`${kind}.${r.t} column ${r.c} ${r.ty}${r.n === 'YES' ? ' NULL' : ' NOT NULL'}${r.d === null ? '' : ` DEFAULT ${r.d}`}`)
      const [idx] = (await conn.query(
        'SELECT TABLE_NAME AS t, INDEX_NAME AS i, NON_UNIQUE AS u, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS c FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? GROUP BY TABLE_NAME, INDEX_NAME, NON_UNIQUE',
        [db],
      )) as unknown as [Array<{t: string; i: string; u: number; c: string}>]
      for (const r of idx) out.add(`${kind}.${r.t} ${Number(r.u) === 0 ? 'unique ' : ''}index ${r.i} (${r.c})`)
    }
  } finally {
    await closeConnection(conn)
  }
  return out
}

const NEWER: Newer[] = ['2026.1', '2026.2']
const skip = (r: Newer): boolean => releaseUnavailable('2025.1') !== undefined || releaseUnavailable(r) !== undefined

describe.each(NEWER)('the %s schemas against 2025.1', (release) => {
  it.skipIf(skip(release))(
    'differ exactly where listed, each difference with what cloudctl does with it',
    async () => {
      const base = await describeSchema('2025.1')
      const mine = await describeSchema(release)
      const found = [...[...mine].filter((x) => !base.has(x)).map((x) => `+ ${x}`), ...[...base].filter((x) => !mine.has(x)).map((x) => `- ${x}`)].sort()
      expect(found).toEqual(Object.keys(CHANGES[release]).sort())
      // the comparison saw the whole schema (shadow tables included), not an empty database
      expect(mine.size).toBeGreaterThan(2500)
    },
    900_000,
  )
})
