import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {parseHostNumaTopology, parseInstanceNumaTopology} from '../../src/lib/domain/nova-objects.js'
import {CELL0_UUID} from '../../src/lib/domain/snapshot.js'
import {validateSnapshotShape} from '../../src/lib/snapshot/schema.js'
import {CloudBuilder, flavorResources, instanceFlavorBlob, pyDumps, PyFloat} from '../support/builders.js'
import {violations} from './invariants.js'

function small(): CloudBuilder {
  const b = new CloudBuilder({seed: 11})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 20})
  b.addFlavor({name: 'm1.swap', vcpus: 2, memory_mb: 4096, root_gb: 20, ephemeral_gb: 5, swap: 1536})
  b.addFlavor({name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  b.addFlavor({name: 'm1.iso', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'}})
  b.addFlavor({name: 'm1.mixed', vcpus: 4, memory_mb: 4096, root_gb: 20, extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}})
  b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az1'})
  b.addHost('cell1', {host: 'cmp2', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az2'})
  b.addHost('cell1', {host: 'pin1', vcpus: 16, memory_mb: 65536, local_gb: 500, cpu_dedicated_set: '4-7,12-15', az: 'az1'})
  b.addHost('cell1', {host: 'pin2', vcpus: 32, memory_mb: 65536, local_gb: 500, cpu_dedicated_set: '8-15,24-31', az: 'az2'})
  return b
}

describe('CloudBuilder', () => {
  it('writes a consistent, schema-valid snapshot', () => {
    const b = small()
    b.addInstance('cmp1', 'm1.small')
    b.addInstance('cmp1', 'm1.swap', {boot_from_volume: true})
    b.addInstance('pin1', 'm1.pinned')
    b.addInstance('pin1', 'm1.iso')
    b.addInstance('pin2', 'm1.mixed')
    const moving = b.addInstance('cmp2', 'm1.small')
    b.addMigration(moving.row.uuid, {type: 'live-migration', status: 'running', dest: 'cmp1'})
    const s = b.build()
    expect(validateSnapshotShape(JSON.parse(JSON.stringify(s)))).toEqual([])
    expect(violations(s)).toEqual([])
    expect(buildModel(s).blobErrors()).toEqual([])
    expect(s.cells.map((c) => c.uuid)).toContain(CELL0_UUID)
  })

  it('asks placement for what nova asks: PCPU for dedicated, split for mixed, +1 for isolate, no root for BFV', () => {
    const b = small()
    expect(flavorResources(b.flavor('m1.pinned'), false).resources).toEqual({PCPU: 2, MEMORY_MB: 2048, DISK_GB: 20})
    expect(flavorResources(b.flavor('m1.iso'), false).resources).toEqual({PCPU: 3, MEMORY_MB: 2048, DISK_GB: 20})
    expect(flavorResources(b.flavor('m1.mixed'), false).resources).toEqual({PCPU: 3, VCPU: 1, MEMORY_MB: 4096, DISK_GB: 20})
    expect(flavorResources(b.flavor('m1.swap'), true).resources).toEqual({VCPU: 2, MEMORY_MB: 4096, DISK_GB: 7})
  })

  it('accounts usage columns the way the resource tracker does', () => {
    const b = small()
    b.addInstance('cmp1', 'm1.small')
    b.addInstance('cmp1', 'm1.swap', {boot_from_volume: true})
    const cn = b.build().nova.compute_nodes.find((c) => c.host === 'cmp1')
    // 512 reserved + 2048 + 4096; disk 20 + (bfv: 0 root) 5 + trunc(1536/1024)
    expect([cn?.vcpus_used, cn?.memory_mb_used, cn?.local_gb_used, cn?.free_ram_mb, cn?.running_vms]).toEqual([3, 6656, 26, 65536 - 6656, 2])
    expect(JSON.parse(cn?.stats ?? '{}')).toMatchObject({num_instances: '2', num_vm_active: '2', io_workload: '0'})
  })

  it('pins free dedicated pCPUs, records them in pinned_cpus and refuses a full host', () => {
    const b = small()
    const a = b.addInstance('pin1', 'm1.iso')
    const c = b.addInstance('pin1', 'm1.pinned')
    const s = b.build()
    const ta = parseInstanceNumaTopology(a.row.extra?.numa_topology ?? null)
    const tc = parseInstanceNumaTopology(c.row.extra?.numa_topology ?? null)
    if (!ta.ok || !ta.value || !tc.ok || !tc.value) throw new Error('unreadable')
    expect([...ta.value.cells[0].cpu_pinning.values()]).toEqual([4, 5])
    expect(ta.value.cells[0].cpuset_reserved).toEqual([6])
    // 7 is the only free pCPU left in cell 0: the second guest lands on cell 1
    expect(tc.value.cells[0].id).toBe(1)
    expect([...tc.value.cells[0].cpu_pinning.values()]).toEqual([12, 13])
    const host = parseHostNumaTopology(s.nova.compute_nodes.find((x) => x.host === 'pin1')?.numa_topology ?? null)
    if (!host.ok || !host.value) throw new Error('unreadable')
    expect(host.value.cells.map((x) => x.pinned_cpus)).toEqual([
      [4, 5, 6],
      [12, 13],
    ])
    const b2 = small()
    b2.addInstance('pin1', 'm1.mixed')
    b2.addInstance('pin1', 'm1.mixed')
    // placement still has 2 PCPU, but each NUMA cell has one free pCPU
    expect(() => b2.addInstance('pin1', 'm1.pinned')).toThrow(/NUMATopologyFilter/)
    expect(() => b2.addInstance('pin1', 'm1.iso')).toThrow(/placement would refuse/)
  })

  it('bumps provider generations per write and consumer generations per allocation write', () => {
    const b = small()
    const before = b.provider('cmp1').row.generation as number
    const i = b.addInstance('cmp1', 'm1.small')
    expect(b.provider('cmp1').row.generation).toBe(before + 1)
    expect(b.consumers.get(i.row.uuid)?.generation).toBe(1)
    b.addMigration(i.row.uuid, {type: 'migration', status: 'confirmed', dest: 'cmp2'})
    expect(b.consumers.get(i.row.uuid)?.generation).toBe(2)
    expect(b.provider('cmp1').row.generation).toBe(before + 2)
  })

  it('keeps the source allocation under the migration uuid while a move is in progress', () => {
    const b = small()
    const i = b.addInstance('cmp1', 'm1.small')
    const m = b.addMigration(i.row.uuid, {type: 'migration', status: 'migrating', dest: 'cmp2'})
    const s = b.build()
    const byConsumer = (c: string) => s.placement.allocations.filter((a) => a.consumer_id === c).map((a) => a.resource_provider_id)
    expect(new Set(byConsumer(m.row.uuid as string))).toEqual(new Set([b.provider('cmp1').row.id]))
    expect(new Set(byConsumer(i.row.uuid))).toEqual(new Set([b.provider('cmp2').row.id]))
    // nova 26 sends no consumer type: placement stores NULL for instances and migrations alike.
    expect(s.placement.consumers.find((c) => c.uuid === m.row.uuid)?.consumer_type_id).toBeNull()
  })

  it('mirrors aggregates in placement with the same uuid and records the AZ on instances', () => {
    const b = small()
    const i = b.addInstance('cmp2', 'm1.small')
    const s = b.build()
    const az2 = s.nova_api.aggregates.find((a) => a.name === 'az2')
    const pagg = s.placement.placement_aggregates.find((a) => a.uuid === az2?.uuid)
    expect(pagg).toBeDefined()
    expect(s.placement.resource_provider_aggregates).toContainEqual({resource_provider_id: b.provider('cmp2').row.id, aggregate_id: pagg?.id})
    expect(i.row.availability_zone).toBe('az2')
  })

  it('builds nested, sharing and ironic providers', () => {
    const b = small()
    b.addFlavor({name: 'g1.vgpu', vcpus: 2, memory_mb: 4096, root_gb: 20, extra_specs: {'resources:VGPU': '1'}})
    b.addFlavor({
      name: 'bm.gold',
      vcpus: 32,
      memory_mb: 131072,
      root_gb: 400,
      extra_specs: {'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'},
    })
    const gpu = b.addChildProvider('cmp1', {name: 'cmp1_pci_0000_81_00_0', inventories: {VGPU: {total: 4}}})
    b.addAggregate({name: 'nfs', hosts: ['cmp2']})
    b.addHost('cell1', {host: 'cmp3', vcpus: 16, memory_mb: 65536, local_gb: 0, shared_storage: true, aggregates: ['nfs']})
    const nfs = b.addSharingProvider({name: 'nfs-pool', disk_gb: 10000, aggregates: ['nfs']})
    const node = b.addIronicNode('cell1', {resource_class: 'BAREMETAL_GOLD', cpus: 32, memory_mb: 131072, local_gb: 400})
    const g = b.addInstance('cmp1', 'g1.vgpu')
    const d = b.addInstance('cmp3', 'm1.small')
    const bm = b.addInstance(node.node, 'bm.gold')
    const s = b.build()
    const rows = (c: string) => s.placement.allocations.filter((a) => a.consumer_id === c)
    expect(rows(g.row.uuid).find((a) => a.resource_class_id === 10)?.resource_provider_id).toBe(gpu.row.id)
    expect(gpu.row.root_provider_id).toBe(b.provider('cmp1').row.id)
    expect(rows(d.row.uuid).find((a) => a.resource_class_id === 2)?.resource_provider_id).toBe(nfs.row.id)
    const custom = s.placement.resource_classes.find((r) => r.name === 'CUSTOM_BAREMETAL_GOLD')
    expect(rows(bm.row.uuid).map((a) => [a.resource_class_id, a.used])).toEqual([[custom?.id, 1]])
    expect(s.placement.inventories.filter((i) => i.resource_provider_id === node.rp.row.id).map((i) => i.total)).toEqual([1])
  })

  it('writes blobs in Python json.dumps form with the nova_object wrappers', () => {
    const b = small()
    expect(pyDumps({a: [1, 2], b: new PyFloat(1), c: null, d: 'é'})).toBe('{"a": [1, 2], "b": 1.0, "c": null, "d": "\\u00e9"}')
    const blob = instanceFlavorBlob(b.flavor('m1.pinned'))
    expect(
      blob.startsWith(
        '{"cur": {"nova_object.name": "Flavor", "nova_object.namespace": "nova", "nova_object.version": "1.2", "nova_object.data": {"id": 3, "name": "m1.pinned"',
      ),
    ).toBe(true)
    expect(blob).toContain('"rxtx_factor": 1.0')
    expect(blob.endsWith('"old": null, "new": null}')).toBe(true)
  })

  it('is deterministic for a seed and differs across seeds', () => {
    const run = (seed: number) => {
      const b = new CloudBuilder({seed})
      b.addCell('cell1')
      b.addFlavor({name: 'f', vcpus: 1, memory_mb: 512})
      b.addHost('cell1', {host: 'h', vcpus: 4, memory_mb: 8192, local_gb: 10})
      b.addInstance('h', 'f')
      return JSON.stringify(b.build())
    }
    expect(run(5)).toBe(run(5))
    expect(run(5)).not.toBe(run(6))
  })
})
