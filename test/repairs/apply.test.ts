/**
 * applyPlan (src/lib/repairs/apply.ts), pure: on the demo every repair plan, applied to the snapshot,
 * leaves none of the findings it addressed and touches nothing else's findings; the input is never
 * changed. `simulate --apply-repairs` frees exactly what `repair leaks` removes (no more: an
 * allocation the planner refuses to remove stays). --max-count batches add up to the whole plan.
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {applyPlan} from '../../src/lib/repairs/apply.js'
import {planMapInstances} from '../../src/lib/repairs/cells.js'
import {planDiscoverHosts} from '../../src/lib/repairs/discover-hosts.js'
import {planAggregates, planPinning, planUsage} from '../../src/lib/repairs/host-state.js'
import {LEAK_CODES, planLeaks} from '../../src/lib/repairs/leaks.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {planProviders} from '../../src/lib/repairs/providers.js'
import {applyPlannedRepairs} from '../../src/lib/scenario/repairs.js'
import {readSnapshotFile} from '../../src/lib/snapshot/file.js'
import {ROOT} from '../support/cli.js'
import {generateCloud} from '../support/generator.js'

const NOW = '2026-01-02 03:04:05'
const findingKeys = (s: Snapshot) => new Set(runChecks(buildModel(s)).findings.map((f) => `${f.code} ${JSON.stringify(f.subject)}`))

/** The plan's addressed findings are gone after applyPlan, and no finding appears that was not there. */
function expectRepaired(before: Snapshot, plan: RepairPlan): Snapshot {
  const frozen = JSON.stringify(before)
  const after = applyPlan(before, plan, {now: NOW})
  expect(JSON.stringify(before), 'applyPlan changed its input').toBe(frozen)
  const model = buildModel(after)
  const left = runChecks(model).findings.filter((f) => plan.findings.some((p) => p.code === f.code && p.message === f.message))
  expect(left.map((f) => f.code)).toEqual([])
  const was = findingKeys(before)
  expect(
    [...findingKeys(after)].filter((k) => !was.has(k)),
    'new findings',
  ).toEqual([])
  return after
}

describe('applyPlan on the demo', async () => {
  const demo = await readSnapshotFile(join(ROOT, 'examples/demo-cloud.yaml'))
  const model = buildModel(demo)
  const at = '2026-01-02T03:04:05.000Z'
  const plans: Array<[string, RepairPlan]> = [
    ['repair leaks', planLeaks(model, {now: at})],
    ['repair providers --strategy move', planProviders(model, {strategy: 'move', now: at})],
    ['repair providers --strategy rekey', planProviders(model, {strategy: 'rekey', now: at})],
    ['repair pinning --force', planPinning(model, {force: true, now: at})],
    ['repair usage --force', planUsage(model, {force: true, now: at})],
    ['repair aggregates --prune', planAggregates(model, {prune: true, now: at})],
    ['cells map-instances', planMapInstances(model, {now: at})],
    ['cells discover-hosts --prune', planDiscoverHosts(model, {prune: true, now: at})],
  ]

  it.each(plans)('%s: the findings it addresses are gone, nothing new appears', (_name, plan) => {
    expectRepaired(demo, plan)
  })

  it('writes NOW as the given time and a soft delete as deleted = id', () => {
    const plan = planMapInstances(model, {now: at})
    const soft = plan.steps.find((s) => s.op === 'update' && s.table === 'instances')
    expect(soft, 'the demo has a duplicate instance').toBeDefined()
    const after = applyPlan(demo, plan, {now: NOW})
    const id = soft!.op === 'update' ? Number(soft!.key.id) : -1
    const cell = soft!.db.slice('cell:'.length)
    const row = after.nova.instances.find((i) => i.id === id && i.cell_uuid === cell)
    expect(row).toMatchObject({deleted: id, deleted_at: NOW})
    expect(row?.extra).toBeNull()
  })

  it("an inserted row takes the next id and the snapshot's types", () => {
    const g = generateCloud({seed: 3, hosts: 4, instances: 10, pinnedHostFraction: 0, faults: {'cell.instance-unmapped': 2}})
    const after = expectRepaired(g.snapshot, planMapInstances(buildModel(g.snapshot), {now: at}))
    const top = Math.max(...g.snapshot.nova_api.instance_mappings.map((m) => m.id))
    const inserted = after.nova_api.instance_mappings.filter((m) => m.id > top)
    expect(inserted.map((m) => m.id)).toEqual([top + 1, top + 2])
    for (const m of inserted) expect(m).toMatchObject({created_at: NOW, queued_for_delete: false, cell_id: expect.any(Number)})
  })

  it('throws when a guard does not hold on the snapshot (the executor would abort)', () => {
    const plan = planLeaks(model, {now: at})
    const del = plan.steps.find((s) => s.op === 'delete' && s.table === 'allocations')
    const changed = structuredClone(demo)
    const a = changed.placement.allocations.find((x) => del?.op === 'delete' && x.id === del.key.id)!
    a.used += 1
    expect(() => applyPlan(changed, plan)).toThrow(/expects used = /)
  })
})

