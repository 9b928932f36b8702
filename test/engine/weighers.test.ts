/**
 * Weighers and nova's weight handler (nova/weights.py, nova/scheduler/weights/*.py, Zed): raw values
 * clamped to the weigher's minval, normalised (minval/maxval, else the hosts' min/max; equal bounds
 * -> 0), times the multiplier (config, or the lowest per-aggregate value), summed, sorted
 * descending and stable; a single host is not weighed.
 */
import {describe, expect, it} from 'vitest'

import {defaultSchedulerConfig, type EngineRelease, type SchedulerConfig} from '../../src/lib/engine/config.js'
import type {HostState} from '../../src/lib/engine/host-state.js'
import type {RequestSpec} from '../../src/lib/engine/request-spec.js'
import {imagePropsWeight, multiplierFor, normalize, resolveWeighers, weighHosts, WEIGHERS} from '../../src/lib/engine/weighers.js'
import {aggregate, hostState, requestSpec} from '../support/builders.js'

const cfg = (over: Partial<SchedulerConfig> = {}): SchedulerConfig => ({...defaultSchedulerConfig(), ...over})

function weigh(names: string[], hosts: HostState[], opts: {spec?: Partial<RequestSpec>; cfg?: Partial<SchedulerConfig>} = {}) {
  const {weighers, unknown} = resolveWeighers(names)
  expect(unknown).toEqual([])
  return weighHosts(hosts, requestSpec(opts.spec), weighers, cfg(opts.cfg), true)
}

const h = (host: string, over: Partial<HostState> = {}) => hostState({host, ...over})

describe('normalize (nova.weights.normalize)', () => {
  it.each([
    [[], undefined, []],
    [[5, 5, 5], undefined, [0, 0, 0]],
    [[1, 3, 5], undefined, [0, 0.5, 1]],
    [[-2, 2], undefined, [0, 1]],
    // minval = 0 (RAM/CPU/Disk/IoOps): the lower bound is 0, not the hosts' minimum
    [[2, 4], 0, [0.5, 1]],
    [[3, 3], 0, [1, 1]],
    [[0, 0], 0, [0, 0]],
  ] as const)('%j with minval %s -> %j', (values, minval, out) => {
    expect(normalize([...values], minval)).toEqual(out)
  })
})

