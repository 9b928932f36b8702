/** What-if transforms and the drain, checked through the capacity they leave. */
import {describe, expect, it} from 'vitest'

import {capacityFor, type FlavorCapacity} from '../../src/lib/capacity/index.js'
import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {parseHostNumaTopology} from '../../src/lib/domain/nova-objects.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig, ZED_DEFAULT_FILTERS} from '../../src/lib/engine/index.js'
import {
  addHostsLike,
  applyPlannedRepairs,
  applyScenario,
  disableHost,
  drainHosts,
  parseAllocationRatio,
  setAllocationRatio,
} from '../../src/lib/scenario/index.js'
import {cloud, type CloudBuilder} from '../support/builders.js'

function base(): CloudBuilder {
  const b = cloud({seed: 11, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 1024, root_gb: 10})
  b.addFlavor({name: 'm1.large', vcpus: 4, memory_mb: 8192, root_gb: 80})
  b.addFlavor({name: 'm1.cpu', vcpus: 8, memory_mb: 1024, root_gb: 10})
  return b
}

function fits(snap: Snapshot, flavor: string, config = defaultSchedulerConfig()): Record<string, number> {
  const fc = capacityFor(buildModel(snap), {flavors: [flavor], perHost: true, config}).flavors[0] as FlavorCapacity
  return Object.fromEntries((fc.hosts ?? []).map((h) => [h.host, h.fits]))
}

describe('scenario transforms', () => {
  it('--disable-host: the host counts zero and the input snapshot is untouched', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const snap = b.build()
    const before = structuredClone(snap)
    const r = disableHost(snap, 'c1')
    expect(snap).toEqual(before)
    expect(fits(r.snapshot, 'm1.large')).toEqual({c1: 0, c2: 11})
    const fc = capacityFor(buildModel(r.snapshot), {flavors: ['m1.large'], perHost: true}).flavors[0] as FlavorCapacity
    expect(fc.hosts?.[0]?.limit).toBe('placement: disabled (COMPUTE_STATUS_DISABLED)')
    expect(() => disableHost(snap, 'nope')).toThrow(/not a live compute node/)
  })

  it('--set-allocation-ratio VCPU=2.0[@aggregate] changes the VCPU bound where asked', () => {
    const b = base()
    b.addAggregate({name: 'batch'})
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['batch']})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const snap = b.build()
    // ratio 16: VCPU 256 / 8 = 32, MEMORY 97536 / 1024 = 95, DISK 100 -> 32 per host
    expect(fits(snap, 'm1.cpu')).toEqual({c1: 32, c2: 32})
    expect(parseAllocationRatio('VCPU=2.0@batch')).toEqual({rc: 'VCPU', ratio: 2, aggregate: 'batch'})
    // ratio 2: 32 / 8 = 4
    expect(fits(setAllocationRatio(snap, parseAllocationRatio('VCPU=2.0@batch')).snapshot, 'm1.cpu')).toEqual({c1: 4, c2: 32})
    expect(fits(setAllocationRatio(snap, parseAllocationRatio('VCPU=2.0')).snapshot, 'm1.cpu')).toEqual({c1: 4, c2: 4})
    // CoreFilter reads the compute node column: it follows too.
    const config = {...defaultSchedulerConfig(), enabled_filters: [...ZED_DEFAULT_FILTERS, 'CoreFilter']}
    expect(fits(setAllocationRatio(snap, parseAllocationRatio('VCPU=2.0')).snapshot, 'm1.cpu', config)).toEqual({c1: 4, c2: 4})
    expect(() => parseAllocationRatio('VCPU:2')).toThrow(/RC=RATIO/)
    expect(() => setAllocationRatio(snap, parseAllocationRatio('VCPU=2@nope'))).toThrow(/aggregate "nope" not found/)
  })

  it('--add-hosts N --like HOST adds empty copies with the host traits, AZ and aggregates', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'az1', traits: ['CUSTOM_GOLD']})
    b.addInstance('c1', 'm1.large')
    b.addInstance('c1', 'm1.large')
    const snap = b.build()
    const r = addHostsLike(snap, 2, 'c1')
    expect(fits(r.snapshot, 'm1.large')).toEqual({c1: 9, 'c1-copy-1': 11, 'c1-copy-2': 11})
    const model = buildModel(r.snapshot)
    const rep = capacityFor(model, {flavors: ['m1.large'], availabilityZone: 'az1'})
    expect(rep.flavors[0]?.fits).toBe(31)
    expect(runChecks(model, {checks: ['providers', 'cells', 'aggregates', 'pinning']}).findings.filter((f) => f.severity === 'error')).toEqual([])
  })

  it('--apply-repairs frees leaked allocations and stuck pins: capacity recovered', () => {
    const b = base()
    b.addFlavor({name: 'pin2', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
    b.addHost('cell1', {host: 'p1', vcpus: 16, memory_mb: 65536, local_gb: 1000, cpu_dedicated_set: '4-7,12-15'})
    const keep = b.addInstance('p1', 'pin2')
    const gone = [b.addInstance('p1', 'pin2'), b.addInstance('p1', 'pin2'), b.addInstance('p1', 'pin2')]
    // The host died while they were deleted: allocations and pins stayed.
    for (const g of gone) b.deleteInstance(g.row.uuid, {keepAllocations: true, keepTracked: true})
    const snap = b.build()
    const config = {...defaultSchedulerConfig(), enabled_filters: [...ZED_DEFAULT_FILTERS, 'NUMATopologyFilter']}
    expect(fits(snap, 'pin2', config)).toEqual({p1: 0})
    const r = applyPlannedRepairs(snap)
    expect(r.removedAllocations).toBeGreaterThan(0)
    expect(r.freed.PCPU).toBe(6)
    // p1 is alive: what the leaks held is schedulable again (3 x pin2: PCPU 2, MEMORY_MB 2048, DISK_GB 10).
    expect(r.freedByProvider).toEqual([{provider: expect.any(String), name: 'p1', schedulable: true, resources: {PCPU: 6, MEMORY_MB: 6144, DISK_GB: 30}}])
    expect(r.pins.reduce((n, p) => n + p.released.length, 0)).toBe(6)
    expect(fits(r.snapshot, 'pin2', config)).toEqual({p1: 3})
    // The instance that is still there keeps its allocation and its pins.
    expect(r.snapshot.placement.allocations.some((a) => a.consumer_id === keep.row.uuid)).toBe(true)
    const cn = r.snapshot.nova.compute_nodes[0]
    const topo = parseHostNumaTopology(cn?.numa_topology ?? null)
    const pinned = topo.ok ? topo.value?.cells.flatMap((c) => c.pinned_cpus) : null
    expect(pinned).toHaveLength(2)
    // Through applyScenario, the same.
    expect(fits(applyScenario(snap, {applyRepairs: true}).snapshot, 'pin2', config)).toEqual({p1: 3})
  })
})

