/**
 * Proving a cell's identity (src/lib/checks/cells/identity.ts), rule by rule, on builder clouds: the
 * wrong databases of issue 25 item 2 are unproven, an ordinary cloud with a few stale mappings is not.
 */
import {describe, expect, it} from 'vitest'

import {unprovenCells} from '../../src/lib/checks/cells/identity.js'
import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type CellDatabaseIdentity, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

/** cell1: 4 hosts and 8 instances (one of them a seed-004 ERROR copy in cell0); cell2: 2 hosts, 2 instances. */
function cloud(): {b: CloudBuilder; cell1: string; cell2: string} {
  const b = new CloudBuilder({seed: 2511, requestSpecs: false})
  const cell1 = b.addCell('cell1').uuid
  const cell2 = b.addCell('cell2').uuid
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
  for (const h of ['c1-a', 'c1-b', 'c1-c', 'c1-d']) b.addHost('cell1', {host: h, vcpus: 16, memory_mb: 32768, local_gb: 500})
  for (const h of ['c2-a', 'c2-b']) b.addHost('cell2', {host: h, vcpus: 16, memory_mb: 32768, local_gb: 500})
  for (let i = 0; i < 8; i++) b.addInstance(['c1-a', 'c1-b', 'c1-c', 'c1-d'][i % 4], 'm1.small')
  b.addInstance('c2-a', 'm1.small')
  b.addInstance('c2-b', 'm1.small')
  return {b, cell1, cell2}
}

const withoutCell = (s: Snapshot, uuid: string): Snapshot => {
  s.nova.services = s.nova.services.filter((r) => r.cell_uuid !== uuid)
  s.nova.compute_nodes = s.nova.compute_nodes.filter((r) => r.cell_uuid !== uuid)
  s.nova.instances = s.nova.instances.filter((r) => r.cell_uuid !== uuid)
  s.nova.migrations = s.nova.migrations.filter((r) => r.cell_uuid !== uuid)
  return s
}

const id = (database: string, over: Partial<CellDatabaseIdentity> = {}): CellDatabaseIdentity => ({
  address: `db1:3306/${database}`,
  database,
  hostname: 'db1',
  port: 3306,
  server_id: 1,
  server_uuid: null,
  ...over,
})

const verdicts = (s: Snapshot) => unprovenCells(buildModel(s)).map((u) => [u.label, u.reasons])