describe('each weigher: raw value, normalisation, default multiplier', () => {
  it.each([
    // name, host a, host b, [raw a, raw b], [score a, score b]
    ['RAMWeigher', {freeRamMb: 1024}, {freeRamMb: 4096}, [1024, 4096], [0.25, 1]],
    ['RAMWeigher', {freeRamMb: -512}, {freeRamMb: 2048}, [0, 2048], [0, 1]], // clamped to minval 0
    ['RAMWeigher', {freeRamMb: 2048}, {freeRamMb: 2048}, [2048, 2048], [1, 1]], // equal but not at minval: 1
    ['CPUWeigher', {vcpusTotal: 16, cpuAllocationRatio: 16, vcpusUsed: 10}, {vcpusTotal: 16, cpuAllocationRatio: 1, vcpusUsed: 4}, [246, 12], [1, 12 / 246]],
    ['DiskWeigher', {freeDiskMb: 10240}, {freeDiskMb: 40960}, [10240, 40960], [0.25, 1]],
    ['IoOpsWeigher', {numIoOps: 2}, {numIoOps: 4}, [2, 4], [-0.5, -1]], // multiplier -1: busy hosts last
    ['PCIWeigher', {pciPools: []}, {pciPools: [{vendor_id: 'v', product_id: 'p', numa_node: 0, count: 4, tags: {}}]}, [100, 96], [1, 0]], // 100 - min(free, 99)
    ['PCIWeigher', {pciPools: [{vendor_id: 'v', product_id: 'p', numa_node: 0, count: 150, tags: {}}]}, {pciPools: []}, [1, 100], [0, 1]],
    ['BuildFailureWeigher', {failedBuilds: 3}, {failedBuilds: 0}, [3, 0], [-1000000, 0]], // negated multiplier
    ['CrossCellWeigher', {}, {}, [0, 0], [0, 0]], // a boot has no cross-cell preference
  ] as const)('%s: %j vs %j', (name, a, b, raws, scores) => {
    const out = weigh([name], [h('a', a as Partial<HostState>), h('b', b as Partial<HostState>)])
    const byHost = new Map(out.map((w) => [w.hs.host, w]))
    expect([byHost.get('a')?.parts?.[0]?.raw, byHost.get('b')?.parts?.[0]?.raw]).toEqual(raws)
    expect(byHost.get('a')?.weight).toBeCloseTo(scores[0], 12)
    expect(byHost.get('b')?.weight).toBeCloseTo(scores[1], 12)
  })

  it('server group soft affinity counts members on the host; soft anti-affinity counts them negatively', () => {
    const group = {uuid: 'g', name: 'g', policy: 'soft-affinity', rules: {}, members: new Set(['m1', 'm2']), hosts: []}
    const hosts = [h('a', {instances: new Set(['m1', 'm2', 'x'])}), h('b', {instances: new Set(['x'])})]
    const aff = weigh(['ServerGroupSoftAffinityWeigher'], hosts, {spec: {group}})
    expect(aff.map((w) => [w.hs.host, w.parts?.[0]?.raw, w.weight])).toEqual([
      ['a', 2, 1],
      ['b', 0, 0],
    ])
    const anti = weigh(['ServerGroupSoftAntiAffinityWeigher'], hosts, {spec: {group: {...group, policy: 'soft-anti-affinity'}}})
    expect(anti.map((w) => [w.hs.host, w.parts?.[0]?.raw, w.weight])).toEqual([
      ['b', 0, 1],
      ['a', -2, 0],
    ])
    // the other policy's weigher gives 0 to everyone
    expect(weigh(['ServerGroupSoftAntiAffinityWeigher'], hosts, {spec: {group}}).map((w) => w.weight)).toEqual([0, 0])
  })

  it('nova default multipliers, per release: all_weighers of each and the value of each option', () => {
    const defaults = (release: EngineRelease) => {
      const c = defaultSchedulerConfig(release)
      return c.weight_classes.map((n) => {
        const w = WEIGHERS[n]
        if (!w) throw new Error(`${n} is not an engine weigher`)
        return [w.name, c[w.option], Boolean(w.negateMultiplier)]
      })
    }
    const zed = [
      ['RAMWeigher', 1, false],
      ['CPUWeigher', 1, false],
      ['DiskWeigher', 1, false],
      ['IoOpsWeigher', -1, false],
      ['PCIWeigher', 1, false],
      ['ServerGroupSoftAffinityWeigher', 1, false],
      ['ServerGroupSoftAntiAffinityWeigher', 1, false],
      ['BuildFailureWeigher', 1000000, true],
      ['CrossCellWeigher', 1000000, false],
    ]
    expect(defaults('zed')).toEqual(zed)
    // nova 31: three more weighers in nova/scheduler/weights, one of them on by default
    expect(defaults('2025.1')).toEqual([
      ...zed,
      ['HypervisorVersionWeigher', 1, false],
      ['NumInstancesWeigher', 0, false],
      ['ImagePropertiesWeigher', 0, false],
    ])
  })
})

