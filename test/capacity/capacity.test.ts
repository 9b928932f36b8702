/**
 * Capacity on small hand-built clouds: the counts are worked out by hand in each test, the naive
 * division is shown to overestimate where filters, NUMA, groups, traits or max_unit say no, and the
 * fast per-host path is checked against booting one after another through the engine.
 */
import {describe, expect, it} from 'vitest'

import {capacityFor, type CapacityOptions, type FlavorCapacity} from '../../src/lib/capacity/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig, ZED_DEFAULT_FILTERS} from '../../src/lib/engine/index.js'
import {cloud, type CloudBuilder} from '../support/builders.js'

const NUMA_FILTERS = [...ZED_DEFAULT_FILTERS, 'NUMATopologyFilter']

function base(): CloudBuilder {
  const b = cloud({seed: 7, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 1024, root_gb: 10})
  b.addFlavor({name: 'm1.large', vcpus: 4, memory_mb: 8192, root_gb: 80})
  return b
}

/** Both paths, asserting they agree host by host; returns the fast one. */
function both(snap: Snapshot, flavor: string, opts: Omit<CapacityOptions, 'flavors' | 'method' | 'perHost'> = {}): FlavorCapacity {
  const fast = capacityFor(buildModel(snap), {...opts, flavors: [flavor], perHost: true}).flavors[0] as FlavorCapacity
  const engine = capacityFor(buildModel(snap), {...opts, flavors: [flavor], perHost: true, method: 'engine'}).flavors[0] as FlavorCapacity
  expect(fast.method).toBe('fast')
  expect(engine.method).toBe('engine')
  expect(fast.hosts?.map((h) => [h.host, h.fits])).toEqual(engine.hosts?.map((h) => [h.host, h.fits]))
  expect(fast.fits).toBe(engine.fits)
  return fast
}

const hostFits = (fc: FlavorCapacity) => Object.fromEntries((fc.hosts ?? []).map((h) => [h.host, h.fits]))
const hostLimits = (fc: FlavorCapacity) => Object.fromEntries((fc.hosts ?? []).map((h) => [h.host, h.limit]))

