/**
 * The outage rule when the mappings themselves are wrong (issue 25 item 3): a consumer is judged
 * only if every place it could live was read. Its instance must be proven in a readable cell (its
 * mapping names that cell and the cell holds a row of it) and every provider it holds allocations on
 * must stand for a live compute node read in that same cell; host mappings prove nothing alone.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type Instance, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {outageBlockedSteps} from '../../src/lib/repairs/outage.js'
import {writeSteps} from '../../src/lib/repairs/plan.js'
import {addAllocations} from '../repairs/faults.js'
import {CloudBuilder} from '../support/builders.js'

function world() {
  const b = new CloudBuilder({seed: 25, requestSpecs: false})
  b.addCell('cell1')
  b.addCell('cell2')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'c1-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell2', {host: 'c2-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell2', {host: 'c2-cmp2', vcpus: 16, memory_mb: 32768, local_gb: 500})
  return b
}

/** As capture leaves a cell it could not read: flagged, none of its rows. */
function darken(s: Snapshot, name: string): Snapshot {
  const cell = s.cells.find((c) => c.name === name)!
  cell.status = 'unavailable'
  cell.error = "Can't connect to MySQL server on '127.0.0.1:3399'"
  for (const t of ['services', 'compute_nodes', 'instances', 'migrations'] as const) {
    ;(s.nova[t] as Array<{cell_uuid: string}>) = (s.nova[t] as Array<{cell_uuid: string}>).filter((r) => r.cell_uuid !== cell.uuid)
  }
  return s
}

const cellId = (s: Snapshot, name: string) => s.cells.find((c) => c.name === name)!.id
const mapHost = (s: Snapshot, host: string, cell: string) => void (s.nova_api.host_mappings.find((h) => h.host === host)!.cell_id = cellId(s, cell))
const mapInstance = (s: Snapshot, uuid: string, cell: string) =>
  void (s.nova_api.instance_mappings.find((m) => m.instance_uuid === uuid)!.cell_id = cellId(s, cell))

function judged(s: Snapshot, uuid: string) {
  const model = buildModel(s)
  const findings = runChecks(model, {checks: ['leaks']}).findings
  return {
    known: findings.filter((f) => f.severity !== 'unknown' && f.subject.consumer_uuid === uuid).map((f) => f.code),
    undecided: findings.filter((f) => f.code === 'allocation.undecided').flatMap((f) => (f.evidence as {sample?: string[]}).sample ?? []),
    writes: writeSteps(planLeaks(model)).length + writeSteps(planLeaks(model, {heal: true})).length,
  }
}

describe('double fault: an instance live in the dark cell whose mappings point at a readable one', () => {
  function seed004DoubleFault() {
    const b = world()
    const alive = b.addInstance('c1-cmp1', 'm1.small').row
    const s = b.build()
    // Seed 004: the failed build's ERROR copy in cell0 and the mapping on it; the host's mapping too.
    const copy: Instance = {
      ...alive,
      cell_uuid: CELL0_UUID,
      id: 1,
      host: null,
      node: null,
      vm_state: 'error',
      task_state: null,
      power_state: 0,
      launched_at: null,
    }
    s.nova.instances.push(copy)
    mapInstance(s, alive.uuid, 'cell0')
    mapHost(s, 'c1-cmp1', 'cell0')
    return {s, alive}
  }

  it('with cell1 readable, its allocations are where it runs: nothing about them', () => {
    const {s, alive} = seed004DoubleFault()
    expect(judged(s, alive.uuid).known).toEqual([])
  })

  it('cell1 dark: undecided, never wrong-provider, nothing planned with or without --heal', () => {
    const {s, alive} = seed004DoubleFault()
    const r = judged(darken(s, 'cell1'), alive.uuid)
    expect(r.known).toEqual([])
    expect(r.undecided).toContain(alive.uuid)
    expect(r.writes).toBe(0)
  })

  it('cell1 dark: its host, mapped to readable cell0, is not judged a stale provider (undecided)', () => {
    const {s} = seed004DoubleFault()
    const findings = runChecks(buildModel(darken(s, 'cell1')), {checks: ['providers']}).findings
    expect(findings.filter((f) => f.severity !== 'unknown').map((f) => `${f.code} ${f.subject.provider_uuid}`)).toEqual([])
    expect(findings.map((f) => f.code)).toEqual(['provider.undecided'])
  })

  it('cell1 dark: the host mapping to readable cell0 is not judged stale (its service may run in cell1)', () => {
    const {s} = seed004DoubleFault()
    expect(runChecks(buildModel(structuredClone(s)), {checks: ['cells']}).findings.map((f) => f.code)).toContain('cell.host-mapped-wrong-cell')
    const dark = runChecks(buildModel(darken(s, 'cell1')), {checks: ['cells']}).findings
    expect(dark.filter((f) => f.severity !== 'unknown').map((f) => f.code)).toEqual([])
  })

  it('the last line of defence blocks a plan for it made from the same rows', () => {
    const {s, alive} = seed004DoubleFault()
    // A plan as a planner that trusted the mappings would make: delete every allocation of the instance.
    const model = buildModel(darken(structuredClone(s), 'cell1'))
    const allocs = model.allocationsByConsumer.get(alive.uuid) ?? []
    expect(allocs.length).toBeGreaterThan(0)
    const plan = {
      kind: 'leaks',
      steps: allocs.map((a) => ({db: 'placement', table: 'allocations', op: 'delete', key: {id: a.id}, expect: {...a}, why: 'test'})),
    }
    const blocked = outageBlockedSteps(model, plan as unknown as Parameters<typeof outageBlockedSteps>[1])
    expect(blocked).toHaveLength(allocs.length)
    expect(blocked.every((x) => x.cells.includes(s.cells.find((c) => c.name === 'cell1')!.uuid))).toBe(true)
  })
})

