/**
 * repair leaks --heal on MariaDB, on a generated cloud with the generator's allocation.missing and
 * allocation.amount-mismatch faults: the allocations nova-manage placement heal_allocations would
 * write, nothing else changed, generations bumped, audit clean, undo exact; through the built CLI.
 */
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {cloudctl} from '../support/cli.js'
import {formatTs} from '../support/builders.js'
import {generateCloud} from '../support/generator.js'
import {type RepairWorld, diffDumps, findingsOf, repairWorld, tableChanges} from './support.js'

const HEAL = ['allocation.missing', 'allocation.amount-mismatch']

describe('repair leaks --heal (CLI, MariaDB, generated cloud)', () => {
  let world: RepairWorld
  let planted: Array<{code: string; uuid: string}>
  let src: string[]
  let state: string[]

  beforeAll(async () => {
    const g = generateCloud({
      seed: 61,
      hosts: 4,
      instances: 16,
      pinnedHostFraction: 0,
      now: formatTs(Date.now()),
      faults: {'allocation.missing': 1, 'allocation.amount-mismatch': 1},
    })
    planted = g.planted.map((p) => ({code: p.code, uuid: p.subject.instance_uuid as string}))
    world = await repairWorld('rheal', g.snapshot)
    const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-heal-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    state = ['--undo-dir', join(tmp, 'undo'), '--audit-log', join(tmp, 'audit.log')]
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('without --heal both are reported as not repaired; with --heal the dry run plans them (exit 3)', async () => {
    expect((await findingsOf(world, HEAL)).map((f) => f.code).sort()).toEqual([...HEAL].sort())
    const plain = await cloudctl(['repair', 'leaks', ...src, '--json'])
    expect(plain.exitCode).toBe(3) // findings left that need --heal
    expect((JSON.parse(plain.stdout) as {plan: {skipped: Array<{code: string}>}}).plan.skipped.map((s) => s.code).sort()).toEqual([...HEAL].sort())
    const dry = await cloudctl(['repair', 'leaks', '--heal', ...src])
    expect(dry.exitCode).toBe(3)
  })

  it('--heal --apply --yes: exactly the flavor amounts written, generations bumped, audit clean, re-run 0, undo exact', async () => {
    const model = await world.model()
    const before = await world.dump()
    const r = await cloudctl(['repair', 'leaks', '--heal', ...src, '--apply', '--yes', '--json', ...state])
    expect(r.exitCode).toBe(4)
    const out = JSON.parse(r.stdout) as {applied: {undo_file: string}}
    const changes = diffDumps(before, await world.dump())

    const missing = planted.find((p) => p.code === 'allocation.missing')!.uuid
    const mismatch = planted.find((p) => p.code === 'allocation.amount-mismatch')!.uuid
    const allocs = tableChanges(changes, 'placement/allocations')
    // Missing: rows created for the instance only, one per resource of its flavor, on its node's provider.
    const inst = model.liveInstances(missing)[0]
    const rp = model.providersByName.get(inst.node as string)![0]
    const created = allocs
      .filter((c) => c.before === null)
      .map((c) => c.after as {consumer_id: string; resource_provider_id: number; resource_class_id: number; used: number})
    expect(new Set(created.map((a) => a.consumer_id))).toEqual(new Set([missing]))
    expect(created.every((a) => a.resource_provider_id === rp.id)).toBe(true)
    const flavor = model.flavorsById.get(inst.instance_type_id as number)!
    const byRc = Object.fromEntries(created.map((a) => [model.rc.name(a.resource_class_id), a.used]))
    expect(byRc).toMatchObject({VCPU: flavor.vcpus, MEMORY_MB: flavor.memory_mb})
    // Mismatch: the one row updated to the flavor's amount, nothing else about it.
    const updated = allocs.filter((c) => c.before !== null && c.after !== null)
    expect(updated).toHaveLength(1)
    const [u] = updated
    expect((u.after as {consumer_id: string}).consumer_id).toBe(mismatch)
    const {used: _a, updated_at: _b, ...restAfter} = u.after as Record<string, unknown>
    const {used: _c, updated_at: _d, ...restBefore} = u.before as Record<string, unknown>
    expect(restAfter).toEqual(restBefore)
    expect(allocs.filter((c) => c.after === null)).toEqual([])

    // Generations: each touched provider + 1; the mismatched consumer + 1; the missing one created.
    const touched = new Set([rp.id, (u.after as {resource_provider_id: number}).resource_provider_id])
    const rps = tableChanges(changes, 'placement/resource_providers')
    expect(new Set(rps.map((c) => (c.after as {id: number}).id))).toEqual(touched)
    for (const c of rps) expect((c.after as {generation: number}).generation).toBe((c.before as {generation: number}).generation + 1)
    const consumers = tableChanges(changes, 'placement/consumers')
    const bumped = consumers.find((c) => (c.after as {uuid: string}).uuid === mismatch)!
    expect((bumped.after as {generation: number}).generation).toBe((bumped.before as {generation: number}).generation + 1)
    expect(consumers.filter((c) => c.before === null).map((c) => (c.after as {uuid: string}).uuid)).toEqual(model.consumersByUuid.has(missing) ? [] : [missing])
    expect(new Set(changes.map((c) => c.table))).toEqual(new Set(['placement/allocations', 'placement/consumers', 'placement/resource_providers']))

    expect(await findingsOf(world, HEAL)).toEqual([])
    const again = await cloudctl(['repair', 'leaks', '--heal', ...src])
    expect(again.exitCode).toBe(0)
    expect(buildModel(await world.capture()).allocationsByConsumer.get(missing)?.length).toBe(created.length)

    expect(existsSync(out.applied.undo_file)).toBe(true)
    const undo = await cloudctl(['repair', 'undo', out.applied.undo_file, ...src, '--apply', '--yes', ...state])
    expect(undo.exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})
