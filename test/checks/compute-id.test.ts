/**
 * nova 2023.2+ rows carry instances.compute_id and migrations.dest_compute_id: where they name a live
 * node, the checks link the instance or move to that node even when the host/node names say
 * otherwise (they go stale when a hypervisor renames itself); Zed rows (no ids) are linked by name.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

function twoHosts(): CloudBuilder {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  for (const host of ['cmp1', 'cmp2']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  return b
}

/** An instance live-migrating from cmp1 to cmp2: the migration holds the source, the instance the destination. */
function migratingCloud() {
  const b = twoHosts()
  const h2 = b.hostRec('cmp2')
  const inst = b.addInstance('cmp1', 'm1.small').row
  const m = b.addMigration(inst.uuid, {type: 'live-migration', status: 'running', dest: 'cmp2'}).row
  const s = b.build()
  // The destination's names in the migration row are the hypervisor's old ones.
  m.dest_compute = 'cmp2-old'
  m.dest_node = 'cmp2-old.example.org'
  return {s, h2, inst, m}
}

const codes = (s: Snapshot) =>
  runChecks(buildModel(s), {checks: ['leaks']}).findings.map((f) => [f.code, f.subject.consumer_uuid ?? f.subject.instance_uuid ?? f.subject.node])

describe('compute ids link instances and moves to their nodes', () => {
  it('a migration whose dest_compute_id names the node it holds is in order, whatever its dest names say', () => {
    const {s, h2, m} = migratingCloud()
    m.dest_compute_id = h2.cn.id
    expect(codes(s)).toEqual([])
    // The destination's resource tracker holds the incoming flavor: usage counts the move on cmp2.
    expect(runChecks(buildModel(s), {checks: ['usage']}).findings).toEqual([])
    // A row that counts residents only is short by that flavor, and the drift names the move.
    h2.cn.vcpus_used! -= 2
    h2.cn.memory_mb_used! -= 2048
    h2.cn.local_gb_used! -= 20
    h2.cn.free_ram_mb! += 2048
    h2.cn.free_disk_gb! += 20
    const drift = runChecks(buildModel(s), {checks: ['usage']}).findings
    expect(drift.map((f) => [f.code, f.subject.node, f.evidence.migrations_in_progress])).toEqual([
      ['usage.node-drift', h2.cn.hypervisor_hostname, [{uuid: m.uuid, instance_uuid: m.instance_uuid, status: 'running', counted_flavor: 'new'}]],
    ])
  })

  it('without dest_compute_id (Zed) the names decide: the same rows are an allocation on the wrong provider', () => {
    const {s, inst, m} = migratingCloud()
    m.dest_compute_id = null
    expect(codes(s)).toEqual([['allocation.wrong-provider', inst.uuid]])
  })

  it('an instance without allocations is reported on the node its compute_id names, with that node provider', () => {
    const b = twoHosts()
    const h2 = b.hostRec('cmp2')
    const inst = b.addInstance('cmp2', 'm1.small').row
    b.removeAllocations(inst.uuid)
    const s = b.build()
    // Renamed hypervisor: the instance row still carries the old names.
    inst.node = 'cmp2-old.example.org'
    inst.compute_id = h2.cn.id
    const missing = runChecks(buildModel(s), {checks: ['leaks']}).findings.filter((f) => f.code === 'allocation.missing')
    expect(missing.map((f) => f.subject)).toEqual([
      {
        cell: 'cell1',
        cell_uuid: h2.cn.cell_uuid,
        host: 'cmp2',
        node: h2.cn.hypervisor_hostname,
        provider_uuid: h2.rp.row.uuid,
        instance_uuid: inst.uuid,
        consumer_uuid: inst.uuid,
      },
    ])
    // Zed: the stale names find no live node, so no provider is named.
    inst.compute_id = null
    const zed = runChecks(buildModel(s), {checks: ['leaks']}).findings.filter((f) => f.code === 'allocation.missing')
    expect(zed.map((f) => f.subject.provider_uuid)).toEqual([undefined])
  })
})