describe('each proof on its own', () => {
  it('mapping names a readable cell that holds no row of the instance: undecided', () => {
    const b = world()
    const alive = b.addInstance('c1-cmp1', 'm1.small').row
    const s = b.build()
    mapInstance(s, alive.uuid, 'cell2')
    mapHost(s, 'c1-cmp1', 'cell2')
    const r = judged(darken(s, 'cell1'), alive.uuid)
    expect([r.known, r.undecided.includes(alive.uuid), r.writes]).toEqual([[], true, 0])
  })

  it('a provider whose compute node was read in another cell than the instance: undecided', () => {
    const b = world()
    const gone = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    // Deleted in cell2 and mapped there, but it also holds allocations on a host of cell1.
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    Object.assign(row, {deleted: row.id, vm_state: 'deleted'})
    addAllocations(s, gone.uuid, 'c1-cmp1', {0: 1})
    const dark = darken(s, 'cell1')
    mapHost(dark, 'c1-cmp1', 'cell2')
    const r = judged(dark, gone.uuid)
    expect([r.known, r.undecided.includes(gone.uuid), r.writes]).toEqual([[], true, 0])
  })

  it('the same leak with cell2 and cell1 both readable is a leak (the premise)', () => {
    const b = world()
    const gone = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    Object.assign(row, {deleted: row.id, vm_state: 'deleted'})
    addAllocations(s, gone.uuid, 'c1-cmp1', {0: 1})
    expect(judged(s, gone.uuid).known).toEqual(['allocation.consumer-deleted', 'allocation.consumer-deleted'])
  })

  it('provably safe: deleted in readable cell2, mapped there, its providers read in cell2: repaired while cell1 is dark', () => {
    const b = world()
    const gone = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    Object.assign(row, {deleted: row.id, vm_state: 'deleted'})
    const dark = darken(s, 'cell1')
    const r = judged(dark, gone.uuid)
    expect(r.known).toEqual(['allocation.consumer-deleted'])
    const model = buildModel(dark)
    const plan = planLeaks(model)
    expect(writeSteps(plan).filter((st) => st.table === 'allocations').length).toBeGreaterThan(0)
    expect(outageBlockedSteps(model, plan)).toEqual([])
  })

  it('a live instance of readable cell2 with a stray allocation on its other cell2 host: still wrong-provider', () => {
    const b = world()
    const alive = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    addAllocations(s, alive.uuid, 'c2-cmp2', {0: 1})
    expect(judged(darken(s, 'cell1'), alive.uuid).known).toEqual(['allocation.wrong-provider'])
  })

  it('a live instance of readable cell2 whose mapping points at cell0 (no row there): undecided', () => {
    const b = world()
    const alive = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    addAllocations(s, alive.uuid, 'c2-cmp2', {0: 1})
    mapInstance(s, alive.uuid, 'cell0')
    const r = judged(darken(s, 'cell1'), alive.uuid)
    expect([r.known, r.undecided.includes(alive.uuid)]).toEqual([[], true])
  })

  it('a deleted instance on a provider with no live compute node read (the host mapping says cell2): undecided', () => {
    const b = world()
    const gone = b.addInstance('c2-cmp1', 'm1.small').row
    const s = b.build()
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    Object.assign(row, {deleted: row.id, vm_state: 'deleted'})
    // Its allocations moved (by hand) to cell1's host, whose host mapping wrongly says cell2.
    for (const a of s.placement.allocations)
      if (a.consumer_id === gone.uuid) a.resource_provider_id = s.placement.resource_providers.find((p) => p.name === 'c1-cmp1')!.id
    const dark = darken(s, 'cell1')
    mapHost(dark, 'c1-cmp1', 'cell2')
    const r = judged(dark, gone.uuid)
    expect([r.known, r.undecided.includes(gone.uuid), r.writes]).toEqual([[], true, 0])
  })
})
