/**
 * A cell whose database cannot be reached (cell_mappings.database_connection points at a closed
 * port): every audit says `unknown` for that cell, concludes nothing from the absence of its rows
 * (no false leak, stale provider, stale mapping or missing aggregate host), and still judges the
 * readable cell: a real leak planted there is reported.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CellInfo} from '../../src/lib/domain/snapshot.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud, type PlantedFault} from '../support/generator.js'
import {type AuditRun, auditLive, brief, nowSql, sql} from './audit-live-support.js'

const UNDECIDED: Record<string, string> = {
  leaks: 'allocation.undecided',
  providers: 'provider.undecided',
  cells: 'cell.undecided',
  pinning: 'pinning.undecided',
  usage: 'usage.undecided',
  aggregates: 'aggregate.undecided',
}
// Nothing listens on port 1: the connection is refused at once. The password must never show.
const UNREACHABLE = 'mysql+pymysql://nova:Very-S3cret@127.0.0.1:1/nova_cell2?charset=utf8&connect_timeout=3'

let cloud: TestCloud | undefined
let cell2: CellInfo
let leak: PlantedFault
const runs = new Map<string, AuditRun>()
let cell1Only: AuditRun

beforeAll(async () => {
  // seed 4 puts the deleted-instance leak in cell1 (asserted below): it must still be found.
  const generated = generateCloud({seed: 4, cells: 2, hostsPerCell: 6, now: nowSql(), faults: {'allocation.consumer-deleted': 1}})
  leak = generated.planted[0]
  cell2 = generated.snapshot.cells.find((c) => c.name === 'cell2') as CellInfo
  cloud = await createTestCloud('audit_unavail', {cells: ['cell1', 'cell2']})
  await seedSnapshot(generated.snapshot, cloud)
  const c = cloud
  await sql(async (conn) => {
    await conn.query(`UPDATE \`${c.databases.api}\`.cell_mappings SET database_connection = ? WHERE name = 'cell2'`, [UNREACHABLE])
  })
  await Promise.all(Object.keys(UNDECIDED).map(async (check) => runs.set(check, await auditLive(c, check))))
  cell1Only = await auditLive(c, 'all', ['--cell', 'cell1'])
})

afterAll(async () => {
  await cloud?.drop()
})

describe('cloudctl audit on live databases with an unreachable cell', () => {
  it('the planted leak lives in the readable cell', () => {
    expect(leak.subject.cell).toBe('cell1')
  })

  it.each(Object.entries(UNDECIDED).map(([check, code]) => ({check, code})))(
    'audit $check: one $code for cell2 and no conclusion about it',
    ({check, code}) => {
      const run = runs.get(check) as AuditRun
      expect(run.exitCode).toBe(3)
      const unknown = run.doc.findings.filter((f) => f.severity === 'unknown')
      expect(unknown.map((f) => [f.code, f.subject.cell, f.subject.cell_uuid])).toEqual([[code, 'cell2', cell2.uuid]])
      const known = run.doc.findings.filter((f) => f.severity !== 'unknown')
      // Only the real leak of cell1; nothing about cell2's hosts, providers, mappings or consumers.
      expect(known.map(brief)).toEqual(check === 'leaks' ? [expect.stringContaining(`allocation.consumer-deleted cell=cell1`)] : [])
      expect(run.doc.unavailable_cells.map((u) => [u.uuid, u.name])).toEqual([[cell2.uuid, 'cell2']])
      expect(run.doc.unavailable_cells[0].error).toBeTruthy()
      expect(JSON.stringify(run.doc) + run.stderr).not.toContain('Very-S3cret')
    },
  )

  it('the leak in the readable cell keeps its subject; cell2 consumers are counted as undecided, not leaked', () => {
    const leaks = (runs.get('leaks') as AuditRun).doc
    const found = leaks.findings.find((f) => f.code === 'allocation.consumer-deleted')
    expect(found?.subject).toMatchObject(Object.fromEntries(Object.entries(leak.subject).filter(([, v]) => v !== undefined)))
    const undecided = leaks.findings.find((f) => f.code === 'allocation.undecided')
    expect(undecided?.evidence.undecided_consumers).toBeGreaterThan(0)
    expect(leaks.findings.some((f) => f.code === 'allocation.consumer-unknown')).toBe(false)
  })

  it('audit all --cell cell1 keeps only what the readable cell decides', () => {
    expect(cell1Only.doc.findings.map((f) => f.code)).toEqual(['allocation.consumer-deleted'])
    expect(cell1Only.exitCode).toBe(3)
  })
})
