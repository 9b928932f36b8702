/**
 * Finding codes the generator has no switch for, planted by hand with SQL into a clean generated
 * cloud on MariaDB, then found by the built CLI on the live databases. The same cloud first proves
 * that a clean generated cloud audits to zero findings.
 *
 * Phases (in beforeAll, in order): clean audit; plant the cells and aggregates faults and audit;
 * plant an unreadable blob and audit again, so that the blob's single finding is the difference.
 */
import {randomUUID} from 'node:crypto'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {FindingCode, FindingSubject} from '../../src/lib/domain/finding.js'
import type {CellInfo, ComputeNode, Instance} from '../../src/lib/domain/snapshot.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'
import {type AuditRun, auditLive, brief, nowSql, scalar, sql} from './audit-live-support.js'

interface Planted {
  code: FindingCode
  subject: FindingSubject
}

let cloud: TestCloud | undefined
let clean: AuditRun
let cells: AuditRun
let aggregates: AuditRun
let allBefore: AuditRun
let leaksAfter: AuditRun
let allAfter: AuditRun
const planted: Planted[] = []
let blob: Planted

beforeAll(async () => {
  const {snapshot: s} = generateCloud({seed: 21, cells: 2, hostsPerCell: 6, now: nowSql()})
  cloud = await createTestCloud('audit_sql', {cells: ['cell1', 'cell2']})
  await seedSnapshot(s, cloud)
  const c = cloud
  clean = await auditLive(c, 'all')

  const cell = (name: string) => s.cells.find((x) => x.name === name) as CellInfo
  const [cell1, cell2] = [cell('cell1'), cell('cell2')]
  const shared = (cellInfo: CellInfo) =>
    s.nova.compute_nodes.filter((cn) => cn.cell_uuid === cellInfo.uuid && cn.deleted === 0 && (cn.host ?? '').includes('-cmp'))
  const nodeSubject = (cn: ComputeNode): FindingSubject => ({
    cell: cn.cell_uuid === cell1.uuid ? 'cell1' : 'cell2',
    cell_uuid: cn.cell_uuid,
    host: cn.host as string,
    node: cn.hypervisor_hostname as string,
  })
  const liveOn = (cn: ComputeNode) => s.nova.instances.find((i) => i.deleted === 0 && i.host === cn.host) as Instance
  const agg = (name: string) => s.nova_api.aggregates.find((a) => a.name === name) as (typeof s.nova_api.aggregates)[number]
  const az1 = agg('az1')
  const az2 = agg('az2')
  const db = c.databases

  // cell.host-mapped-wrong-cell: a cell1 host mapped to cell2.
  const wrongCellHost = shared(cell1)[0]
  // aggregate.az-conflict: a host of az1 added to az2, its provider in both placement aggregates (no other finding).
  const azHost = shared(cell1).find((cn) => az1.hosts.includes(cn.host as string) && cn !== wrongCellHost) as ComputeNode
  // cell.build-request-stale: a build_request left for an instance that lives in cell2.
  const built = liveOn(shared(cell2)[0])
  // snapshot.unreadable-blob: a truncated flavor blob (phase 2).
  const blobInst = liveOn(shared(cell2)[1])
  const archived = randomUUID()

  await sql(async (conn) => {
    await conn.query(`INSERT INTO \`${db.api}\`.instance_mappings (instance_uuid, cell_id, project_id, created_at) VALUES (?, ?, ?, NOW())`, [
      archived,
      cell1.id,
      'p-archived',
    ])
    planted.push({code: 'cell.instance-mapping-stale', subject: {cell: 'cell1', cell_uuid: cell1.uuid}})

    await conn.query(`INSERT INTO \`${db.api}\`.build_requests (project_id, instance_uuid, created_at) VALUES (?, ?, NOW())`, [built.project_id, built.uuid])
    planted.push({code: 'cell.build-request-stale', subject: {cell: 'cell2', cell_uuid: cell2.uuid, instance_uuid: built.uuid}})

    await conn.query(`UPDATE \`${db.api}\`.host_mappings SET cell_id = ? WHERE host = ?`, [cell2.id, wrongCellHost.host])
    planted.push({code: 'cell.host-mapped-wrong-cell', subject: {...nodeSubject(wrongCellHost), provider_uuid: wrongCellHost.uuid as string}})

    const ssd = agg('ssd')
    await conn.query(`INSERT INTO \`${db.api}\`.aggregate_hosts (aggregate_id, host, created_at) VALUES (?, ?, NOW())`, [ssd.id, 'ghost-compute-99'])
    planted.push({code: 'aggregate.host-not-found', subject: {aggregate: 'ssd', host: 'ghost-compute-99'}})

    await conn.query(`INSERT INTO \`${db.api}\`.aggregate_hosts (aggregate_id, host, created_at) VALUES (?, ?, NOW())`, [az2.id, azHost.host])
    const rpId = await scalar<number>(conn, `SELECT id FROM \`${db.placement}\`.resource_providers WHERE uuid = ?`, [azHost.uuid])
    const az2PlacementId = await scalar<number>(conn, `SELECT id FROM \`${db.placement}\`.placement_aggregates WHERE uuid = ?`, [az2.uuid])
    await conn.query(`INSERT INTO \`${db.placement}\`.resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) VALUES (?, ?, NOW())`, [
      rpId,
      az2PlacementId,
    ])
    planted.push({code: 'aggregate.az-conflict', subject: {host: azHost.host as string, aggregate: 'az1,az2'}})

    await conn.query(`INSERT INTO \`${db.api}\`.aggregates (name, uuid, created_at) VALUES (?, NULL, NOW())`, ['legacy-racks'])
    planted.push({code: 'aggregate.no-uuid', subject: {aggregate: 'legacy-racks'}})
  })
  ;[cells, aggregates, allBefore] = await Promise.all([auditLive(c, 'cells'), auditLive(c, 'aggregates'), auditLive(c, 'all')])

  await sql(async (conn) => {
    const [res] = (await conn.query(`UPDATE \`${db.cells.cell2}\`.instance_extra SET flavor = ? WHERE instance_uuid = ?`, [
      '{"cur": {"nova_object.name": "Flavor", "nova_object.data": {"vcpus": 2',
      blobInst.uuid,
    ])) as unknown as [{affectedRows: number}]
    expect(res.affectedRows).toBe(1)
  })
  blob = {
    code: 'snapshot.unreadable-blob',
    subject: {cell: 'cell2', cell_uuid: cell2.uuid, host: blobInst.host as string, node: blobInst.node as string, instance_uuid: blobInst.uuid},
  }
  ;[leaksAfter, allAfter] = await Promise.all([auditLive(c, 'leaks'), auditLive(c, 'all')])
})