describe('simulate --apply-repairs frees what repair leaks removes, no more', () => {
  it('an allocation planLeaks refuses to remove (it would strand a running instance) stays', () => {
    const g = generateCloud({
      seed: 71,
      hosts: 5,
      instances: 16,
      pinnedHostFraction: 0,
      faults: {'allocation.wrong-provider': 1, 'allocation.consumer-deleted': 1},
    })
    const model = buildModel(g.snapshot)
    const wrong = runChecks(model, {checks: ['leaks']}).findings.find((f) => f.code === 'allocation.wrong-provider')!
    const plan = planLeaks(model)
    expect(plan.skipped.map((s) => s.code)).toContain('allocation.wrong-provider')
    const held = (wrong.evidence.allocations as Array<{id: number}>).map((a) => a.id)
    expect(held.length).toBeGreaterThan(0)

    const r = applyPlannedRepairs(g.snapshot)
    // Before applyPlan, the effect was read from the findings' evidence: these rows went too.
    const ids = new Set(r.snapshot.placement.allocations.map((a) => a.id))
    expect(held.filter((id) => !ids.has(id))).toEqual([])
    // Exactly the rows the repair deletes are gone, and what is reported freed is their sum.
    const deleted = new Set(plan.steps.flatMap((s) => (s.op === 'delete' && s.table === 'allocations' ? [Number(s.key.id)] : [])))
    expect(deleted.size).toBeGreaterThan(0)
    expect(
      g.snapshot.placement.allocations
        .filter((a) => !ids.has(a.id))
        .map((a) => a.id)
        .sort(),
    ).toEqual([...deleted].sort())
    expect(r.removedAllocations).toBe(deleted.size)
    expect(Object.values(r.freed).reduce((n, x) => n + x, 0)).toBe(
      g.snapshot.placement.allocations.filter((a) => deleted.has(a.id)).reduce((n, a) => n + a.used, 0),
    )
  })
})

describe('--max-count batches', () => {
  it('each batch holds whole findings, at most N, and the batches add up to the whole plan', () => {
    const g = generateCloud({
      seed: 5,
      hosts: 6,
      instances: 20,
      pinnedHostFraction: 0,
      faults: {'allocation.consumer-deleted': 3, 'allocation.consumer-unknown': 2},
    })
    const whole = planLeaks(buildModel(g.snapshot), {now: '2026-01-02T03:04:05.000Z'})
    expect(whole.partial).toBeUndefined()
    const consumers = new Set(whole.steps.flatMap((s) => (s.op === 'delete' && s.table === 'allocations' ? [s.why.split(' of ').pop()] : [])))
    expect(consumers.size).toBeGreaterThanOrEqual(5)

    let s = g.snapshot
    const deletedPerBatch: number[] = []
    const done = new Set<string | undefined>()
    const deletes = (p: RepairPlan) => p.steps.filter((x) => x.op === 'delete' && x.table === 'allocations')
    const consumerOf = (x: RepairPlan['steps'][number]) => x.why.split(' of ').pop()
    for (let round = 0; round < 10; round++) {
      const plan = planLeaks(buildModel(s), {maxCount: 2, now: '2026-01-02T03:04:05.000Z'})
      const batch = new Set(deletes(plan).map(consumerOf))
      if (batch.size === 0) break
      expect(batch.size).toBeLessThanOrEqual(2)
      // Whole findings: every row the whole plan deletes for a consumer of this batch is in the batch.
      expect(deletes(plan).length).toBe(deletes(whole).filter((x) => batch.has(consumerOf(x))).length)
      for (const c of batch) done.add(c)
      expect(Boolean(plan.partial), `round ${round}`).toBe(done.size < consumers.size)
      deletedPerBatch.push(deletes(plan).length)
      s = applyPlan(s, plan)
    }
    expect(deletedPerBatch).toHaveLength(Math.ceil(consumers.size / 2))
    expect(runChecks(buildModel(s), {checks: ['leaks']}).findings.filter((f) => (LEAK_CODES as readonly string[]).includes(f.code))).toEqual([])
    expect(s.placement.allocations).toEqual(applyPlan(g.snapshot, whole).placement.allocations)
  })
})
