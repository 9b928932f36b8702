/**
 * The engine's defaults per nova release (item 3 of issue 12): what nova 26 (Zed) and nova 31 /
 * placement 13 (2025.1) do by default, read from each release's own conf and scheduler code, and
 * how nova.conf overrides them (an option a release does not register is ignored, as oslo does).
 */
import {describe, expect, it} from 'vitest'

import {simulatedRelease, type SnapshotRelease, databaseRelease, cloudRelease} from '../../src/lib/domain/release.js'
import type {HostNumaCell} from '../../src/lib/domain/nova-objects.js'
import {allWeighers, applyNovaConf, defaultSchedulerConfig, notInRelease, parseWeightSetting, ZED_DEFAULT_FILTERS} from '../../src/lib/engine/config.js'
import {fitInstanceCell, type InstanceCellRequest} from '../../src/lib/engine/numa.js'
import {capCandidates} from '../../src/lib/engine/placement-choose.js'
import {CloudctlError} from '../../src/lib/errors.js'

describe('defaults per release', () => {
  it('same filters; 2025.1 adds three weighers and the placement candidate options', () => {
    const zed = defaultSchedulerConfig('zed')
    const epoxy = defaultSchedulerConfig('2025.1')
    expect(zed.enabled_filters).toEqual([...ZED_DEFAULT_FILTERS])
    expect(epoxy.enabled_filters).toEqual(zed.enabled_filters)
    expect(epoxy.weight_classes.filter((w) => !zed.weight_classes.includes(w))).toEqual([
      'HypervisorVersionWeigher',
      'NumInstancesWeigher',
      'ImagePropertiesWeigher',
    ])
    expect([epoxy.hypervisor_version_weight_multiplier, epoxy.num_instances_weight_multiplier, epoxy.image_props_weight_multiplier]).toEqual([1, 0, 0])
    expect([epoxy.max_allocation_candidates, epoxy.allocation_candidates_generation_strategy]).toEqual([-1, 'depth-first'])
    // the default is still Zed's, for callers that name no release
    expect(defaultSchedulerConfig()).toEqual(zed)
  })

  it('a filter or weigher the release does not have is named, with why', () => {
    const epoxy = defaultSchedulerConfig('2025.1')
    expect(notInRelease(epoxy)).toEqual([])
    expect(
      notInRelease({...epoxy, enabled_filters: [...epoxy.enabled_filters, 'nova.scheduler.filters.availability_zone_filter.AvailabilityZoneFilter']}),
    ).toEqual(['AvailabilityZoneFilter (removed before 2025.1: availability zones are always mapped to placement aggregates)'])
    const zed = defaultSchedulerConfig('zed')
    expect(notInRelease({...zed, enabled_filters: [...zed.enabled_filters, 'AvailabilityZoneFilter']})).toEqual([])
    expect(notInRelease({...zed, weight_classes: ['RAMWeigher', 'HypervisorVersionWeigher']})).toEqual(['HypervisorVersionWeigher (added after Zed)'])
  })
})

describe('nova.conf over the defaults of a release', () => {
  const conf = {
    filter_scheduler: {
      weight_classes: 'nova.scheduler.weights.all_weighers',
      hypervisor_version_weight_multiplier: '-3.5',
      num_instances_weight_multiplier: '2',
      image_props_weight_multiplier: '1',
      image_props_weight_setting: 'os_distro=1, hw_machine_type=-1, bogus, x=abc',
    },
    scheduler: {query_placement_for_availability_zone: 'false'},
    placement: {max_allocation_candidates: '1000', allocation_candidates_generation_strategy: 'breadth-first'},
  }

  it('2025.1 reads its own options; all_weighers is its twelve weighers', () => {
    const c = applyNovaConf(defaultSchedulerConfig('2025.1'), conf)
    expect(c.weight_classes).toHaveLength(12)
    expect([c.hypervisor_version_weight_multiplier, c.num_instances_weight_multiplier, c.image_props_weight_multiplier]).toEqual([-3.5, 2, 1])
    expect(c.image_props_weight_setting).toEqual({os_distro: 1, hw_machine_type: -1})
    expect([c.max_allocation_candidates, c.allocation_candidates_generation_strategy]).toEqual([1000, 'breadth-first'])
    // nova 31 has no such option: the AZ prefilter always runs
    expect(c.query_placement_for_availability_zone).toBe(true)
  })

  it('Zed ignores the options it does not register', () => {
    const c = applyNovaConf(defaultSchedulerConfig('zed'), conf)
    expect(c.weight_classes).toHaveLength(9)
    expect([c.hypervisor_version_weight_multiplier, c.num_instances_weight_multiplier, c.image_props_weight_multiplier]).toEqual([0, 0, 0])
    expect(c.image_props_weight_setting).toEqual({})
    expect([c.max_allocation_candidates, c.allocation_candidates_generation_strategy]).toEqual([-1, 'depth-first'])
    expect(c.query_placement_for_availability_zone).toBe(false)
  })

  it('a generation strategy outside the choices is refused, as oslo.config refuses it', () => {
    expect(() => applyNovaConf(defaultSchedulerConfig('2025.1'), {placement: {allocation_candidates_generation_strategy: 'random'}})).toThrow(CloudctlError)
  })

  it('image_props_weight_setting is read as nova parse_options reads it', () => {
    // the name is not stripped; a pair without '=' or a ratio float() refuses is dropped; the last one wins
    expect(parseWeightSetting(['a=1', 'b =2', 'c', '=3', 'd=', 'e=x', 'a=4'])).toEqual({a: 4, 'b ': 2})
  })
})

