/** A builder cloud with `live` instances and `leaked` deleted ones that kept their allocations (3 rows each: VCPU, MEMORY_MB, DISK_GB). */
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

export function leakySnapshot(live: number, leaked: number, opts: {seed: number; hosts: number}): Snapshot {
  const b = new CloudBuilder({seed: opts.seed, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.tiny', vcpus: 1, memory_mb: 256, root_gb: 1})
  for (let h = 0; h < opts.hosts; h++) b.addHost('cell1', {host: `cmp${h}`, vcpus: 64, memory_mb: 65536, local_gb: 2000})
  for (let i = 0; i < live + leaked; i++) {
    const uuid = b.addInstance(`cmp${i % opts.hosts}`, 'm1.tiny').row.uuid
    if (i >= live) b.deleteInstance(uuid, {keepAllocations: true})
  }
  return b.build()
}