describe('capacity: counts worked out by hand', () => {
  it('plain hosts: the smallest of VCPU, MEMORY_MB and DISK_GB, and the division agrees', () => {
    const b = base()
    // MEMORY_MB: (65536 - 512) x 1.5 = 97536 -> 11 x 8192; VCPU 16 x 16 = 256 -> 64; DISK 1000 -> 12
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addInstance('c2', 'm1.large') // 8192 MB used: (97536 - 8192) / 8192 = 10.9 -> 10
    const fc = both(b.build(), 'm1.large')
    expect(hostFits(fc)).toEqual({c1: 11, c2: 10})
    expect(fc.fits).toBe(21)
    expect(fc.naive).toBe(21)
    expect(fc.overestimate).toBe(0)
    expect(hostLimits(fc)).toEqual({c1: 'MEMORY_MB exhausted', c2: 'MEMORY_MB exhausted'})
  })

  it('max_unit: a 32-vCPU flavor on 16-core hosts divides to 8 per host but fits nowhere', () => {
    const b = base()
    b.addFlavor({name: 'm1.huge', vcpus: 32, memory_mb: 4096, root_gb: 10})
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const fc = both(b.build(), 'm1.huge')
    expect(fc.fits).toBe(0)
    expect(fc.naive).toBe(16) // 256 / 32 = 8 per host
    expect(fc.overestimate).toBe(16)
    expect(hostLimits(fc).c1).toMatch(/max_unit/)
  })

  it('traits: only the host with CUSTOM_GOLD counts for a flavor that requires it', () => {
    const b = base()
    b.addFlavor({name: 'gold', vcpus: 2, memory_mb: 16384, root_gb: 20, extra_specs: {'trait:CUSTOM_GOLD': 'required'}})
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000, traits: ['CUSTOM_GOLD']})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const fc = both(b.build(), 'gold')
    // 97536 / 16384 = 5.95 -> 5 on c1 only
    expect(hostFits(fc)).toEqual({c1: 5, c2: 0})
    expect(fc.naive).toBe(10)
    expect(hostLimits(fc).c2).toBe('placement: lacks trait CUSTOM_GOLD')
  })

  it('anti-affinity group: one member per host, whatever the free resources', () => {
    const b = base()
    for (const h of ['c1', 'c2', 'c3']) b.addHost('cell1', {host: h, vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const g = b.addServerGroup({name: 'web', policy: 'anti-affinity'})
    b.addInstance('c1', 'm1.small', {server_group: 'web'})
    const fc = both(b.build(), 'm1.small', {request: {hints: {group: g.uuid}}})
    expect(hostFits(fc)).toEqual({c1: 0, c2: 1, c3: 1})
    expect(fc.naive).toBeGreaterThan(200)
    expect(hostLimits(fc).c1).toBe('anti-affinity group web (max_server_per_host=1)')
  })

  it('anti-affinity with max_server_per_host=2 counts two per host', () => {
    const b = base()
    for (const h of ['c1', 'c2']) b.addHost('cell1', {host: h, vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const g = b.addServerGroup({name: 'db', policy: 'anti-affinity', rules: {max_server_per_host: 2}})
    b.addInstance('c2', 'm1.small', {server_group: 'db'})
    const fc = both(b.build(), 'm1.small', {request: {hints: {group: g.uuid}}})
    expect(hostFits(fc)).toEqual({c1: 2, c2: 1})
  })

  it('affinity group with no member yet: all go where the first one lands', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 32768, local_gb: 1000})
    const g = b.addServerGroup({name: 'pack', policy: 'affinity'})
    const fc = both(b.build(), 'm1.large', {request: {hints: {group: g.uuid}}})
    // RAMWeigher spreads: the first member lands on c1 (more free RAM): 11 there, none on c2.
    expect(hostFits(fc)).toEqual({c1: 11, c2: 0})
    expect(fc.naive).toBe(11 + 5) // c2: (32768 - 512) x 1.5 / 8192 = 5.9
  })

  it('NUMA fragmentation: 4 free pCPUs split 2 + 2 over two cells fit no 4-pCPU guest', () => {
    const b = base()
    b.addFlavor({name: 'pin2', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
    b.addFlavor({name: 'pin4', vcpus: 4, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
    // cell 0: CPUs 0-7, dedicated 4-7; cell 1: CPUs 8-15, dedicated 12-15
    b.addHost('cell1', {host: 'p1', vcpus: 16, memory_mb: 65536, local_gb: 1000, cpu_dedicated_set: '4-7,12-15'})
    b.addHost('cell1', {host: 'p2', vcpus: 16, memory_mb: 65536, local_gb: 1000, cpu_dedicated_set: '4-7,12-15'})
    b.addInstance('p1', 'pin2', {pin: [4, 5]})
    b.addInstance('p1', 'pin2', {pin: [12, 13]})
    const config = {...defaultSchedulerConfig(), enabled_filters: NUMA_FILTERS}
    const fc = both(b.build(), 'pin4', {config})
    // p1: PCPU 8 - 4 = 4 free -> naive 1, but no cell has 4 free; p2: one per cell -> 2
    expect(hostFits(fc)).toEqual({p1: 0, p2: 2})
    expect(fc.naive).toBe(3)
    expect(hostLimits(fc).p1).toBe('NUMA: no cell with 4 free dedicated CPUs')
    expect(hostLimits(fc).p2).toMatch(/NUMA: no cell with 4 free dedicated CPUs|PCPU exhausted/)
    // pin2 fills the gaps: 2 on p1 (one per cell), 4 on p2
    const small = both(b.build(), 'pin2', {config})
    expect(hostFits(small)).toEqual({p1: 2, p2: 4})
  })

  it('RamFilter and NumInstancesFilter, when enabled, limit below placement', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000, ram_allocation_ratio: 1.0})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const config = {...defaultSchedulerConfig(), enabled_filters: [...ZED_DEFAULT_FILTERS, 'RamFilter', 'NumInstancesFilter'], max_instances_per_host: 30}
    const fc = both(b.build(), 'm1.small', {config})
    // c1: RAM (65536 - 512) / 1024 = 63 in placement, NumInstancesFilter stops at 30; c2 the same.
    expect(hostFits(fc)).toEqual({c1: 30, c2: 30})
    expect(hostLimits(fc).c1).toBe('NumInstancesFilter: too many instances')
  })

  it('a disabled host and a down host count zero; the division still counts them', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000, disabled: true})
    b.addHost('cell1', {host: 'c3', vcpus: 16, memory_mb: 65536, local_gb: 1000, down: true})
    const fc = both(b.build(), 'm1.large')
    expect(hostFits(fc)).toEqual({c1: 11, c2: 0, c3: 0})
    expect(fc.naive).toBe(33)
    expect(hostLimits(fc).c2).toBe('placement: disabled (COMPUTE_STATUS_DISABLED)')
    expect(hostLimits(fc).c3).toBe('ComputeFilter: compute service down')
  })

  it('per AZ and per aggregate breakdowns add up, and --availability-zone scopes the request', () => {
    const b = base()
    b.addAggregate({name: 'ssd'})
    b.addHost('cell1', {host: 'a1', vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'az1', aggregates: ['ssd']})
    b.addHost('cell1', {host: 'a2', vcpus: 16, memory_mb: 32768, local_gb: 1000, az: 'az1'})
    b.addHost('cell1', {host: 'b1', vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'az2', aggregates: ['ssd']})
    const snap = b.build()
    const fc = both(snap, 'm1.large')
    expect(fc.byAz).toEqual([
      {name: 'az1', hosts: 2, fits: 16, naive: 16},
      {name: 'az2', hosts: 1, fits: 11, naive: 11},
    ])
    expect(fc.byAggregate).toEqual([{name: 'ssd', hosts: 2, fits: 22, naive: 22}])
    const az1 = both(snap, 'm1.large', {availabilityZone: 'az1'})
    expect(az1.fits).toBe(16)
    expect(az1.hosts?.map((h) => h.host)).toEqual(['a1', 'a2'])
  })
})

describe('capacity: mix', () => {
  it('boots the flavors in proportion through the engine until one does not fit', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 16896, local_gb: 1000, ram_allocation_ratio: 1.0})
    // MEMORY_MB capacity 16384: pairs of small (1024) + large (8192) = 9216; after 1 pair 7168 left: small fits, large not.
    const r = capacityFor(buildModel(b.build()), {
      mix: [
        {flavor: 'm1.small', weight: 50},
        {flavor: 'm1.large', weight: 50},
      ],
    })
    expect(r.mix?.byFlavor).toEqual([
      {flavor: 'm1.small', fits: 2},
      {flavor: 'm1.large', fits: 1},
    ])
    expect(r.mix?.total).toBe(3)
    expect(r.mix?.stoppedBy).toBe('m1.large')
  })
})