describe('placement 13: max_allocation_candidates and the generation strategy', () => {
  // three roots: 1 has three candidates, 2 has one, 3 has two (engine order: root, then provider)
  const all = [
    {anchorRootId: 1, n: 'a'},
    {anchorRootId: 1, n: 'b'},
    {anchorRootId: 1, n: 'c'},
    {anchorRootId: 2, n: 'd'},
    {anchorRootId: 3, n: 'e'},
    {anchorRootId: 3, n: 'f'},
  ]
  const names = (xs: typeof all) => xs.map((x) => x.n).join('')

  it('-1 (default) keeps everything; a cap above the count too', () => {
    expect(names(capCandidates(all, {maxCandidates: -1, strategy: 'depth-first'}))).toBe('abcdef')
    expect(names(capCandidates(all, {maxCandidates: 6, strategy: 'breadth-first'}))).toBe('abcdef')
  })

  it('depth-first fills from the first root; breadth-first takes one per root in turn', () => {
    expect(names(capCandidates(all, {maxCandidates: 3, strategy: 'depth-first'}))).toBe('abc')
    expect(names(capCandidates(all, {maxCandidates: 3, strategy: 'breadth-first'}))).toBe('ade')
    // round two: root 2 is exhausted, so b then f
    expect(names(capCandidates(all, {maxCandidates: 5, strategy: 'breadth-first'}))).toBe('abdef')
    expect(names(capCandidates(all, {maxCandidates: 0, strategy: 'depth-first'}))).toBe('')
  })
})

describe('NUMA: where a pinned cell memory is checked', () => {
  const cell = (over: Partial<HostNumaCell> = {}): HostNumaCell => ({
    id: 0,
    cpuset: [],
    pcpuset: [0, 1, 2, 3],
    memory: 4096,
    cpu_usage: 0,
    memory_usage: 3072,
    pinned_cpus: [],
    siblings: [[0], [1], [2], [3]],
    mempages: [],
    socket: 0,
    version: '1.5',
    ...over,
  })
  const pinned = (memory: number, pagesize: number | null = null): InstanceCellRequest => ({
    id: 0,
    cpuset: [],
    pcpuset: [0, 1],
    memory,
    pagesize,
    cpuPolicy: 'dedicated',
    threadPolicy: null,
  })

  it('no page sizes reported: both refuse more than the free memory', () => {
    expect('reason' in fitInstanceCell(cell(), pinned(2048), null, 0, 'zed')).toBe(true)
    expect('reason' in fitInstanceCell(cell(), pinned(2048), null, 0, '2025.1')).toBe(true)
    expect('reason' in fitInstanceCell(cell(), pinned(1024), null, 0, '2025.1')).toBe(false)
  })

  it('small pages reported: Zed compares with memory - memory_usage, nova 31 with the free small pages', () => {
    // memory_usage says 3 GB used, but the 4 KiB pages say only 1 GB is
    const c = cell({mempages: [{size_kb: 4, total: 1048576, used: 262144, reserved: 0}]})
    expect('reason' in fitInstanceCell(c, pinned(2048), null, 0, 'zed')).toBe(true)
    expect('reason' in fitInstanceCell(c, pinned(2048), null, 0, '2025.1')).toBe(false)
    // and nova 31 refuses what the free small pages cannot hold, where Zed only asked for the total
    const full = cell({memory_usage: 0, mempages: [{size_kb: 4, total: 1048576, used: 786432, reserved: 0}]})
    expect('reason' in fitInstanceCell(full, pinned(2048), null, 0, 'zed')).toBe(false)
    expect('reason' in fitInstanceCell(full, pinned(2048), null, 0, '2025.1')).toBe(true)
  })

  it('a requested page size: nova 31 no longer also asks for free small memory', () => {
    const c = cell({
      mempages: [
        {size_kb: 4, total: 1048576, used: 1048576, reserved: 0},
        {size_kb: 2048, total: 2048, used: 0, reserved: 0},
      ],
    })
    expect('reason' in fitInstanceCell(c, pinned(2048, 2048), null, 0, 'zed')).toBe(true)
    expect('reason' in fitInstanceCell(c, pinned(2048, 2048), null, 0, '2025.1')).toBe(false)
  })
})

