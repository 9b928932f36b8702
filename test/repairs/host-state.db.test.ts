/**
 * repair pinning / usage / aggregates on MariaDB: seed 004's pinned_cpus stuck full, usage columns
 * counting deleted instances, a host aggregate placement does not know.
 */
import {readFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {planAggregates, planPinning, planUsage, rewritePinnedCpus} from '../../src/lib/repairs/host-state.js'
import {planUndo, validateUndoFile} from '../../src/lib/repairs/undo.js'
import {CloudBuilder} from '../support/builders.js'
import {type RepairWorld, closeConnection, diffDumps, findingsOf, openConnection, repairWorld, tableChanges} from './support.js'

function hostCloud(): Snapshot {
  const b = new CloudBuilder({seed: 41, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'pinned', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'numa1', vcpus: 16, memory_mb: 32768, local_gb: 500, cpu_dedicated_set: '8-15', down: true})
  b.addHost('cell1', {host: 'live1', vcpus: 16, memory_mb: 32768, local_gb: 500, cpu_dedicated_set: '8-15'})
  b.addHost('cell1', {host: 'plain1', vcpus: 16, memory_mb: 32768, local_gb: 500, down: true})
  b.addAggregate({name: 'fast', hosts: ['plain1']})
  b.addInstance('numa1', 'pinned')
  b.addInstance('live1', 'pinned')
  b.addInstance('plain1', 'm1.small')
  const s = b.build()
  // Seed 004: pinned_cpus still lists every dedicated CPU after the instances went away.
  for (const cn of s.nova.compute_nodes) {
    if (cn.host !== 'numa1' && cn.host !== 'live1') continue
    cn.numa_topology = (cn.numa_topology as string)
      .replace(/("pinned_cpus": )\[[^\]]*\]/g, (_m, h: string) => `${h}[]`)
      .replace(/("pcpuset": \[)([^\]]*)(\][^]*?"pinned_cpus": )\[\]/g, (_m, a: string, set: string, c: string) => `${a}${set}${c}[${set}]`)
  }
  // Deleted instances still counted in the usage columns.
  const plain = s.nova.compute_nodes.find((cn) => cn.host === 'plain1')!
  plain.vcpus_used += 4
  plain.memory_mb_used += 4096
  plain.free_ram_mb = (plain.free_ram_mb ?? 0) - 4096
  // The host aggregate was created while placement was unreachable.
  const rp = s.placement.resource_providers.find((p) => p.name === 'plain1')!
  s.placement.resource_provider_aggregates = s.placement.resource_provider_aggregates.filter((x) => x.resource_provider_id !== rp.id)
  s.placement.placement_aggregates = []
  return s
}

describe('host state repairs (MariaDB)', () => {
  let world: RepairWorld
  beforeAll(async () => {
    world = await repairWorld('rhost', hostCloud())
    // live1's nova-compute reports now (the builder's clock is in the past).
    const conn = await openConnection(world.cloud.cellUrls.cell1)
    await conn.query("UPDATE services SET last_seen_up = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP() WHERE host = 'live1'")
    await closeConnection(conn)
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('rewritePinnedCpus touches only the pinned_cpus arrays', () => {
    const text =
      '{"nova_object.version": "1.2", "nova_object.data": {"cells": [{"nova_object.data": {"pcpuset": [4, 5], "pinned_cpus": [4, 5], "id": 0}}, {"nova_object.data": {"pinned_cpus": [], "id": 1}}]}}'
    expect(rewritePinnedCpus(text, [[5], [6, 7]])).toBe(
      text.replace('"pinned_cpus": [4, 5]', '"pinned_cpus": [5]').replace('"pinned_cpus": []', '"pinned_cpus": [6, 7]'),
    )
    expect(rewritePinnedCpus(text, [[5]])).toBeUndefined()
  })

  it('pinning: repairs the down host, refuses the live one without --force, byte-preserving; undo exact', async () => {
    const model = await world.model()
    expect((await findingsOf(world, ['pinning.leaked'])).map((f) => f.subject.host).sort()).toEqual(['live1', 'numa1'])
    const plan = planPinning(model)
    expect(plan.skipped.find((s) => s.subject.includes('live1'))?.reason).toMatch(/up and reporting/)
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())
    expect(changes).toHaveLength(1)
    const [c] = tableChanges(changes, changes[0].table)
    const oldBlob = (c.before as {numa_topology: string}).numa_topology
    const newBlob = (c.after as {numa_topology: string}).numa_topology
    // Only pinned_cpus differs; everything else, object versions included, is byte for byte.
    expect(newBlob.replace(/"pinned_cpus": \[[^\]]*\]/g, '')).toBe(oldBlob.replace(/"pinned_cpus": \[[^\]]*\]/g, ''))
    expect(await findingsOf(world, ['pinning.leaked'])).toHaveLength(1) // live1, left to its nova-compute
    expect(planPinning(await world.model()).steps.filter((s) => s.op !== 'check')).toEqual([])
    expect(planPinning(await world.model(), {force: true}).steps.filter((s) => s.op !== 'check')).toHaveLength(1)
    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('usage: recomputes the drifting columns from live instances; undo exact', async () => {
    const plan = planUsage(await world.model())
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())
    expect(changes).toHaveLength(1)
    expect(changes[0].after).toMatchObject({host: 'plain1'})
    expect(await findingsOf(world, ['usage.node-drift'])).toEqual([])
    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('aggregates: creates the placement aggregate and link, bumps the generation; undo exact', async () => {
    const model = await world.model()
    const rp = model.providersByName.get('plain1')![0]
    const plan = planAggregates(model)
    const before = await world.dump()
    const result = await world.apply(plan)
    const changes = diffDumps(before, await world.dump())
    expect(new Set(changes.map((c) => c.table))).toEqual(
      new Set(['placement/placement_aggregates', 'placement/resource_provider_aggregates', 'placement/resource_providers']),
    )
    const gen = tableChanges(changes, 'placement/resource_providers')
    expect(
      gen.map((c) => [(c.before as {id: number}).id, (c.after as {generation: number}).generation - (c.before as {generation: number}).generation]),
    ).toEqual([[rp.id, 1]])
    expect(await findingsOf(world, ['aggregate.missing-in-placement'])).toEqual([])
    expect(buildModel(await world.capture()).aggregatesOf(rp.id).size).toBe(1)
    await world.apply(planUndo(validateUndoFile(JSON.parse(readFileSync(result.undo_file, 'utf8')))))
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})
