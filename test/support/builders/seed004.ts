/**
 * The seed-004 cloud: three pinned hosts whose pinned_cpus stayed full after their instances were
 * deleted, so placement still offers their PCPU inventory while NUMATopologyFilter finds no free
 * pCPU. Shared by the engine test of that story and the end-to-end tests of `simulate boot`.
 */
import type {Snapshot} from '../../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../builders.js'

/** Each host: cells {0-3 shared, 4-7 dedicated} and {8-11 shared, 12-15 dedicated}, every dedicated pCPU pinned. */
export function seed004Builder(): CloudBuilder {
  const b = new CloudBuilder()
  b.addCell('cell1')
  b.addFlavor({name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 20})
  for (const i of [1, 2, 3]) {
    const host = `pinned-${i}`
    b.addHost('cell1', {
      host,
      vcpus: 16,
      memory_mb: 65536,
      local_gb: 1000,
      numa: {
        cells: [
          {
            cpuset: [0, 1, 2, 3],
            pcpuset: [4, 5, 6, 7],
            memory: 32768,
            siblings: [
              [4, 5],
              [6, 7],
            ],
          },
          {
            cpuset: [8, 9, 10, 11],
            pcpuset: [12, 13, 14, 15],
            memory: 32768,
            siblings: [
              [12, 13],
              [14, 15],
            ],
          },
        ],
      },
    })
    for (const cell of b.numaOf(host)) for (const p of cell.pcpuset) cell.pinned.add(p)
  }
  return b
}

export function seed004Cloud(): Snapshot {
  return seed004Builder().build()
}