afterAll(async () => {
  await cloud?.drop()
})

const byCode = (code: string) => planted.find((p) => p.code === code) as Planted

describe('cloudctl audit on live databases: faults planted with SQL', () => {
  it('a clean generated cloud gives zero findings and exit 0', () => {
    expect(clean.doc.findings.map(brief)).toEqual([])
    expect(clean.exitCode).toBe(0)
    expect(clean.doc.counts.total).toBe(0)
    expect(clean.doc.checks).toEqual(['snapshot', 'leaks', 'providers', 'cells', 'pinning', 'usage', 'aggregates'])
  })

  it('audit cells reports exactly the three cells faults; audit aggregates the three aggregates faults; audit all nothing else', () => {
    const expectCodes = (run: AuditRun, codes: string[]) =>
      expect(run.doc.findings.map((f) => f.code).sort(), run.doc.findings.map(brief).join('\n')).toEqual(codes.sort())
    expectCodes(cells, ['cell.instance-mapping-stale', 'cell.build-request-stale', 'cell.host-mapped-wrong-cell'])
    expectCodes(aggregates, ['aggregate.host-not-found', 'aggregate.az-conflict', 'aggregate.no-uuid'])
    expectCodes(
      allBefore,
      planted.map((p) => p.code),
    )
    expect([cells.exitCode, aggregates.exitCode, allBefore.exitCode]).toEqual([3, 3, 3])
  })

  it.each([
    {code: 'cell.instance-mapping-stale', check: 'cells', severity: 'info'},
    {code: 'cell.build-request-stale', check: 'cells', severity: 'warning'},
    {code: 'cell.host-mapped-wrong-cell', check: 'cells', severity: 'error'},
    {code: 'aggregate.host-not-found', check: 'aggregates', severity: 'warning'},
    {code: 'aggregate.az-conflict', check: 'aggregates', severity: 'error'},
    {code: 'aggregate.no-uuid', check: 'aggregates', severity: 'warning'},
  ])('$code: audit $check names the planted subject ($severity)', ({code, check, severity}) => {
    const run = check === 'cells' ? cells : aggregates
    const found = run.doc.findings.filter((f) => f.code === code)
    expect(found).toHaveLength(1)
    expect(found[0].subject).toEqual(byCode(code).subject)
    expect(found[0].severity).toBe(severity)
  })

  it('snapshot.unreadable-blob: a truncated instance_extra.flavor adds exactly one finding, reported by any audit', () => {
    expect(leaksAfter.doc.findings.map(brief)).toEqual([brief({...leaksAfter.doc.findings[0], code: blob.code, subject: blob.subject})])
    expect(leaksAfter.doc.findings[0].subject).toEqual(blob.subject)
    expect(leaksAfter.doc.findings[0].evidence).toMatchObject({table: 'instance_extra', column: 'flavor'})
    expect(leaksAfter.exitCode).toBe(3)
    const before = new Set(allBefore.doc.findings.map(brief))
    expect(allAfter.doc.findings.map(brief).filter((b) => !before.has(b))).toEqual(leaksAfter.doc.findings.map(brief))
    expect(allAfter.doc.findings).toHaveLength(allBefore.doc.findings.length + 1)
  })
})
