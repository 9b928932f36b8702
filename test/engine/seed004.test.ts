import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {defaultSchedulerConfig, simulateBoot} from '../../src/lib/engine/index.js'
import {seed004Builder, seed004Cloud} from '../support/builders/seed004.js'

const cfg = () => ({...defaultSchedulerConfig(), enabled_filters: ['ComputeFilter', 'NUMATopologyFilter']})

describe('seed 004: pinned_cpus stayed full', () => {
  it('placement still offers the hosts (PCPU inventory is free) but NUMATopologyFilter returns 0 hosts', () => {
    const r = simulateBoot(buildModel(seed004Cloud()), {flavor: 'm1.pinned'}, cfg(), {explain: true})
    // placement: 8 PCPU total, 0 allocated (instances gone) -> all 3 roots are candidates
    expect(r.placement.candidates).toBe(3)
    expect(r.query).toContain('resources=DISK_GB:20,MEMORY_MB:2048,PCPU:2')
    expect(r.instances[0]?.filters).toEqual([
      {name: 'ComputeFilter', start: 3, end: 3},
      {name: 'NUMATopologyFilter', start: 3, end: 0},
    ])
    expect(r.noValidHost).toBe(true)
    // each cell: pcpuset {4-7} all in pinned_cpus -> 0 free, needs 2
    expect(r.summary).toContain('0/3 hosts are available: 3 NUMATopologyFilter: insufficient free pCPUs in a NUMA cell (need 2, best has 0)')
    const v = r.verdicts.find((x) => x.host === 'pinned-2')
    expect(v?.stage).toBe('filter')
    expect(v?.reason).toMatch(/needs 2 free pCPUs, has 0 .*pinned_cpus \{4-7\}/)
  })

  it('the same host with its pinned_cpus cleared takes the instance and pins vCPUs onto one sibling pair', () => {
    const b = seed004Builder()
    // pinned-2's cell 0 keeps only 4-5 pinned (6-7 free); its cell 1 stays full
    const cell0 = b.numaOf('pinned-2')[0]
    cell0?.pinned.delete(6)
    cell0?.pinned.delete(7)
    const r = simulateBoot(buildModel(b.build()), {flavor: 'm1.pinned', numInstances: 2}, cfg(), {explain: true})
    // instance 1 -> pinned-2 (only host that fits); its consumed NUMA cell 0 now pins 4-7, so instance 2 fails
    expect(r.instances[0]?.host).toBe('pinned-2')
    expect(r.instances[1]?.host).toBeNull()
    expect(r.noValidHost).toBe(true)
  })

  it('an unshared flavor is not affected by NUMA pinning', () => {
    const r = simulateBoot(buildModel(seed004Cloud()), {flavor: 'm1.small'}, cfg())
    expect(r.placedAll).toBe(true)
    expect(r.instances[0]?.host).toBe('pinned-1')
  })
})
