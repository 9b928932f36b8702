/**
 * Rules of docs/checks.md "leaks on nested and sharing trees" on hand-built rows (test/realnova plays
 * the same with real nova: vgpu_sharing, qos_bandwidth, pci_placement).
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CloudBuilder} from '../support/builders.js'

/**
 * Two hosts with a 1 GB local disk whose instances' DISK_GB sits on a sharing provider, as the libvirt
 * driver leaves it (LP 1784020): the node rows count those disks in local_gb_used.
 */
function sharedDisk(opts: {sharing: boolean}) {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 20})
  for (const host of ['cmp1', 'cmp2']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  const insts = [b.addInstance('cmp1', 'm1.small').row, b.addInstance('cmp1', 'm1.small').row]
  b.addAggregate({name: 'storage', hosts: ['cmp1', 'cmp2'], metadata: {}})
  const shared = opts.sharing ? b.addSharingProvider({name: 'shared-disk', disk_gb: 1000, aggregates: ['storage']}) : undefined
  const s = b.build()
  const disk = b.rcId('DISK_GB')
  for (const cn of s.nova.compute_nodes) {
    cn.local_gb = 1
    cn.free_disk_gb = 1 - cn.local_gb_used
    const rp = s.placement.resource_providers.find((p) => p.uuid === cn.uuid)
    const inv = s.placement.inventories.find((i) => i.resource_provider_id === rp?.id && i.resource_class_id === disk)
    if (!inv) throw new Error('fixture')
    inv.total = 1
    inv.max_unit = 1
  }
  // Placement took each root disk from the sharing provider (or, without one, nowhere: the
  // instances boot from nothing local), so no provider is over its capacity.
  for (const a of s.placement.allocations) {
    if (a.resource_class_id !== disk || !insts.some((i) => i.uuid === a.consumer_id)) continue
    if (shared) a.resource_provider_id = shared.row.id
    else a.used = 0
  }
  return s
}

describe('usage.negative-free on a node whose disks a sharing provider holds', () => {
  it('is not given where a DISK_GB sharing provider shares the node aggregate: local_gb_used counts the shared disks', () => {
    const fs = runChecks(buildModel(sharedDisk({sharing: true}))).findings
    expect(fs.filter((f) => f.check === 'usage')).toEqual([])
  })

  it('is given (warning) for the same row without the sharing provider', () => {
    const fs = runChecks(buildModel(sharedDisk({sharing: false}))).findings.filter((f) => f.code === 'usage.negative-free')
    expect(fs.map((f) => [f.subject.host, f.severity])).toEqual([['cmp1', 'warning']])
  })
})