describe('cell identity: an ordinary cloud proves every cell', () => {
  it('a clean cloud: nothing unproven, no finding', () => {
    const s = cloud().b.build()
    expect(verdicts(s)).toEqual([])
    expect(runChecks(buildModel(s), {checks: ['cells']}).findings.filter((f) => f.code === 'cell.identity-unproven')).toEqual([])
  })

  it('stale host mappings of hosts deleted by hand still pass while at least half are known', () => {
    const {b} = cloud()
    // A host whose service was deleted keeps its soft-deleted rows: still known to the cell.
    b.deleteComputeService('c1-d', {keepHostMapping: true, keepProvider: true})
    b.deleteComputeService('c1-c', {keepHostMapping: true, keepProvider: true})
    const s = b.build()
    expect(verdicts(s)).toEqual([])
    // Archived (no row left at all), two of cell2's two hosts: half of the mappings is not enough...
    const t = cloud().b
    t.deleteComputeService('c2-a', {keepHostMapping: true, keepProvider: true})
    const u = t.build()
    u.nova.services = u.nova.services.filter((r) => r.host !== 'c2-a')
    u.nova.compute_nodes = u.nova.compute_nodes.filter((r) => r.host !== 'c2-a')
    // ...is exactly half: one of two known still proves cell2.
    expect(verdicts(u)).toEqual([])
  })

  it('a new cell with nothing mapped yet proves nothing and contradicts nothing', () => {
    const {b, cell2} = cloud()
    const s = b.build()
    const cell2Id = s.cells.find((c) => c.uuid === cell2)!.id
    s.nova_api.host_mappings = s.nova_api.host_mappings.filter((h) => h.cell_id !== cell2Id)
    s.nova_api.instance_mappings = s.nova_api.instance_mappings.filter((m) => m.cell_id !== cell2Id)
    expect(verdicts(s)).toEqual([])
  })

  it('mappings of deleted instances (queued_for_delete) do not count: their rows may be archived', () => {
    const {b, cell1} = cloud()
    const s = b.build()
    const gone = s.nova.instances.filter((i) => i.cell_uuid === cell1).slice(0, 6)
    for (const m of s.nova_api.instance_mappings) if (gone.some((g) => g.uuid === m.instance_uuid)) m.queued_for_delete = true
    s.nova.instances = s.nova.instances.filter((i) => !gone.includes(i))
    expect(verdicts(s)).toEqual([])
    // Not queued for delete: nova_api believes them live, and the cell has 2 of 8.
    for (const m of s.nova_api.instance_mappings) m.queued_for_delete = false
    expect(verdicts(s)).toEqual([
      [
        'cell1',
        [
          "cell1's database (10.0.0.6/nova_cell1) has 4 of the 4 hosts that host_mappings map to cell1 and 2 of the 8 live instances that instance_mappings map there: it is not cell1's database",
        ],
      ],
    ])
  })

  it('instance mappings pointing at cell0 for instances live in cell1 are wrong-cell mappings, not evidence against cell0', () => {
    const {b, cell1} = cloud()
    const s = b.build()
    const cell0Id = s.cells.find((c) => c.uuid === CELL0_UUID)!.id
    for (const i of s.nova.instances.filter((x) => x.cell_uuid === cell1).slice(0, 3))
      s.nova_api.instance_mappings.find((m) => m.instance_uuid === i.uuid)!.cell_id = cell0Id
    expect(verdicts(s)).toEqual([])
    expect(runChecks(buildModel(s), {checks: ['cells']}).findings.map((f) => f.code)).toEqual(Array(3).fill('cell.instance-mapped-wrong-cell'))
  })
  it('a uuid with two mappings is counted once, by its last mapping', () => {
    const {b, cell1, cell2} = cloud()
    const s = b.build()
    const cell2Id = s.cells.find((c) => c.uuid === cell2)!.id
    const reasons = () => unprovenCells(buildModel(s)).flatMap((u) => u.reasons)
    // Four allocation consumers whose instance rows are gone, and three uuids nothing else knows:
    // each mapped to cell2 (unqueued) and once more queued for delete (which does not count).
    const gone = s.nova.instances.filter((i) => i.cell_uuid === cell1 && i.deleted === 0).slice(0, 4)
    s.nova.instances = s.nova.instances.filter((i) => !gone.includes(i))
    const uuids = [...gone.map((i) => i.uuid), ...[1, 2, 3].map((k) => `00000000-0000-4000-8000-00000000000${k}`)]
    const proto = s.nova_api.instance_mappings.find((m) => m.instance_uuid === gone[0].uuid)!
    s.nova_api.instance_mappings = s.nova_api.instance_mappings.filter((m) => !uuids.includes(m.instance_uuid))
    const toCell2 = uuids.map((u, k) => ({...proto, id: 900 + k, instance_uuid: u, cell_id: cell2Id, queued_for_delete: false}))
    const queued = uuids.map((u, k) => ({...proto, id: 950 + k, instance_uuid: u, queued_for_delete: true}))
    const base = s.nova_api.instance_mappings
    s.nova_api.instance_mappings = [...toCell2, ...base, ...queued]
    expect(reasons()).toEqual([])
    // The cell2 mappings last: cell2 has 2 of the 9 live instances mapped there.
    s.nova_api.instance_mappings = [...queued, ...base, ...toCell2]
    expect(reasons()).toEqual([
      "cell2's database (10.0.0.7/nova_cell2) has 2 of the 2 hosts that host_mappings map to cell2 and 2 of the 9 live instances that instance_mappings map there: it is not cell2's database",
    ])
  })
})

