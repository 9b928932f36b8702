/**
 * repair providers on MariaDB: seed 004's stale provider after `compute service delete` (with a
 * child provider, traits, an aggregate link and an evacuation leftover), a stale provider a live
 * instance still sits on (refused), and the uuid mismatch after a hostname change, repaired with
 * both strategies. Each: audit clean, only intended rows changed, generations bumped, undo exact.
 */
import {readFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {RepairAbortedError} from '../../src/lib/errors.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {planProviders} from '../../src/lib/repairs/providers.js'
import {planUndo, validateUndoFile} from '../../src/lib/repairs/undo.js'
import {addAllocations, baseCloud} from './faults.js'
import {type RepairWorld, type RowChange, closeConnection, diffDumps, findingsOf, openConnection, repairWorld, tableChanges} from './support.js'

const PROVIDER_CODES = ['provider.stale', 'provider.uuid-mismatch', 'provider.missing']
const ALL_ALLOC_CODES = [
  'allocation.consumer-deleted',
  'allocation.consumer-unknown',
  'allocation.migration-finished',
  'allocation.evacuation-leftover',
  'allocation.wrong-provider',
  'allocation.missing',
  'allocation.amount-mismatch',
]

function providersCloud(): {snapshot: Snapshot; ids: Record<string, string>} {
  const {b} = baseCloud(51)
  b.addAggregate({name: 'ssd'})
  b.addHost('cell1', {host: 'dead1', vcpus: 16, memory_mb: 32768, local_gb: 500, traits: ['CUSTOM_SSD'], aggregates: ['ssd']})
  b.addChildProvider('dead1', {name: 'dead1_pci_0000_81_00_0', inventories: {CUSTOM_NIC_VF: {total: 8}}, traits: ['CUSTOM_PHYSNET_A']})
  b.addHost('cell1', {host: 'busy1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell1', {host: 'renamed1', vcpus: 16, memory_mb: 32768, local_gb: 500, traits: ['CUSTOM_SSD'], aggregates: ['ssd']})
  b.addChildProvider('renamed1', {name: 'renamed1_pci_0000_81_00_0', inventories: {CUSTOM_NIC_VF: {total: 8}}})
  b.addInstance('compute1', 'm1.small') // bystander
  // dead1 died: one instance evacuated to compute2 (source allocation left), one deleted locally.
  const evacuated = b.addInstance('dead1', 'm1.small').row.uuid
  b.addMigration(evacuated, {type: 'evacuation', status: 'done', dest: 'compute2'})
  const gone = b.addInstance('dead1', 'm1.small').row.uuid
  b.deleteInstance(gone, {keepAllocations: true})
  b.deleteComputeService('dead1', {keepProvider: true})
  // busy1 deleted while an instance still runs there: its allocation is not a leak.
  const stuck = b.addInstance('busy1', 'm1.small').row.uuid
  b.deleteComputeService('busy1', {keepProvider: true})
  // renamed1: the compute node was recreated under a new uuid; the instance lives on.
  const resident = b.addInstance('renamed1', 'm1.small').row.uuid
  const {current} = b.recreateComputeNode('renamed1')
  const s = b.build()
  addAllocations(s, 'deadbeef-0000-4000-8000-0000000000d1', 'dead1_pci_0000_81_00_0', {[b.rcId('CUSTOM_NIC_VF')]: 1})
  // The evacuation left its source allocation behind (nova bug 1679750's sibling).
  addAllocations(s, evacuated, 'dead1', {0: 2, 1: 2048, 2: 20})
  return {snapshot: s, ids: {evacuated, gone, stuck, resident, cnUuid: current.uuid as string}}
}

/** Every provider and allocation finding as 'code host consumer', for before/after comparisons. */
async function findingKeys(world: RepairWorld): Promise<string[]> {
  return (await findingsOf(world, [...PROVIDER_CODES, ...ALL_ALLOC_CODES]))
    .map((f) => `${f.code} ${f.subject.host ?? f.subject.node} ${f.subject.consumer_uuid ?? ''}`.trim())
    .sort()
}

const keyed = (changes: RowChange[], table: string, side: 'before' | 'after') =>
  tableChanges(changes, table)
    .map((c) => c[side])
    .filter((r): r is Record<string, unknown> => r !== null)

describe('repair providers refusals (pure)', () => {
  it('move refuses live allocations on a child provider; a stale provider whose compute node is live is left alone', () => {
    const {snapshot: s, ids} = providersCloud()
    const child = s.placement.resource_providers.find((p) => p.name === 'renamed1_pci_0000_81_00_0')!
    s.placement.allocations.push({
      id: 9000,
      resource_provider_id: child.id,
      consumer_id: ids.resident,
      resource_class_id: s.placement.inventories.find((i) => i.resource_provider_id === child.id)!.resource_class_id,
      used: 1,
    })
    const compute2 = s.nova.services.find((x) => x.host === 'compute2' && x.binary === 'nova-compute')!
    compute2.deleted = compute2.id
    const plan = planProviders(buildModel(s), {strategy: 'move'})
    expect(plan.skipped.find((x) => x.code === 'provider.uuid-mismatch')?.reason).toMatch(/live allocations on child providers \(.*\): use --strategy rekey/)
    expect(plan.skipped.find((x) => x.code === 'provider.stale' && x.subject.includes('compute2'))?.reason).toMatch(/compute node row is still live/)
    expect(plan.steps.some((x) => x.op !== 'check' && JSON.stringify(x).includes(child.uuid))).toBe(false)
    expect(planProviders(buildModel(s), {strategy: 'rekey'}).findings.map((f) => f.code)).toContain('provider.uuid-mismatch')
  })
})

describe('repair providers (MariaDB)', () => {
  let world: RepairWorld
  let ids: Record<string, string>

  beforeAll(async () => {
    const c = providersCloud()
    ids = c.ids
    world = await repairWorld('rprov', c.snapshot)
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('plants both stale providers and the uuid mismatch', async () => {
    const f = await findingsOf(world, PROVIDER_CODES)
    expect(
      f
        .filter((x) => x.code === 'provider.stale')
        .map((x) => x.subject.host)
        .sort(),
    ).toEqual(['busy1', 'dead1'])
    expect(f.filter((x) => x.code === 'provider.uuid-mismatch').map((x) => x.subject.host)).toEqual(['renamed1'])
    expect(f.filter((x) => x.code === 'provider.missing')).toEqual([])
  })

  it('without --strategy the mismatch is reported, not repaired; busy1 is refused (live consumer)', async () => {
    const plan = planProviders(await world.model())
    expect(plan.skipped.find((s) => s.code === 'provider.uuid-mismatch')?.reason).toMatch(/--strategy rekey/)
    expect(plan.skipped.find((s) => s.subject.includes('busy1'))?.reason).toMatch(new RegExp(`refused: consumer\\(s\\) ${ids.stuck}`))
    expect(plan.findings.map((f) => f.code)).toContain('provider.stale')
    // The running instance's allocation is on its own node's provider: not a leak, so repair leaks
    // neither reports nor touches it (provider.stale above carries the story).
    const leaks = planLeaks(await world.model())
    expect(leaks.findings.some((f) => f.subject.includes(ids.stuck))).toBe(false)
    expect(leaks.skipped.some((s) => s.subject.includes(ids.stuck))).toBe(false)
    expect(leaks.steps.some((s) => s.op === 'delete' && s.table === 'allocations' && JSON.stringify(s.expect).includes(ids.stuck))).toBe(false)
  })

  it('aborts with exit 5 and changes nothing when the stale provider generation moves between plan and apply', async () => {
    const plan = planProviders(await world.model())
    const conn = await openConnection(world.cloud.placementUrl)
    await conn.query("UPDATE resource_providers SET generation = generation + 1 WHERE name = 'dead1_pci_0000_81_00_0'")
    await closeConnection(conn)
    const mid = await world.dump()
    const err = await world.apply(plan).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RepairAbortedError)
    expect((err as RepairAbortedError).exitCode).toBe(5)
    expect(diffDumps(mid, await world.dump())).toEqual([])
  })

  it('stale: leaked allocations, traits, aggregate links, inventories, child then root removed; nothing else; undo exact', async () => {
    const model = await world.model()
    const dead = model.providersByName.get('dead1')![0]
    const child = model.providersByName.get('dead1_pci_0000_81_00_0')![0]
    const compute2 = model.providersByName.get('compute2')![0]
    const plan = planProviders(model)
    const findingsBefore = await findingKeys(world)
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())

    expect(
      keyed(changes, 'placement/resource_providers', 'before')
        .filter((r) => changes.some((c) => c.before === r && c.after === null))
        .map((r) => r.id)
        .sort(),
    ).toEqual([dead.id, child.id].sort())
    expect(tableChanges(changes, 'placement/resource_providers').every((c) => c.after === null)).toBe(true) // no generation bumps elsewhere: only dead1's tree lost allocations
    expect(keyed(changes, 'placement/allocations', 'before').every((a) => a.resource_provider_id === dead.id || a.resource_provider_id === child.id)).toBe(true)
    expect(tableChanges(changes, 'placement/allocations').every((c) => c.after === null)).toBe(true)
    expect(new Set(keyed(changes, 'placement/allocations', 'before').map((a) => a.consumer_id))).toEqual(
      new Set([ids.evacuated, ids.gone, 'deadbeef-0000-4000-8000-0000000000d1']),
    )
    // The evacuated instance keeps its allocation on compute2; its consumer generation is bumped.
    const evac = tableChanges(changes, 'placement/consumers').find((c) => (c.before as {uuid: string}).uuid === ids.evacuated)!
    expect((evac.after as {generation: number}).generation).toBe((evac.before as {generation: number}).generation + 1)
    expect((await world.model()).allocationsByConsumer.get(ids.evacuated)!.every((a) => a.resource_provider_id === compute2.id)).toBe(true)
    expect(new Set(keyed(changes, 'placement/resource_provider_traits', 'before').map((t) => t.resource_provider_id))).toEqual(new Set([dead.id, child.id]))
    expect(keyed(changes, 'placement/resource_provider_aggregates', 'before').map((t) => t.resource_provider_id)).toEqual([dead.id])
    expect(new Set(keyed(changes, 'placement/inventories', 'before').map((t) => t.resource_provider_id))).toEqual(new Set([dead.id, child.id]))
    expect(changes.every((c) => c.after === null || c.table === 'placement/consumers')).toBe(true)
    expect(new Set(changes.map((c) => c.table))).toEqual(
      new Set([
        'placement/allocations',
        'placement/consumers',
        'placement/inventories',
        'placement/resource_provider_aggregates',
        'placement/resource_provider_traits',
        'placement/resource_providers',
      ]),
    )

    // Everything about dead1 is gone; busy1 (refused) and renamed1 (no --strategy) are still reported.
    const repaired = (k: string) =>
      k.startsWith('provider.stale dead1') || [ids.evacuated, ids.gone, 'deadbeef-0000-4000-8000-0000000000d1'].some((c) => k.endsWith(c))
    expect(findingsBefore.filter(repaired).length).toBe(4)
    expect(await findingKeys(world)).toEqual(findingsBefore.filter((k) => !repaired(k)))
    expect(planProviders(await world.model()).steps.filter((s) => s.op !== 'check')).toEqual([]) // idempotent

    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('uuid mismatch, --strategy rekey: only the provider uuid and generation change; audit clean; undo exact', async () => {
    const model = await world.model()
    const rp = model.providersByName.get('renamed1')![0]
    const plan = planProviders(model, {strategy: 'rekey', provider: 'renamed1'})
    expect(plan.notes.join('\n')).toMatch(/Restart nova-compute on renamed1/)
    const findingsBefore = await findingKeys(world)
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())
    expect(changes).toHaveLength(1)
    const {uuid, generation, updated_at: _u, ...rest} = changes[0].after as Record<string, unknown>
    const {uuid: oldUuid, generation: oldGen, updated_at: _u2, ...restBefore} = changes[0].before as Record<string, unknown>
    expect([changes[0].table, changes[0].key, oldUuid, uuid, generation]).toEqual([
      'placement/resource_providers',
      String(rp.id),
      rp.uuid,
      ids.cnUuid,
      Number(oldGen) + 1,
    ])
    expect(rest).toEqual(restBefore)
    expect(await findingKeys(world)).toEqual(findingsBefore.filter((k) => k !== 'provider.uuid-mismatch renamed1'))
    expect(planProviders(await world.model(), {strategy: 'rekey', provider: 'renamed1'}).steps.filter((s) => s.op !== 'check')).toEqual([])
    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('uuid mismatch, --strategy move: new provider, allocations moved, old tree removed; audit clean; undo exact', async () => {
    const model = await world.model()
    const old = model.providersByName.get('renamed1')![0]
    const oldChild = model.providersByName.get('renamed1_pci_0000_81_00_0')![0]
    const plan = planProviders(model, {strategy: 'move', provider: 'renamed1'})
    const findingsBefore = await findingKeys(world)
    const before = await world.dump()
    const result = await world.apply(plan)
    const after = await world.dump()
    const changes = diffDumps(before, after)
    const created = tableChanges(changes, 'placement/resource_providers').filter((c) => c.before === null)
    expect(created).toHaveLength(1)
    const fresh = created[0].after as {id: number; uuid: string; name: string; root_provider_id: number; parent_provider_id: number | null}
    expect(fresh).toMatchObject({uuid: ids.cnUuid, name: 'renamed1', root_provider_id: fresh.id, parent_provider_id: null})
    expect(
      tableChanges(changes, 'placement/resource_providers')
        .filter((c) => c.after === null)
        .map((c) => (c.before as {id: number}).id)
        .sort(),
    ).toEqual([old.id, oldChild.id].sort())
    // The resident instance's allocations moved, row for row; its consumer generation + 1.
    const moved = tableChanges(changes, 'placement/allocations')
    expect(moved.length).toBeGreaterThan(0)
    for (const c of moved) {
      const {resource_provider_id: rpBefore, updated_at: _a, ...restBefore} = c.before as Record<string, unknown>
      const {resource_provider_id: rpAfter, updated_at: _b, ...restAfter} = c.after as Record<string, unknown>
      expect([rpBefore, rpAfter, restAfter]).toEqual([old.id, fresh.id, restBefore])
      expect(restBefore.consumer_id).toBe(ids.resident)
    }
    // Inventories, traits and aggregate links of the old root copied onto the new provider.
    const strip = (rows: Record<string, unknown>[]) => rows.map(({id: _i, created_at: _c, updated_at: _u, resource_provider_id: _r, ...rest}) => rest)
    const invAdded = keyed(changes, 'placement/inventories', 'after')
    const invRemoved = keyed(changes, 'placement/inventories', 'before').filter((i) => i.resource_provider_id === old.id)
    expect(strip(invAdded)).toEqual(strip(invRemoved))
    expect(keyed(changes, 'placement/resource_provider_traits', 'after').map((t) => t.trait_id)).toEqual(
      keyed(changes, 'placement/resource_provider_traits', 'before').map((t) => t.trait_id),
    )
    expect(keyed(changes, 'placement/resource_provider_aggregates', 'after').map((t) => t.aggregate_id)).toEqual(
      keyed(changes, 'placement/resource_provider_aggregates', 'before').map((t) => t.aggregate_id),
    )
    expect(new Set(changes.map((c) => c.table))).toEqual(
      new Set([
        'placement/allocations',
        'placement/consumers',
        'placement/inventories',
        'placement/resource_provider_aggregates',
        'placement/resource_provider_traits',
        'placement/resource_providers',
      ]),
    )
    expect(tableChanges(changes, 'placement/consumers').map((c) => (c.after as {uuid: string}).uuid)).toEqual([ids.resident])

    expect(await findingKeys(world)).toEqual(findingsBefore.filter((k) => k !== 'provider.uuid-mismatch renamed1'))
    expect(planProviders(await world.model(), {strategy: 'move', provider: 'renamed1'}).steps.filter((s) => s.op !== 'check')).toEqual([])
    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})

/**
 * A renamed hypervisor as nova 26 leaves it: nova-compute on ren1 made a node and provider named
 * ren1.example.com and deleted node ren1 as an orphan; provider ren1 stayed with the allocations of
 * the server still on node ren1 and of one deleted while it ran there.
 */
function renamedCloud(): {snapshot: Snapshot; ids: Record<string, string>} {
  const {b} = baseCloud(53)
  b.addHost('cell1', {host: 'ren1', vcpus: 16, memory_mb: 32768, local_gb: 500, traits: ['CUSTOM_SSD']})
  b.addInstance('compute1', 'm1.small') // bystander
  const resident = b.addInstance('ren1', 'm1.small').row.uuid
  const gone = b.addInstance('ren1', 'm1.small').row.uuid
  b.deleteInstance(gone, {keepAllocations: true})
  const s = b.build()
  const old = s.nova.compute_nodes.find((cn) => cn.host === 'ren1')!
  const oldRp = s.placement.resource_providers.find((rp) => rp.name === 'ren1')!
  const uuid = '0e9a1c55-7f4e-4c2b-9d3a-5e0f1a2b3c4d'
  const nodeId = Math.max(...s.nova.compute_nodes.map((cn) => cn.id)) + 1
  s.nova.compute_nodes.push({
    ...old,
    id: nodeId,
    uuid,
    hypervisor_hostname: 'ren1.example.com',
    vcpus_used: 0,
    memory_mb_used: 512,
    local_gb_used: 0,
    running_vms: 0,
  })
  old.deleted = old.id
  const rpId = Math.max(...s.placement.resource_providers.map((rp) => rp.id)) + 1
  s.placement.resource_providers.push({...oldRp, id: rpId, uuid, name: 'ren1.example.com', generation: 1, root_provider_id: rpId, parent_provider_id: null})
  let invId = Math.max(...s.placement.inventories.map((i) => i.id))
  for (const inv of s.placement.inventories.filter((i) => i.resource_provider_id === oldRp.id))
    s.placement.inventories.push({...inv, id: ++invId, resource_provider_id: rpId})
  return {snapshot: s, ids: {resident, gone, uuid}}
}

describe('repair providers, duplicate name (MariaDB)', () => {
  let world: RepairWorld
  let ids: Record<string, string>

  beforeAll(async () => {
    const c = renamedCloud()
    ids = c.ids
    world = await repairWorld('rprovdup', c.snapshot)
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('the server takes the live node, its allocations move, the leak goes, the old tree is removed; re-run finds nothing; undo exact', async () => {
    const before0 = await findingsOf(world, ['provider.duplicate-name'])
    expect(before0.map((f) => f.subject.host)).toEqual(['ren1'])
    const model = await world.model()
    const old = model.providersByName.get('ren1')![0]
    const live = model.providersByName.get('ren1.example.com')![0]
    const plan = planProviders(model)
    expect(plan.findings.map((f) => f.code).sort()).toEqual(['allocation.consumer-deleted', 'provider.duplicate-name'])
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())

    const cell1 = `cell:${model.snapshot.cells.find((c) => c.name === 'cell1')!.uuid}/instances`
    const instances = tableChanges(changes, cell1)
    expect(instances.map((c) => [(c.before as {uuid: string}).uuid, (c.before as {node: string}).node, (c.after as {node: string}).node])).toEqual([
      [ids.resident, 'ren1', 'ren1.example.com'],
    ])
    const after = await world.model()
    expect(after.providersByName.get('ren1')).toBeUndefined()
    expect(after.allocationsByConsumer.get(ids.resident)!.map((a) => a.resource_provider_id)).toEqual([live.id, live.id, live.id])
    expect(after.allocationsByConsumer.get(ids.gone) ?? []).toEqual([])
    expect(after.providersById.get(live.id)!.generation).toBe((live.generation ?? 0) + 1)
    expect(keyed(changes, 'placement/resource_provider_traits', 'before').every((t) => t.resource_provider_id === old.id)).toBe(true)
    expect(new Set(changes.map((c) => c.table))).toEqual(
      new Set([
        cell1,
        'placement/allocations',
        'placement/consumers',
        'placement/inventories',
        'placement/resource_provider_traits',
        'placement/resource_providers',
      ]),
    )
    expect(await findingsOf(world, [...PROVIDER_CODES, 'provider.duplicate-name', ...ALL_ALLOC_CODES])).toEqual([])
    expect(planProviders(after).steps.filter((s) => s.op !== 'check')).toEqual([]) // idempotent

    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('refuses while the host has two live nodes, and when the live provider lacks the capacity', async () => {
    const {snapshot: s} = renamedCloud()
    const live = s.placement.resource_providers.find((rp) => rp.name === 'ren1.example.com')!
    for (const inv of s.placement.inventories.filter((i) => i.resource_provider_id === live.id)) inv.total = 1
    const plan = planProviders(buildModel(s))
    expect(plan.skipped.find((x) => x.code === 'provider.duplicate-name')?.reason).toMatch(/over its capacity/)
    expect(plan.steps.filter((x) => x.op !== 'check')).toEqual([])
    const two = renamedCloud().snapshot
    const dead = two.nova.compute_nodes.find((cn) => cn.host === 'ren1' && cn.deleted !== 0)!
    two.nova.compute_nodes.push({...dead, id: 999, uuid: 'aa9a1c55-7f4e-4c2b-9d3a-5e0f1a2b3c4d', hypervisor_hostname: 'ren1-b', deleted: 0})
    expect(planProviders(buildModel(two)).skipped.find((x) => x.code === 'provider.duplicate-name')?.reason).toMatch(/2 live compute nodes/)
  })
})
