import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

/** Two hosts in one cell; each host has one instance and an instance resizing onto host b. */
function cloud(): {s: Snapshot; onA: string; onB: string; moving: string} {
  const b = new CloudBuilder({seed: 12, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addFlavor({name: 'm1.large', vcpus: 4, memory_mb: 4096, root_gb: 20})
  b.addHost('cell1', {host: 'cmp-a', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell1', {host: 'cmp-b', vcpus: 16, memory_mb: 32768, local_gb: 500})
  const onA = b.addInstance('cmp-a', 'm1.small').row.uuid
  const onB = b.addInstance('cmp-b', 'm1.small').row.uuid
  const moving = b.addInstance('cmp-a', 'm1.small').row.uuid
  b.addMigration(moving, {type: 'resize', status: 'post-migrating', dest: 'cmp-b', new_flavor: 'm1.large'})
  return {s: b.build(), onA, onB, moving}
}

const node = (s: Snapshot, host: string) => s.nova.compute_nodes.find((cn) => cn.host === host && cn.deleted === 0)!
const uuids = (list: Array<{uuid: string}>) => list.map((i) => i.uuid).sort()

describe('compute_id links instances and migrations to compute nodes (nova 2023.2+)', () => {
  it('without compute_id (Zed rows), instances and migrations are linked by host and node names', () => {
    const {s, onA, moving} = cloud()
    const m = buildModel(s)
    const a = node(s, 'cmp-a')
    expect(uuids(m.instancesOnNode(a.host, a.hypervisor_hostname))).toEqual([onA, moving].sort())
    expect(m.migrationDestNode(s.nova.migrations[0])).toBe(node(s, 'cmp-b'))
  })

  it('after a hypervisor renames itself (seed 004: short name to FQDN), compute_id still finds its instances; NULL compute_id falls back to the names', () => {
    const {s, onA, onB, moving} = cloud()
    const a = node(s, 'cmp-a')
    const bNode = node(s, 'cmp-b')
    for (const inst of s.nova.instances) inst.compute_id = inst.node === a.hypervisor_hostname ? a.id : bNode.id
    // the instance row nova wrote before the id existed keeps NULL
    s.nova.instances.find((i) => i.uuid === onB)!.compute_id = null
    a.hypervisor_hostname = 'cmp-a.example.org'
    bNode.hypervisor_hostname = 'cmp-b.example.org'
    s.nova.migrations[0].dest_compute_id = bNode.id
    const m = buildModel(s)
    expect(uuids(m.instancesOnNode('cmp-a', 'cmp-a.example.org'))).toEqual([onA, moving].sort())
    expect(m.instancesOnNode('cmp-a', 'cmp-a')).toEqual([])
    // NULL: still under the old names (the node key nova's own rows give)
    expect(uuids(m.instancesOnNode('cmp-b', 'cmp-b'))).toEqual([onB])
    expect(m.instancesOnNode('cmp-b', 'cmp-b.example.org')).toEqual([])
    const i = s.nova.instances.indexOf(s.nova.instances.find((x) => x.uuid === onA)!)
    expect(m.liveNodeListAt[i]).toBe(m.instancesOnNode('cmp-a', 'cmp-a.example.org'))
    expect(m.nodeOfInstance(s.nova.instances[i])).toBe(a)
    // the migration row still says dest_node 'cmp-b': the id wins
    expect(m.migrationDestNode(s.nova.migrations[0])).toBe(bNode)
    expect(m.migrationDestKey(s.nova.migrations[0])).toBe(`cmp-b\u0000cmp-b.example.org`)
  })

  it('a compute_id naming a deleted node, or a node of another cell, falls back to the names', () => {
    const {s, onA, moving} = cloud()
    const a = node(s, 'cmp-a')
    const inst = s.nova.instances.find((i) => i.uuid === onA)!
    inst.compute_id = 9999
    const other = s.nova.instances.find((i) => i.uuid === moving)!
    other.compute_id = a.id
    other.cell_uuid = '33333333-3333-4333-8333-333333333333'
    const m = buildModel(s)
    expect(uuids(m.instancesOnNode(a.host, a.hypervisor_hostname))).toEqual([onA, moving].sort())
    expect(m.nodeOfInstance(inst)).toBe(a)
  })
})