describe('cell identity: the wrong databases of issue 25 are unproven', () => {
  it('an empty, freshly synced database as cell1: 0 of the mapped hosts and instances', () => {
    const {b, cell1} = cloud()
    const s = withoutCell(b.build(), cell1)
    expect(verdicts(s)).toEqual([
      [
        'cell1',
        [
          "cell1's database (10.0.0.6/nova_cell1) has 0 of the 4 hosts that host_mappings map to cell1 and 0 of the 8 live instances that instance_mappings map there: it is not cell1's database",
        ],
      ],
    ])
    const [f] = runChecks(buildModel(s), {checks: ['cells']}).findings.filter((x) => x.code === 'cell.identity-unproven')
    expect(f.severity).toBe('error')
    expect(f.subject).toEqual({cell: 'cell1', cell_uuid: cell1})
    expect(f.evidence).toMatchObject({hosts: {mapped: 4, found: 0, elsewhere: 0}, instances: {mapped: 8, found: 0, elsewhere: 0}})
  })

  it('hosts agree but the instances do not (a copy of another cloud with the same host names): unproven', () => {
    const {b, cell1} = cloud()
    const s = b.build()
    s.nova.instances = s.nova.instances.filter((r) => r.cell_uuid !== cell1)
    expect(verdicts(s)).toEqual([
      [
        'cell1',
        [
          "cell1's database (10.0.0.6/nova_cell1) has 4 of the 4 hosts that host_mappings map to cell1 and 0 of the 8 live instances that instance_mappings map there: it is not cell1's database",
        ],
      ],
    ])
  })

  it('a cell with only hosts mapped (no instances yet) is judged by its hosts', () => {
    const {b, cell2} = cloud()
    const s = withoutCell(b.build(), cell2)
    const cell2Id = s.cells.find((c) => c.uuid === cell2)!.id
    s.nova_api.instance_mappings = s.nova_api.instance_mappings.filter((m) => m.cell_id !== cell2Id)
    expect(verdicts(s)).toEqual([
      [
        'cell2',
        [
          "cell2's database (10.0.0.7/nova_cell2) has 0 of the 2 hosts that host_mappings map to cell2 and 0 of the 0 live instances that instance_mappings map there: it is not cell2's database",
        ],
      ],
    ])
  })

  it("cell0's database holds computes (cell1's database given as cell0)", () => {
    const {b, cell1} = cloud()
    const s = b.build()
    // What a read of cell1's database as cell0 gives: cell1's rows, twice, and cell0's own gone.
    s.nova.instances = s.nova.instances.filter((r) => r.cell_uuid !== CELL0_UUID)
    for (const t of ['services', 'compute_nodes', 'instances'] as const) {
      const rows = s.nova[t] as Array<{cell_uuid: string}>
      rows.push(...rows.filter((r) => r.cell_uuid === cell1).map((r) => ({...r, cell_uuid: CELL0_UUID})))
    }
    s.cells.find((c) => c.uuid === CELL0_UUID)!.identity = id('nova_cell1')
    s.cells.find((c) => c.uuid === cell1)!.identity = id('nova_cell1')
    const v = verdicts(s)
    expect(v.map(([label]) => label)).toEqual(['cell0', 'cell1'])
    expect(v[0][1]).toEqual([
      "cell0's database (db1:3306/nova_cell1) holds 4 live nova-compute services and 4 live compute nodes, which cell0 never has: it is not cell0's database",
      'cell0 and cell1 read the same database (db1:3306/nova_cell1, server db1, server_id 1): one database cannot serve two cells',
    ])
    expect(v[1][1]).toEqual(['cell1 and cell0 read the same database (db1:3306/nova_cell1, server db1, server_id 1): one database cannot serve two cells'])
  })

  it("a failed build mapped to cell0 that cell0's database does not have: unproven", () => {
    const {b} = cloud()
    const s = b.build()
    const cell0Id = s.cells.find((c) => c.uuid === CELL0_UUID)!.id
    s.nova_api.instance_mappings.push({
      id: 999,
      instance_uuid: 'f0000000-0000-4000-8000-000000000001',
      cell_id: cell0Id,
      project_id: 'p',
      user_id: 'u',
      queued_for_delete: false,
      created_at: null,
    })
    expect(verdicts(s)).toEqual([
      ['cell0', ["cell0's database (10.0.0.5/nova_cell0) has 0 of the 1 live instance that instance_mappings map there: it is not cell0's database"]],
    ])
  })

  it('one database reached by two cell mappings: the same server and schema, whatever the URL', () => {
    const {b, cell1, cell2} = cloud()
    const s = b.build()
    s.cells.find((c) => c.uuid === cell1)!.identity = id('nova_cell1')
    s.cells.find((c) => c.uuid === cell2)!.identity = id('nova_cell1', {address: 'db-vip:3306/nova_cell1'})
    expect(verdicts(s).map(([label]) => label)).toEqual(['cell1', 'cell2'])
    // Another schema on the same server, or the same schema name on another server: two databases.
    s.cells.find((c) => c.uuid === cell2)!.identity = id('nova_cell2')
    expect(verdicts(s)).toEqual([])
    s.cells.find((c) => c.uuid === cell2)!.identity = id('nova_cell1', {hostname: 'db2'})
    expect(verdicts(s)).toEqual([])
    // MySQL: the server uuid decides.
    s.cells.find((c) => c.uuid === cell1)!.identity = id('nova_cell1', {hostname: 'a', server_uuid: 'u-1'})
    s.cells.find((c) => c.uuid === cell2)!.identity = id('nova_cell1', {hostname: 'b', server_uuid: 'u-1'})
    expect(verdicts(s).map(([label]) => label)).toEqual(['cell1', 'cell2'])
    // Galera: two nodes (other hosts, ports, the same server_id) of one cluster hold the same data.
    const node = (n: number, database: string, cluster = 'c-1') =>
      id(database, {address: `10.0.0.${n}:3306/${database}`, hostname: `galera-${n}`, wsrep: {node_name: `galera-${n}`, sync_wait: 1, cluster_uuid: cluster}})
    s.cells.find((c) => c.uuid === cell1)!.identity = node(1, 'nova_cell1')
    s.cells.find((c) => c.uuid === cell2)!.identity = node(2, 'nova_cell1')
    expect(verdicts(s).map(([label]) => label)).toEqual(['cell1', 'cell2'])
    s.cells.find((c) => c.uuid === cell2)!.identity = node(2, 'nova_cell1', 'c-2')
    expect(verdicts(s)).toEqual([])
    s.cells.find((c) => c.uuid === cell2)!.identity = node(2, 'nova_cell2')
    expect(verdicts(s)).toEqual([])
  })

  it('a duplicate cell_mappings row, no identity recorded: the same services rows read twice', () => {
    const {b, cell1} = cloud()
    const s = b.build()
    s.cells.push({...s.cells.find((c) => c.uuid === cell1)!, id: 99, uuid: 'dddddddd-0000-4000-8000-000000000099', name: 'cell1-copy'})
    for (const t of ['services', 'compute_nodes', 'instances'] as const) {
      const rows = s.nova[t] as Array<{cell_uuid: string}>
      rows.push(...rows.filter((r) => r.cell_uuid === cell1).map((r) => ({...r, cell_uuid: 'dddddddd-0000-4000-8000-000000000099'})))
    }
    expect(verdicts(s)).toEqual([
      ['cell1', ['cell1 and cell1-copy read the same database (10.0.0.6/nova_cell1): one database cannot serve two cells']],
      ['cell1-copy', ['cell1-copy and cell1 read the same database (10.0.0.6/nova_cell1): one database cannot serve two cells']],
    ])
  })

  it('an unreadable cell is not judged here (the outage rule covers it)', () => {
    const {b, cell1} = cloud()
    const s = withoutCell(b.build(), cell1)
    const c = s.cells.find((x) => x.uuid === cell1)!
    c.status = 'unavailable'
    c.error = 'connect ECONNREFUSED'
    expect(verdicts(s)).toEqual([])
  })
})
