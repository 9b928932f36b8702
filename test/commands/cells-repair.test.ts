/**
 * cells map-instances and discover-hosts through the built CLI on a generated two-cell cloud, against
 * an oracle of what `nova-manage cell_v2 map_instances` / `discover_hosts` do, computed here straight
 * from the databases (every instance row of the cell, deleted ones too, oldest first by created_at
 * then id; project and user from the instance; rows already mapped skipped).
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {formatTs} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'
import {generateCloud} from '../support/generator.js'
import {type RepairWorld, closeConnection, diffDumps, openConnection, repairWorld, tableChanges} from '../repairs/support.js'

interface Expected {
  instance_uuid: string
  cell_id: number
  project_id: string
  user_id: string | null
}

/** nova-manage map_instances over every cell, as SQL: the rows it would insert, in its order. */
async function novaManageOracle(world: RepairWorld): Promise<Expected[]> {
  const api = await openConnection(world.cloud.apiUrl)
  const out: Expected[] = []
  try {
    const [cells] = await api.query("SELECT id, name FROM cell_mappings WHERE uuid <> '00000000-0000-0000-0000-000000000000' ORDER BY id")
    const [mapped] = await api.query('SELECT instance_uuid FROM instance_mappings')
    const have = new Set((mapped as Array<{instance_uuid: string}>).map((m) => m.instance_uuid))
    for (const cell of cells as Array<{id: number; name: string}>) {
      const conn = await openConnection(world.cloud.cellUrls[cell.name])
      try {
        const [rows] = await conn.query('SELECT uuid, project_id, user_id FROM instances ORDER BY created_at, id')
        for (const r of rows as Array<{uuid: string; project_id: string; user_id: string | null}>) {
          if (have.has(r.uuid)) continue // DBDuplicateEntry: skipped
          have.add(r.uuid)
          out.push({instance_uuid: r.uuid, cell_id: cell.id, project_id: r.project_id, user_id: r.user_id})
        }
      } finally {
        await closeConnection(conn)
      }
    }
  } finally {
    await closeConnection(api)
  }
  return out
}

