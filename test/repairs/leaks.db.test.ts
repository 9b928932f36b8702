/**
 * repair leaks on MariaDB: every leak code planted, repaired with the real executor, then: audit
 * clean, only the intended rows changed, generations bumped, undo restores the exact before-state.
 * Fault tests: concurrent generation bump, killed connection, crash between commits, lock held.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {RepairAbortedError} from '../../src/lib/errors.js'
import {LEAK_CODES, planLeaks} from '../../src/lib/repairs/leaks.js'
import {planUndo, validateUndoFile} from '../../src/lib/repairs/undo.js'
import {readFileSync} from 'node:fs'
import {type UndoFile} from '../../src/lib/db/repair/executor.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {addAllocations, addMigrationRow, baseCloud} from './faults.js'
import {type RepairWorld, closeConnection, diffDumps, findingsOf, openConnection, repairWorld, tableChanges} from './support.js'

function leakyCloud(): {snapshot: Snapshot; ids: Record<string, string>} {
  const {b} = baseCloud(11)
  b.addInstance('compute1', 'm1.small') // bystanders
  b.addInstance('compute2', 'm1.small')
  const deleted = b.addInstance('compute1', 'm1.small').row.uuid
  b.deleteInstance(deleted, {keepAllocations: true})
  const wrong = b.addInstance('compute1', 'm1.small').row.uuid
  const moved = b.addInstance('compute2', 'm1.small').row.uuid
  const evacuated = b.addInstance('compute2', 'm1.small').row.uuid
  const s = b.build()
  const unknown = 'deadbeef-0000-4000-8000-000000000001'
  const migration = 'feedface-0000-4000-8000-000000000002'
  addAllocations(s, unknown, 'compute1', {0: 1, 1: 512})
  addAllocations(s, wrong, 'compute2', {0: 2})
  addMigrationRow(s, {
    uuid: migration,
    instance_uuid: moved,
    status: 'confirmed',
    migration_type: 'resize',
    source_compute: 'compute1',
    source_node: 'compute1',
    dest_compute: 'compute2',
    dest_node: 'compute2',
  })
  addAllocations(s, migration, 'compute1', {0: 2, 1: 2048, 2: 20})
  addMigrationRow(s, {
    uuid: 'abcdabcd-0000-4000-8000-000000000003',
    instance_uuid: evacuated,
    status: 'done',
    migration_type: 'evacuation',
    source_compute: 'compute1',
    source_node: 'compute1',
    dest_compute: 'compute2',
    dest_node: 'compute2',
  })
  addAllocations(s, evacuated, 'compute1', {0: 2, 1: 2048, 2: 20})
  return {snapshot: s, ids: {deleted, wrong, moved, evacuated, unknown, migration}}
}

describe('repair leaks (MariaDB)', () => {
  let world: RepairWorld
  let ids: Record<string, string>

  beforeAll(async () => {
    const c = leakyCloud()
    ids = c.ids
    world = await repairWorld('rleaks', c.snapshot)
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('plants every leak code', async () => {
    const codes = (await findingsOf(world, [...LEAK_CODES])).map((f) => f.code).sort()
    expect(codes).toEqual([...LEAK_CODES].sort())
  })

  it('aborts with exit 5 and changes nothing when a provider generation moves between plan and apply', async () => {
    const plan = planLeaks(await world.model())
    const before = await world.dump()
    const conn = await openConnection(world.cloud.placementUrl)
    await conn.query("UPDATE resource_providers SET generation = generation + 1 WHERE name = 'compute1'")
    await closeConnection(conn)
    const mid = await world.dump()
    const err = await world.apply(plan).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RepairAbortedError)
    expect((err as RepairAbortedError).exitCode).toBe(5)
    expect((err as Error).message).toMatch(/generation was \d+, now \d+/)
    expect(diffDumps(mid, await world.dump())).toEqual([])
    expect(diffDumps(before, mid)).toHaveLength(1) // only the concurrent writer's change
  })

  it('rolls back when the connection is killed mid-transaction', async () => {
    const plan = planLeaks(await world.model())
    const before = await world.dump()
    const err = await world
      .apply(plan, {
        afterWrites: async (conns) => {
          const placement = conns.get('placement')
          const [rows] = await placement!.query('SELECT CONNECTION_ID() AS id')
          const admin = await openConnection(world.cloud.placementUrl)
          await admin.query(`KILL ${(rows as Array<{id: number}>)[0].id}`)
          await closeConnection(admin)
        },
      })
      .catch((e: unknown) => e)
    expect((err as {exitCode?: number}).exitCode).toBe(5)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('refuses with exit 1 while another repair holds the lock', async () => {
    const plan = planLeaks(await world.model())
    const holder = await openConnection(world.cloud.apiUrl)
    await holder.query('SELECT GET_LOCK(?, 0)', [world.lockName])
    try {
      const err = await world.apply(plan).catch((e: unknown) => e)
      expect((err as {code?: string}).code).toBe('RepairLockHeld')
      expect((err as {exitCode?: number}).exitCode).toBe(1)
    } finally {
      await closeConnection(holder)
    }
  })

  it('removes exactly the leaked rows, bumps generations, leaves the audit clean; undo restores the exact before-state', async () => {
    const model = await world.model()
    const plan = planLeaks(model)
    const before = await world.dump()
    const result = await world.apply(plan)
    const after = await world.dump()
    const changes = diffDumps(before, after)

    // Allocations: only rows of the leaked consumers on the named trees.
    const allocChanges = tableChanges(changes, 'placement/allocations')
    expect(allocChanges.every((c) => c.after === null)).toBe(true)
    const removed = allocChanges.map((c) => c.before as {consumer_id: string; resource_provider_id: number})
    const compute1 = model.providersByName.get('compute1')![0].id
    const compute2 = model.providersByName.get('compute2')![0].id
    expect(new Set(removed.map((r) => r.consumer_id))).toEqual(new Set([ids.deleted, ids.unknown, ids.migration, ids.evacuated, ids.wrong]))
    for (const r of removed) {
      if (r.consumer_id === ids.wrong) expect(r.resource_provider_id).toBe(compute2)
      else expect(r.resource_provider_id).toBe(compute1)
    }
    // The wrong-provider and evacuated instances keep their allocations on their own host.
    expect(model.allocationsByConsumer.get(ids.wrong)!.filter((a) => a.resource_provider_id === compute1).length).toBeGreaterThan(0)

    // Consumers: deleted when nothing is left, generation + 1 when something is.
    const consumerChanges = tableChanges(changes, 'placement/consumers')
    const deletedConsumers = consumerChanges.filter((c) => c.after === null).map((c) => (c.before as {uuid: string}).uuid)
    expect(new Set(deletedConsumers)).toEqual(new Set([ids.deleted, ids.unknown, ids.migration]))
    const bumpedConsumers = consumerChanges.filter((c) => c.after !== null)
    expect(new Set(bumpedConsumers.map((c) => (c.after as {uuid: string}).uuid))).toEqual(new Set([ids.wrong, ids.evacuated]))
    for (const c of bumpedConsumers) expect((c.after as {generation: number}).generation).toBe((c.before as {generation: number}).generation + 1)

    // Providers: both generations + 1, nothing else about them changed.
    const rpChanges = tableChanges(changes, 'placement/resource_providers')
    expect(rpChanges.map((c) => Number(c.key)).sort()).toEqual([compute1, compute2].sort())
    for (const c of rpChanges) {
      expect((c.after as {generation: number}).generation).toBe((c.before as {generation: number}).generation + 1)
      const {generation: _g, updated_at: _u, ...restBefore} = c.before as Record<string, unknown>
      const {generation: _g2, updated_at: _u2, ...restAfter} = c.after as Record<string, unknown>
      expect(restAfter).toEqual(restBefore)
    }
    // No other table of any database changed.
    expect(new Set(changes.map((c) => c.table))).toEqual(new Set(['placement/allocations', 'placement/consumers', 'placement/resource_providers']))

    expect(await findingsOf(world, [...LEAK_CODES])).toEqual([])
    expect(planLeaks(await world.model()).steps.filter((s) => s.op !== 'check')).toEqual([]) // idempotent

    // Audit log line, undo file restores everything.
    const log = readFileSync(`${world.tmp}/audit.log`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(log.at(-1)).toMatchObject({kind: 'leaks', outcome: 'applied', plan_id: result.plan_id})
    const undo = validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')) as UndoFile)
    await world.apply(planUndo(undo))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('a crash after the first commit leaves a partial state that undo restores exactly', async () => {
    const plan = planLeaks(await world.model())
    const before = await world.dump()
    let undoFile = ''
    const err = await world
      .apply(plan, {
        afterUndoWritten: async (f) => {
          undoFile = f
        },
        afterCommit: async () => {
          throw new Error('simulated crash')
        },
      })
      .catch((e: unknown) => e)
    expect((err as {exitCode?: number}).exitCode).toBe(6)
    expect(diffDumps(before, await world.dump()).length).toBeGreaterThan(0)
    const undo = validateUndoFile(JSON.parse(readFileSync(undoFile, 'utf8')))
    await world.apply(planUndo(undo))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})
