/**
 * cells map-instances and discover-hosts on MariaDB: planted mapping faults (seed 004's instance in
 * cell0 and cell1, a host nova-manage will never discover), repaired with the real executor.
 */
import {readFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {duplicateWinner, planMapInstances} from '../../src/lib/repairs/cells.js'
import {planDiscoverHosts} from '../../src/lib/repairs/discover-hosts.js'
import {planUndo, validateUndoFile} from '../../src/lib/repairs/undo.js'
import {verifyInstance} from '../../src/lib/repairs/verify-instance.js'
import {baseCloud, nextId} from './faults.js'
import {type RepairWorld, diffDumps, findingsOf, repairWorld, tableChanges} from './support.js'

const CELL_CODES = ['cell.instance-unmapped', 'cell.instance-mapped-wrong-cell', 'cell.instance-duplicate', 'cell.host-unmapped', 'cell.host-mapping-stale']

function cellsCloud(): {snapshot: Snapshot; ids: Record<string, string>} {
  const {b} = baseCloud(21)
  const unmapped = b.addInstance('compute1', 'm1.small').row.uuid
  const nullCell = b.addInstance('compute1', 'm1.small').row.uuid
  const wrongCell = b.addInstance('compute2', 'm1.small').row.uuid
  const deletedUnmapped = b.addInstance('compute2', 'm1.small').row.uuid
  b.deleteInstance(deletedUnmapped)
  const dup = b.addInstance('compute2', 'm1.small').row.uuid
  const s = b.build()
  const cell0 = s.cells.find((c) => c.uuid === CELL0_UUID)!
  s.nova_api.instance_mappings = s.nova_api.instance_mappings.filter((m) => m.instance_uuid !== unmapped && m.instance_uuid !== deletedUnmapped)
  s.nova_api.instance_mappings.find((m) => m.instance_uuid === nullCell)!.cell_id = null
  s.nova_api.instance_mappings.find((m) => m.instance_uuid === wrongCell)!.cell_id = cell0.id
  // Seed 004: the build failed over to cell0 (ERROR) and was also created in cell1; the mapping says cell0.
  const live = s.nova.instances.find((i) => i.uuid === dup)!
  s.nova.instances.push({...live, cell_uuid: CELL0_UUID, id: 1, host: null, node: null, vm_state: 'error', task_state: null, updated_at: '2024-05-01 00:00:00'})
  s.nova_api.instance_mappings.find((m) => m.instance_uuid === dup)!.cell_id = cell0.id
  // A host nova-manage discover_hosts skips forever: mapped = 1, no host mapping.
  s.nova_api.host_mappings = s.nova_api.host_mappings.filter((h) => h.host !== 'compute2')
  for (const cn of s.nova.compute_nodes) if (cn.host === 'compute2') cn.mapped = 1
  // And a mapping of a host that is gone.
  s.nova_api.host_mappings.push({id: nextId(s.nova_api.host_mappings), cell_id: s.cells.find((c) => c.name === 'cell1')!.id, host: 'ghost'})
  return {snapshot: s, ids: {unmapped, nullCell, wrongCell, deletedUnmapped, dup}}
}

describe('cells repairs (MariaDB)', () => {
  let world: RepairWorld
  let ids: Record<string, string>
  let snapshot: Snapshot

  beforeAll(async () => {
    const c = cellsCloud()
    ids = c.ids
    snapshot = c.snapshot
    world = await repairWorld('rcells', c.snapshot)
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('plants every cell code and verify-instance names each state', async () => {
    expect(new Set((await findingsOf(world, CELL_CODES)).map((f) => f.code))).toEqual(new Set(CELL_CODES))
    const model = await world.model()
    expect(verifyInstance(model, ids.unmapped).state).toBe('unmapped')
    expect(verifyInstance(model, ids.nullCell)).toMatchObject({state: 'no-cell', nova_manage_exit_code: 2})
    expect(verifyInstance(model, ids.wrongCell).state).toBe('mapped-to-wrong-cell')
    expect(verifyInstance(model, ids.dup).state).toBe('live-in-several-cells')
    expect(verifyInstance(model, 'aaaaaaaa-0000-4000-8000-000000000000')).toMatchObject({state: 'unmapped', nova_manage_exit_code: 1})
  })

  it('picks the live, non-error copy of a duplicate and refuses to guess otherwise', () => {
    const model = buildModel(snapshot)
    const copies = model.liveInstances(ids.dup)
    expect(duplicateWinner(copies)?.cell_uuid).not.toBe(CELL0_UUID)
    expect(duplicateWinner(copies.map((i) => ({...i, vm_state: 'active'})))).toBeUndefined()
  })

  it('--max-count batches: one instance per run, partial until done', async () => {
    const plan = planMapInstances(await world.model(), {maxCount: 1})
    expect(plan.partial).toBe(true)
    expect(new Set(plan.steps.filter((s) => s.op !== 'check').map((s) => s.code))).toEqual(new Set(['cell.instance-duplicate']))
  })

  it('map-instances: the mappings nova-manage would create, fixed cell ids, the cell0 copy soft-deleted; audit clean; undo exact', async () => {
    const model = await world.model()
    const cell1 = model.snapshot.cells.find((c) => c.name === 'cell1')!
    const plan = planMapInstances(model)
    expect(plan.partial).toBeUndefined()
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())

    const im = tableChanges(changes, 'nova_api/instance_mappings')
    const created = im.filter((c) => c.before === null).map((c) => c.after as Record<string, unknown>)
    expect(created.map((m) => m.instance_uuid).sort()).toEqual([ids.unmapped, ids.deletedUnmapped].sort())
    for (const m of created) {
      const inst = model.snapshot.nova.instances.find((i) => i.uuid === m.instance_uuid)!
      // nova-manage: cell of the instance, project and user from the instance, queued_for_delete false.
      expect(m).toMatchObject({cell_id: cell1.id, project_id: inst.project_id, user_id: inst.user_id, queued_for_delete: 0, updated_at: null})
    }
    const updated = im.filter((c) => c.before !== null)
    expect(updated.map((c) => (c.after as {instance_uuid: string}).instance_uuid).sort()).toEqual([ids.nullCell, ids.wrongCell, ids.dup].sort())
    for (const c of updated) expect((c.after as {cell_id: number}).cell_id).toBe(cell1.id)

    const inst = tableChanges(changes, 'cell:00000000-0000-0000-0000-000000000000/instances')
    expect(inst).toHaveLength(1)
    const [b, a] = [inst[0].before as Record<string, unknown>, inst[0].after as Record<string, unknown>]
    expect(a.deleted).toBe(a.id)
    expect(a.deleted_at).not.toBeNull()
    expect(a.updated_at).toBe(b.updated_at) // oslo.db soft_delete keeps updated_at
    const extra = tableChanges(changes, 'cell:00000000-0000-0000-0000-000000000000/instance_extra')
    expect(extra.map((c) => (c.after as {deleted: number; id: number}).deleted)).toEqual(extra.map((c) => (c.after as {id: number}).id))
    expect(new Set(changes.map((c) => c.table))).toEqual(
      new Set([
        'nova_api/instance_mappings',
        'cell:00000000-0000-0000-0000-000000000000/instances',
        'cell:00000000-0000-0000-0000-000000000000/instance_extra',
      ]),
    )

    expect(await findingsOf(world, ['cell.instance-unmapped', 'cell.instance-mapped-wrong-cell', 'cell.instance-duplicate'])).toEqual([])
    expect(planMapInstances(await world.model()).steps.filter((s) => s.op !== 'check')).toEqual([])

    const undo = validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))
    await world.apply(planUndo(undo))
    expect(diffDumps(before, await world.dump())).toEqual([])
    await world.apply(planMapInstances(await world.model())) // leave it repaired for the next test
  })

  it('discover-hosts maps the host nova-manage skips, sets mapped, prunes the ghost; undo exact', async () => {
    const model = await world.model()
    const dry = planDiscoverHosts(model)
    expect(dry.skipped.map((s) => s.code)).toContain('cell.host-mapping-stale') // no --prune: reported, kept
    const plan = planDiscoverHosts(model, {prune: true})
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())
    const hm = tableChanges(changes, 'nova_api/host_mappings')
    expect(hm.filter((c) => c.before === null).map((c) => (c.after as {host: string}).host)).toEqual(['compute2'])
    expect(hm.filter((c) => c.after === null).map((c) => (c.before as {host: string}).host)).toEqual(['ghost'])
    expect(new Set(changes.map((c) => c.table))).toEqual(new Set(['nova_api/host_mappings']))
    expect(await findingsOf(world, ['cell.host-unmapped', 'cell.host-mapping-stale'])).toEqual([])
    expect(planDiscoverHosts(await world.model(), {prune: true}).steps.filter((s) => s.op !== 'check')).toEqual([])
    const undo = validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))
    await world.apply(planUndo(undo))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})