describe('cells map-instances / discover-hosts vs nova-manage (CLI, MariaDB, generated cloud)', () => {
  let world: RepairWorld
  let src: string[]
  let tmp: string
  const state = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]

  beforeAll(async () => {
    const g = generateCloud({
      seed: 91,
      cells: 2,
      hostsPerCell: 3,
      instances: 30,
      pinnedHostFraction: 0,
      now: formatTs(Date.now()),
      faults: {'cell.instance-unmapped': 4, 'cell.host-unmapped': 1, 'cell.host-mapping-stale': 1},
    })
    // A deleted instance without a mapping (archived mappings, a restore): nova-manage maps it too.
    const victim = g.snapshot.nova.instances.find((i) => i.deleted === 0 && g.snapshot.nova_api.instance_mappings.some((m) => m.instance_uuid === i.uuid))!
    victim.deleted = victim.id
    victim.deleted_at = victim.updated_at
    victim.vm_state = 'deleted'
    g.snapshot.nova_api.instance_mappings = g.snapshot.nova_api.instance_mappings.filter((m) => m.instance_uuid !== victim.uuid)
    g.snapshot.placement.allocations = g.snapshot.placement.allocations.filter((a) => a.consumer_id !== victim.uuid)
    g.snapshot.placement.consumers = g.snapshot.placement.consumers.filter((c) => c.uuid !== victim.uuid)
    world = await repairWorld('ccells', g.snapshot, ['cell1', 'cell2'])
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-cells-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('map-instances creates exactly the mappings nova-manage would (instance, cell, project, user), then exits 0', async () => {
    const expected = await novaManageOracle(world)
    expect(expected.length).toBe(5)
    const before = await world.dump()
    const r = await cloudctl(['cells', 'map-instances', ...src, '--apply', '--yes', ...state('m1')])
    expect(r.exitCode, r.stderr).toBe(4)
    const changes = diffDumps(before, await world.dump())
    expect(new Set(changes.map((c) => c.table))).toEqual(new Set(['nova_api/instance_mappings']))
    const created = tableChanges(changes, 'nova_api/instance_mappings').map((c) => c.after as Record<string, unknown>)
    expect(changes.every((c) => c.before === null)).toBe(true)
    const pick = (m: Record<string, unknown>) => ({instance_uuid: m.instance_uuid, cell_id: m.cell_id, project_id: m.project_id, user_id: m.user_id})
    // Same rows, inserted in nova-manage's order (ids ascend with created_at within each cell).
    expect(created.sort((a, b) => Number(a.id) - Number(b.id)).map(pick)).toEqual(expected)
    for (const m of created) expect(m).toMatchObject({queued_for_delete: 0})
    expect((await cloudctl(['cells', 'map-instances', ...src])).exitCode).toBe(0)
    const undo = await cloudctl(['repair', 'undo', r.stdout.match(/Undo file: (\S+)/)![1], ...src, '--apply', '--yes', ...state('m1u')])
    expect(undo.exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('--host H maps only the instances on H; an unknown --host or --cell is exit 2, as on the audits', async () => {
    const expected = await novaManageOracle(world)
    const snap = await world.capture()
    const rowOf = (uuid: string) => snap.nova.instances.find((i) => i.uuid === uuid)!
    // The host with the most unmapped instances, but not all of them: the filter must leave some out.
    const counts = new Map<string, number>()
    for (const e of expected) {
      const h = rowOf(e.instance_uuid).host
      if (h) counts.set(h, (counts.get(h) ?? 0) + 1)
    }
    const host = [...counts].sort((a, b) => b[1] - a[1])[0][0]
    const onHost = expected.filter((e) => rowOf(e.instance_uuid).host === host || rowOf(e.instance_uuid).node === host)
    expect(onHost.length).toBeGreaterThan(0)
    expect(onHost.length).toBeLessThan(expected.length)
    const before = await world.dump()
    const r = await cloudctl(['cells', 'map-instances', ...src, '--host', host, '--apply', '--yes', ...state('h1')])
    expect(r.exitCode, r.stderr).toBe(4)
    const created = tableChanges(diffDumps(before, await world.dump()), 'nova_api/instance_mappings').map(
      (c) => (c.after as {instance_uuid: string}).instance_uuid,
    )
    expect(created.sort()).toEqual(onHost.map((e) => e.instance_uuid).sort())
    // The rest of the cloud is still to do.
    expect((await cloudctl(['cells', 'map-instances', ...src])).exitCode).toBe(3)
    expect((await cloudctl(['cells', 'map-instances', ...src, '--host', host])).exitCode).toBe(0)
    const undo = await cloudctl(['repair', 'undo', r.stdout.match(/Undo file: (\S+)/)![1], ...src, '--apply', '--yes', ...state('h1u')])
    expect(undo.exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])

    for (const verb of ['map-instances', 'discover-hosts']) {
      const h = await cloudctl(['cells', verb, ...src, '--host', 'cmp-nowhere-99'])
      expect(h.exitCode).toBe(2)
      expect(h.stderr).toMatch(/^Error: host "cmp-nowhere-99" is not a service, compute node, host mapping or resource provider of this cloud$/m)
      expect(h.stderr).toMatch(/^Hint: See `cloudctl hosts list` for the hosts\.$/m)
      expect(h.stdout).toBe('')
      const c = await cloudctl(['cells', verb, ...src, '--cell', 'cell9'])
      expect(c.exitCode).toBe(2)
      expect(c.stderr).toMatch(/^Error: cell "cell9" is not in cell_mappings$/m)
      expect(c.stderr).toMatch(/^Hint: Known cells: .*cell1, cell2$/m)
    }
  })

  it('--max-count batches like nova-manage (exit 6 where nova-manage exits 1, then 4, then 0); an existing marker row is left alone', async () => {
    const expected = await novaManageOracle(world)
    // nova-manage's marker from an interrupted run: project_id/user_id INSTANCE_MIGRATION_MARKER, uuid with spaces.
    const api = await openConnection(world.cloud.apiUrl)
    await api.query(
      "INSERT INTO instance_mappings (created_at, instance_uuid, cell_id, project_id, user_id, queued_for_delete) VALUES (UTC_TIMESTAMP(), 'aaaaaaaa bbbb cccc dddd eeeeeeeeeeee', NULL, 'INSTANCE_MIGRATION_MARKER', 'INSTANCE_MIGRATION_MARKER', 0)",
    )
    await closeConnection(api)
    const before = await world.dump()
    const codes: number[] = []
    for (let i = 0; i < 5; i++) {
      const r = await cloudctl(['cells', 'map-instances', ...src, '--max-count', '2', '--apply', '--yes', ...state(`b${i}`)])
      codes.push(r.exitCode)
      if (r.exitCode === 0) break
    }
    expect(codes).toEqual([6, 6, 4, 0])
    const created = tableChanges(diffDumps(before, await world.dump()), 'nova_api/instance_mappings')
    expect(created.every((c) => c.before === null)).toBe(true)
    expect(
      created
        .map((c) => c.after as {id: number; instance_uuid: string})
        .sort((a, b) => a.id - b.id)
        .map((m) => m.instance_uuid),
    ).toEqual(expected.map((e) => e.instance_uuid))
    const marker = (await world.dump()).get('nova_api/instance_mappings')!
    expect([...marker.values()].filter((j) => j.includes('INSTANCE_MIGRATION_MARKER'))).toHaveLength(1)
    expect(runChecks(buildModel(await world.capture())).findings.filter((f) => JSON.stringify(f).includes('aaaaaaaa bbbb'))).toEqual([]) // not an instance mapping to audit
    expect((await cloudctl(['cells', 'map-instances', '--max-count', '0', ...src])).exitCode).toBe(2) // nova-manage: 127
  })

  it('discover-hosts --host H plans only H: its host mapping, or with --prune the stale mapping named H', async () => {
    const findings = runChecks(buildModel(await world.capture())).findings
    const unmapped = findings.filter((f) => f.code === 'cell.host-unmapped').map((f) => f.subject.host!)
    const stale = findings.filter((f) => f.code === 'cell.host-mapping-stale').map((f) => f.subject.host!)
    expect(unmapped).toHaveLength(1)
    expect(stale).toHaveLength(1)
    const before = await world.dump()
    // The stale mapping's host only: the unmapped host is left alone, and nothing else of the cloud is in the plan.
    const p = await cloudctl(['cells', 'discover-hosts', '--prune', '--host', stale[0], ...src, '--apply', '--yes', ...state('hp')])
    expect(p.exitCode, p.stderr).toBe(4)
    const changes = diffDumps(before, await world.dump())
    expect(changes.map((c) => [c.table, (c.before as {host: string}).host, c.after])).toEqual([['nova_api/host_mappings', stale[0], null]])
    expect((await cloudctl(['cells', 'discover-hosts', '--prune', '--host', stale[0], ...src])).exitCode).toBe(0)
    // The unmapped host is still to do, under its own --host.
    const u = await cloudctl(['cells', 'discover-hosts', '--host', unmapped[0], ...src, '--json'])
    expect(u.exitCode, u.stderr).toBe(3)
    expect(u.stdout).toContain(unmapped[0])
    expect(u.stdout).not.toContain(stale[0])
    const undo = await cloudctl(['repair', 'undo', p.stdout.match(/Undo file: (\S+)/)![1], ...src, '--apply', '--yes', ...state('hpu')])
    expect(undo.exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('discover-hosts --by-service maps the host by its service and leaves compute_nodes alone; without --prune the stale mapping stays', async () => {
    const model = buildModel(await world.capture())
    const unmapped = runChecks(model)
      .findings.filter((f) => f.code === 'cell.host-unmapped')
      .map((f) => f.subject.host)
    expect(unmapped).toHaveLength(1)
    const before = await world.dump()
    const r = await cloudctl(['cells', 'discover-hosts', '--by-service', ...src, '--apply', '--yes', ...state('d1')])
    expect(r.exitCode, r.stderr).toBe(4)
    expect(r.stdout).toMatch(/Not repaired[^]*cell\.host-mapping-stale[^]*--prune/)
    const changes = diffDumps(before, await world.dump())
    expect(new Set(changes.map((c) => c.table))).toEqual(new Set(['nova_api/host_mappings']))
    expect(changes.map((c) => [c.before, (c.after as {host: string}).host])).toEqual([[null, unmapped[0]]])
    const cell = model.snapshot.cells.find((c) => c.uuid === model.liveComputeNodes.find((cn) => cn.host === unmapped[0])!.cell_uuid)!
    expect((changes[0].after as {cell_id: number}).cell_id).toBe(cell.id)
    // The stale mapping is left for --prune: a finding this run did not repair, so exit 3.
    expect((await cloudctl(['cells', 'discover-hosts', '--by-service', ...src])).exitCode).toBe(3)
  })

  it('discover-hosts --prune removes the stale host mapping only (exit 4, then 0)', async () => {
    const stale = runChecks(buildModel(await world.capture())).findings.filter((f) => f.code === 'cell.host-mapping-stale')
    expect(stale).toHaveLength(1)
    const before = await world.dump()
    const r = await cloudctl(['cells', 'discover-hosts', '--prune', ...src, '--apply', '--yes', ...state('p1')])
    expect(r.exitCode, r.stderr).toBe(4)
    const changes = diffDumps(before, await world.dump())
    expect(changes.map((c) => [c.table, (c.before as {host: string}).host, c.after])).toEqual([['nova_api/host_mappings', stale[0].subject.host, null]])
    expect((await cloudctl(['cells', 'discover-hosts', '--prune', ...src])).exitCode).toBe(0)
    expect(runChecks(buildModel(await world.capture())).findings.filter((f) => f.code.startsWith('cell.host-'))).toEqual([])
  })
})