describe('drain', () => {
  it('re-places the instances through the engine and reports those that find no host', () => {
    const b = base()
    b.addHost('cell1', {host: 'c1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c2', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addHost('cell1', {host: 'c3', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    b.addServerGroup({name: 'pack', policy: 'affinity'})
    b.addServerGroup({name: 'spread', policy: 'anti-affinity'})
    b.addInstance('c1', 'm1.large', {display_name: 'big-1'})
    b.addInstance('c1', 'm1.large', {display_name: 'big-2'})
    b.addInstance('c1', 'm1.small', {display_name: 'stuck', server_group: 'pack'})
    b.addInstance('c2', 'm1.small', {display_name: 'spread-a', server_group: 'spread'})
    b.addInstance('c1', 'm1.small', {display_name: 'spread-b', server_group: 'spread'})
    b.addInstance('c3', 'm1.small', {display_name: 'spread-c', server_group: 'spread'})
    const snap = b.build()
    const cfg = defaultSchedulerConfig()
    const scen = applyScenario(snap, {drainHosts: ['c1']})
    const model = buildModel(scen.snapshot)
    const {state, reports} = drainHosts(model, ['c1'], cfg)
    const rep = reports[0]
    expect(rep?.instances).toBe(4)
    expect(rep?.replaced.map((i) => i.name).sort()).toEqual(['big-1', 'big-2'])
    // affinity member: its group lives on c1 (disabled); anti-affinity: c2 and c3 hold members already.
    expect(rep?.failed.map((i) => i.name).sort()).toEqual(['spread-b', 'stuck'])
    expect(rep?.failed.find((i) => i.name === 'stuck')?.reason).toMatch(/affinity/)
    // Capacity after the drain: c1 gone, the two large instances now use 16384 MB on c2/c3.
    const fc = capacityFor(model, {flavors: ['m1.large'], perHost: true, state}).flavors[0] as FlavorCapacity
    expect(fc.hosts?.find((h) => h.host === 'c1')?.fits).toBe(0)
    // c2, c3: 11 each with m1.small members (1024 MB): (97536 - 1024) / 8192 = 11.78 -> 11; minus the 2 re-placed
    expect(fc.fits).toBe(11 + 11 - 2)
  })
})
