import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CloudBuilder} from '../support/builders.js'

/** A varied cloud written by the shared CloudBuilder (independent of the checks): nothing to report. */
function variedCloud() {
  const b = new CloudBuilder({seed: 7})
  b.addCell('cell1')
  b.addFlavor({name: 'small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addFlavor({name: 'swap', vcpus: 1, memory_mb: 1024, root_gb: 10, ephemeral_gb: 5, swap: 1500})
  b.addFlavor({name: 'pinned', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  b.addFlavor({
    name: 'pinned-iso',
    vcpus: 2,
    memory_mb: 2048,
    root_gb: 10,
    extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'},
  })
  b.addFlavor({name: 'mixed', vcpus: 4, memory_mb: 4096, root_gb: 10, extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0-1'}})
  b.addFlavor({
    name: 'bm-gold',
    vcpus: 8,
    memory_mb: 16384,
    root_gb: 100,
    extra_specs: {'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'},
  })
  b.addAggregate({name: 'ssd'})
  b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az1', aggregates: ['ssd']})
  b.addHost('cell1', {host: 'cmp2', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az1'})
  // Dedicated pCPUs in NUMA cell 0 only: the builder records every instance NUMA cell as id 0, where
  // nova records the host cell it was fitted to (hardware._numa_fit_instance_cell).
  b.addHost('cell1', {
    host: 'cmp3',
    vcpus: 16,
    memory_mb: 65536,
    local_gb: 500,
    az: 'az2',
    numa: {
      cells: [
        {cpuset: [0, 1, 2, 3], pcpuset: [4, 5, 6, 7, 8, 9, 10, 11], memory: 32768},
        {cpuset: [12, 13, 14, 15], memory: 32768},
      ],
    },
  })
  b.addHost('cell1', {host: 'cmp4', vcpus: 16, memory_mb: 65536, local_gb: 0, shared_storage: true, aggregates: ['ssd']})
  b.addSharingProvider({name: 'nfs-ssd', disk_gb: 10000, aggregates: ['ssd']})
  b.addIronicNode('cell1', {resource_class: 'BAREMETAL_GOLD', cpus: 8, memory_mb: 16384, local_gb: 100})
  const a = b.addInstance('cmp1', 'small')
  b.addInstance('cmp1', 'swap')
  b.addInstance('cmp2', 'small')
  b.addInstance('cmp3', 'pinned')
  b.addInstance('cmp3', 'pinned-iso')
  b.addInstance('cmp3', 'mixed')
  b.addInstance('cmp4', 'small')
  const ironicNode = b.hosts.find((h) => h.ironic)?.node as string
  b.addInstance(ironicNode, 'bm-gold')
  b.addMigration(a.row.uuid, {type: 'live-migration', status: 'running', dest: 'cmp2'})
  const d = b.addInstance('cmp2', 'small')
  b.deleteInstance(d.row.uuid)
  return b
}

describe('audit on a varied clean cloud written by CloudBuilder', () => {
  it('reports nothing: sharing DISK_GB, ironic custom classes, pinned/isolate/mixed, a live migration in progress, a deleted instance', () => {
    const report = runChecks(buildModel(variedCloud().build()))
    expect(report.findings.map((f) => [f.code, f.message])).toEqual([])
  })
})