describe('which release a snapshot is simulated as', () => {
  const snap = (nova: string, api: string, placement: string): SnapshotRelease =>
    cloudRelease(databaseRelease('nova_api', api), databaseRelease('placement', placement), {c1: databaseRelease('nova', nova)})

  it('detected 2025.1 and Zed; the flag wins; unknown is Zed; in between is Zed, said so', () => {
    expect(simulatedRelease(snap('2903cd72dc14', 'cdeec0c85668', 'a082b8bb98d0')).release).toBe('2025.1')
    expect(simulatedRelease(snap('ccb0fa1a2252', 'b30f573d3377', '422ece571366')).release).toBe('zed')
    expect(simulatedRelease(snap('ccb0fa1a2252', 'b30f573d3377', '422ece571366'), '2025.1')).toEqual({release: '2025.1', note: '--release 2025.1'})
    expect(simulatedRelease(undefined).release).toBe('zed')
    const between = simulatedRelease(snap('13863f4e1612', 'cdeec0c85668', 'a082b8bb98d0'))
    expect(between.release).toBe('zed')
    expect(between.note).toMatch(/2024\.x.*Zed and 2025\.1 and later only/)
  })

  it('2026.1 and 2026.2 by their services; a head several releases share takes the oldest, said so; 2025.2 (unread) takes 2025.1', () => {
    const withSv = (nova: string, sv: number | null): SnapshotRelease =>
      cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), {
        c1: databaseRelease('nova', nova, {serviceVersion: sv}),
      })
    expect(simulatedRelease(withSv('2903cd72dc14', 72))).toEqual({release: '2026.1', note: 'detected 2026.1'})
    expect(simulatedRelease(withSv('ab450ba04102', 74))).toEqual({release: '2026.2', note: 'detected 2026.2'})
    expect(simulatedRelease(withSv('ab450ba04102', null))).toEqual({release: '2026.2', note: 'detected 2026.2 or later'})
    const shared = simulatedRelease(withSv('2903cd72dc14', null))
    expect(shared.release).toBe('2025.1')
    expect(shared.note).toMatch(/^detected 2025\.1-2026\.1; 2025\.1's defaults \(the oldest release it may be/)
    const flamingo = simulatedRelease(withSv('2903cd72dc14', 70))
    expect(flamingo.release).toBe('2025.1')
    expect(flamingo.note).toMatch(/detected 2025\.2; 2025\.1's defaults \(cloudctl has not read nova's 2025\.2 scheduler/)
    expect(simulatedRelease(withSv('2903cd72dc14', 72), '2025.1')).toEqual({release: '2025.1', note: '--release 2025.1'})
  })

  it("2026.1 and 2026.2 keep 2025.1's filters, weighers, multipliers and placement options", () => {
    const {release: _r, ...epoxy} = defaultSchedulerConfig('2025.1')
    for (const r of ['2026.1', '2026.2'] as const) {
      const {release, ...cfg} = defaultSchedulerConfig(r)
      expect(release).toBe(r)
      expect(cfg).toEqual(epoxy)
      expect(allWeighers(r)).toEqual(allWeighers('2025.1'))
      expect(notInRelease({...defaultSchedulerConfig(r), enabled_filters: ['AvailabilityZoneFilter']})).toEqual([
        expect.stringMatching(/^AvailabilityZoneFilter \(removed before 2025\.1/),
      ])
    }
  })
})