describe('2025.1 weighers (nova 31)', () => {
  it('HypervisorVersionWeigher prefers the newer hypervisor; an unreported version counts 0; no minval', () => {
    const hosts = [h('old', {hypervisorVersion: 6000000}), h('new', {hypervisorVersion: 8000000}), h('none', {hypervisorVersion: null as unknown as number})]
    const out = weigh(['HypervisorVersionWeigher'], hosts, {cfg: {hypervisor_version_weight_multiplier: 1}})
    expect(out.map((w) => [w.hs.host, w.parts?.[0]?.raw, w.weight])).toEqual([
      ['new', 8000000, 1],
      ['old', 6000000, 0.75],
      ['none', 0, 0],
    ])
    // only the hosts' own min / max bound it: 6000000 .. 8000000
    const two = weigh(['HypervisorVersionWeigher'], hosts.slice(0, 2), {cfg: {hypervisor_version_weight_multiplier: -2}})
    expect(two.map((w) => [w.hs.host, w.weight])).toEqual([
      ['old', 0],
      ['new', -2],
    ])
  })

  it('NumInstancesWeigher: positive packs, negative spreads, 0 (default) leaves the order', () => {
    const hosts = [h('a', {numInstances: 1}), h('b', {numInstances: 5}), h('c', {numInstances: 3})]
    expect(weigh(['NumInstancesWeigher'], hosts, {cfg: {num_instances_weight_multiplier: 1}}).map((w) => [w.hs.host, w.weight])).toEqual([
      ['b', 1],
      ['c', 0.5],
      ['a', 0],
    ])
    expect(weigh(['NumInstancesWeigher'], hosts, {cfg: {num_instances_weight_multiplier: -1}}).map((w) => w.hs.host)).toEqual(['a', 'c', 'b'])
    expect(weigh(['NumInstancesWeigher'], hosts).map((w) => w.hs.host)).toEqual(['a', 'b', 'c'])
  })

  it('ImagePropertiesWeigher counts the instances sharing each requested property value, by image_props_weight_setting when set', () => {
    const win = {os_distro: 'windows', hw_machine_type: 'pc'}
    const existing = [{os_distro: 'linux'}, {os_distro: 'linux', hw_machine_type: 'pc'}, win]
    // (os_distro, windows) on one instance, (hw_machine_type, pc) on two; linux is not asked for
    expect(imagePropsWeight(win, existing, {})).toBe(3)
    expect(imagePropsWeight(win, existing, {os_distro: 2, hw_machine_type: -1})).toBe(0)
    // a property the setting does not name counts 0
    expect(imagePropsWeight(win, existing, {os_distro: 1})).toBe(1)
    expect(imagePropsWeight({}, existing, {})).toBe(0)
  })

  it('ImagePropertiesWeigher weighs hosts by their instances when the multiplier is not 0, and is 0 everywhere at its default', () => {
    const hosts = [h('none', {instanceImageProps: []}), h('lin', {instanceImageProps: [{os_distro: 'linux'}, {os_distro: 'linux', hw_machine_type: 'pc'}]})]
    const spec = {image: {id: 'img', diskFormat: null, properties: {os_distro: 'linux'}}}
    expect(
      weigh(['ImagePropertiesWeigher'], hosts, {spec, cfg: {image_props_weight_multiplier: 1}}).map((w) => [w.hs.host, w.parts?.[0]?.raw, w.weight]),
    ).toEqual([
      ['lin', 2, 1],
      ['none', 0, 0],
    ])
    expect(weigh(['ImagePropertiesWeigher'], hosts, {spec, cfg: {image_props_weight_multiplier: -1}}).map((w) => w.hs.host)).toEqual(['none', 'lin'])
    // snapshots carry no instance image properties: at the default multiplier nothing is read...
    const unknown = [h('a'), h('b')]
    expect(weigh(['ImagePropertiesWeigher'], unknown, {spec}).map((w) => w.weight)).toEqual([0, 0])
    // ...and a non-zero one is refused rather than guessed
    expect(() => weigh(['ImagePropertiesWeigher'], unknown, {spec, cfg: {image_props_weight_multiplier: 1}})).toThrow(/does not capture/)
  })
})

