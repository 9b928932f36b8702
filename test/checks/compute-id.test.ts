/**
 * nova 2023.2+ rows carry instances.compute_id and migrations.dest_compute_id: where they name a live
 * node, the checks link the instance or move to that node even when the host/node names say
 * otherwise (they go stale when a hypervisor renames itself); Zed rows (no ids) are linked by name.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {MiniCloud} from './mini-cloud.js'

/** An instance live-migrating from cmp1 to cmp2: the migration holds the source, the instance the destination. */
function migratingCloud() {
  const c = new MiniCloud()
  const h1 = c.host('cmp1')
  const h2 = c.host('cmp2')
  const inst = c.instance(h1)
  const m = c.migration(inst, h1.cn, h2.cn, 'running', 'live-migration')
  const held = c.snap.placement.allocations.filter((a) => a.consumer_id === inst.uuid)
  for (const a of held) {
    a.consumer_id = m.uuid as string
    c.allocate(h2.rp, inst.uuid, a.resource_class_id, a.used)
  }
  c.consumer(m.uuid as string)
  // The destination's names in the migration row are the hypervisor's old ones.
  m.dest_compute = 'cmp2-old'
  m.dest_node = 'cmp2-old.example.org'
  return {c, h1, h2, inst, m}
}

const codes = (c: MiniCloud) => runChecks(c.build(), {checks: ['leaks']}).findings.map((f) => [f.code, f.subject.consumer_uuid ?? f.subject.instance_uuid ?? f.subject.node])

describe('compute ids link instances and moves to their nodes', () => {
  it('a migration whose dest_compute_id names the node it holds is in order, whatever its dest names say', () => {
    const {c, h2, m} = migratingCloud()
    m.dest_compute_id = h2.cn.id
    expect(codes(c)).toEqual([])
    // The destination's resource tracker holds the incoming flavor: usage counts the move on cmp2
    // (MiniCloud's counters hold residents only, so the row is short by that flavor).
    const drift = runChecks(c.build(), {checks: ['usage']}).findings
    expect(drift.map((f) => [f.code, f.subject.node, f.evidence.migrations_in_progress])).toEqual([
      ['usage.node-drift', h2.cn.hypervisor_hostname, [{uuid: m.uuid, instance_uuid: m.instance_uuid, status: 'running', counted_flavor: 'new'}]],
    ])
  })

  it('without dest_compute_id (Zed) the names decide: the same rows are an allocation on the wrong provider', () => {
    const {c, inst, m} = migratingCloud()
    m.dest_compute_id = null
    expect(codes(c)).toEqual([['allocation.wrong-provider', inst.uuid]])
  })

  it('an instance without allocations is reported on the node its compute_id names, with that node provider', () => {
    const c = new MiniCloud()
    c.host('cmp1')
    const h2 = c.host('cmp2')
    const inst = c.instance(h2)
    c.snap.placement.allocations = c.snap.placement.allocations.filter((a) => a.consumer_id !== inst.uuid)
    // Renamed hypervisor: the instance row still carries the old names.
    inst.node = 'cmp2-old.example.org'
    inst.compute_id = h2.cn.id
    const missing = runChecks(c.build(), {checks: ['leaks']}).findings.filter((f) => f.code === 'allocation.missing')
    expect(missing.map((f) => f.subject)).toEqual([
      {cell: 'cell1', cell_uuid: h2.cn.cell_uuid, host: 'cmp2', node: h2.cn.hypervisor_hostname, provider_uuid: h2.rp.uuid, instance_uuid: inst.uuid, consumer_uuid: inst.uuid},
    ])
    // Zed: the stale names find no live node, so no provider is named.
    inst.compute_id = null
    const zed = runChecks(c.build(), {checks: ['leaks']}).findings.filter((f) => f.code === 'allocation.missing')
    expect(zed.map((f) => f.subject.provider_uuid)).toEqual([undefined])
  })
})