describe('weight handler', () => {
  it('a single host is not weighed', () => {
    const [only] = weigh(['RAMWeigher', 'BuildFailureWeigher'], [h('a', {failedBuilds: 5})])
    expect(only?.weight).toBe(0)
    expect(only?.parts).toEqual([])
  })

  it('sums weighers with their multipliers (worked example)', () => {
    // RAM: 8192 / 16384 -> 0.5 / 1 (minval 0); IoOps: 1 / 3 -> 1/3, 1 x -1; multiplier ram 2
    const out = weigh(['RAMWeigher', 'IoOpsWeigher'], [h('a', {freeRamMb: 8192, numIoOps: 1}), h('b', {freeRamMb: 16384, numIoOps: 3})], {
      cfg: {ram_weight_multiplier: 2},
    })
    expect(out.map((w) => w.hs.host)).toEqual(['b', 'a'])
    expect(out[0]?.weight).toBeCloseTo(2 - 1, 12)
    expect(out[1]?.weight).toBeCloseTo(1 - 1 / 3, 12)
    expect(out[1]?.parts?.map((p) => [p.weigher, p.multiplier, p.normalized])).toEqual([
      ['RAMWeigher', 2, 0.5],
      ['IoOpsWeigher', -1, 1 / 3],
    ])
  })

  it('sorts descending and keeps the input order of equal weights (stable)', () => {
    const hosts = ['a', 'b', 'c', 'd', 'e'].map((n, i) => h(n, {freeRamMb: i % 2 === 0 ? 1000 : 2000}))
    expect(weigh(['RAMWeigher'], hosts).map((w) => w.hs.host)).toEqual(['b', 'd', 'a', 'c', 'e'])
    expect(weigh(['CrossCellWeigher'], hosts).map((w) => w.hs.host)).toEqual(['a', 'b', 'c', 'd', 'e'])
  })

  it('per-aggregate multipliers: the lowest value wins; one that float() cannot read falls back to the config', () => {
    const c = cfg()
    const w = WEIGHERS.RAMWeigher
    if (!w) throw new Error('RAMWeigher missing')
    expect(multiplierFor(w, h('a'), c)).toBe(1)
    expect(multiplierFor(w, h('a', {aggregates: [aggregate({ram_weight_multiplier: '2.5'})]}), c)).toBe(2.5)
    expect(multiplierFor(w, h('a', {aggregates: [aggregate({ram_weight_multiplier: '2.5'}), aggregate({ram_weight_multiplier: ' -1 '})]}), c)).toBe(-1)
    expect(multiplierFor(w, h('a', {aggregates: [aggregate({ram_weight_multiplier: 'abc'})]}), c)).toBe(1)
    expect(multiplierFor(w, h('a', {aggregates: [aggregate({ram_weight_multiplier: '1,2'})]}), c)).toBe(1)
    // BuildFailureWeigher negates whatever it reads
    const bf = WEIGHERS.BuildFailureWeigher
    if (!bf) throw new Error('BuildFailureWeigher missing')
    expect(multiplierFor(bf, h('a', {aggregates: [aggregate({build_failure_weight_multiplier: '10'})]}), c)).toBe(-10)
  })

  it('an aggregate multiplier changes the order, and a later config change is seen', () => {
    const agg = [aggregate({ram_weight_multiplier: '-1'})]
    const hosts = [h('a', {freeRamMb: 1000}), h('b', {freeRamMb: 2000, aggregates: agg})]
    // b: -1 x 1 = -1; a: 1 x 0.5
    expect(weigh(['RAMWeigher'], hosts).map((w) => [w.hs.host, w.weight])).toEqual([
      ['a', 0.5],
      ['b', -1],
    ])
    // the aggregate value overrides any config value; a config change still applies to host a
    expect(weigh(['RAMWeigher'], hosts, {cfg: {ram_weight_multiplier: 4}}).map((w) => [w.hs.host, w.weight])).toEqual([
      ['a', 2],
      ['b', -1],
    ])
  })

  it('resolves dotted names and reports unknown ones', () => {
    const r = resolveWeighers(['nova.scheduler.weights.ram.RAMWeigher', 'MetricsWeigher'])
    expect(r.weighers.map((w) => w.name)).toEqual(['RAMWeigher'])
    expect(r.unknown).toEqual(['MetricsWeigher'])
  })
})
