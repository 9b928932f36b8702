/**
 * Capacity under what-if scenarios beside the snapshot's, and the human/HTML renderings of a report,
 * on small hand-built clouds (counts worked out in the comments).
 */
import {describe, expect, it} from 'vitest'

import {capacityFor, type FlavorCapacity} from '../../src/lib/capacity/index.js'
import {capacityWhatIf, type CapacityResult} from '../../src/lib/capacity/what-if.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {defaultSchedulerConfig, ZED_DEFAULT_FILTERS} from '../../src/lib/engine/index.js'
import {renderCapacity, usageBar} from '../../src/lib/output/capacity-formatter.js'
import {cpuRanges} from '../../src/lib/util/cpu-ranges.js'
import {escapeHtml, renderCapacityHtml} from '../../src/lib/output/capacity-html.js'
import {fixedDisplay} from '../../src/lib/output/display.js'
import {Chalk} from 'chalk'
import {cloud, type CloudBuilder} from '../support/builders.js'

function base(): CloudBuilder {
  const b = cloud({seed: 5, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 1024, root_gb: 10})
  b.addFlavor({name: 'm1.large', vcpus: 4, memory_mb: 8192, root_gb: 80})
  return b
}

/** Two AZs: a1 (64 GiB) and a2 (32 GiB) in az1, b1 (64 GiB) in az2; b1 also in aggregate ssd. */
function twoZones(): CloudBuilder {
  const b = base()
  b.addAggregate({name: 'ssd'})
  b.addHost('cell1', {host: 'a1', vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'az1'})
  b.addHost('cell1', {host: 'a2', vcpus: 16, memory_mb: 32768, local_gb: 1000, az: 'az1'})
  b.addHost('cell1', {host: 'b1', vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'az2', aggregates: ['ssd']})
  return b
}

const asResult = (r: ReturnType<typeof capacityWhatIf>, seed = 42): CapacityResult => ({...r.report, seed, scenario: r.scenario})

describe('capacityWhatIf', () => {
  it('no what-if flag: one report, no comparison', () => {
    const r = capacityWhatIf(twoZones().build(), {}, {flavors: ['m1.large']})
    expect(r.scenario).toBeNull()
    // a1: (65536 - 512) x 1.5 / 8192 = 11.9 -> 11; a2: (32768 - 512) x 1.5 / 8192 = 5.9 -> 5; b1: 11
    expect(r.report.flavors[0]?.fits).toBe(27)
  })

  it('--disable-host: the change per flavor is what the host held', () => {
    const r = capacityWhatIf(twoZones().build(), {disableHosts: ['a1']}, {flavors: ['m1.large', 'm1.small']})
    // m1.small on a1: MEMORY (65536 - 512) x 1.5 / 1024 = 95.2 -> 95, DISK 1000 / 10 = 100 -> 95
    expect(r.scenario?.flavors).toEqual([
      {flavor: 'm1.large', before: 27, after: 16, change: -11, naiveBefore: 27, naiveAfter: 27},
      {flavor: 'm1.small', before: 95 + 47 + 95, after: 47 + 95, change: -95, naiveBefore: 237, naiveAfter: 237},
    ])
    expect(r.scenario?.changes).toEqual(['a1: nova-compute disabled (COMPUTE_STATUS_DISABLED on 1 provider(s))'])
  })

  it('--drain: the drained instances move, usage is conserved, the zones show it', () => {
    const b = twoZones()
    b.addInstance('a2', 'm1.large', {display_name: 'x'})
    b.addInstance('a2', 'm1.large', {display_name: 'y'})
    const snap = b.build()
    const before = capacityFor(buildModel(snap), {flavors: ['m1.large']})
    const r = capacityWhatIf(snap, {drainHosts: ['a2']}, {flavors: ['m1.large'], hostUsage: true})
    expect(r.scenario?.drains[0]?.replaced.map((i) => i.name).sort()).toEqual(['x', 'y'])
    const used = (rep: typeof before) => rep.zones.filter((z) => z.kind === 'az').reduce((n, z) => n + (z.resources.MEMORY_MB?.used ?? 0), 0)
    expect(used(r.report)).toBe(used(before))
    // a2 gave back its 16384 MB: only reserved-free capacity shows there.
    expect(r.report.hostUsage?.find((h) => h.host === 'a2')?.resources.MEMORY_MB?.used).toBe(0)
    // Before: a1 11, a2 ((32768 - 512) x 1.5 - 16384) / 8192 = 3.9 -> 3, b1 11; after: a2 off and its
    // two m1.large moved to a1/b1: 11 + 11 - 2
    expect(r.scenario?.flavors[0]).toMatchObject({before: 11 + 3 + 11, after: 20})
  })

  it('--set-allocation-ratio and --add-hosts combine; the host count of the snapshot is kept', () => {
    const r = capacityWhatIf(
      twoZones().build(),
      {addHosts: {count: 1, like: 'b1'}, allocationRatios: [{rc: 'MEMORY_MB', ratio: 1, aggregate: 'ssd'}]},
      {flavors: ['m1.large']},
    )
    // ssd now holds b1 and its copy at ratio 1.0: (65536 - 512) / 8192 = 7.9 -> 7 each; a1 11, a2 5
    expect(r.report.flavors[0]?.fits).toBe(11 + 5 + 7 + 7)
    expect(r.scenario?.hostsBefore).toBe(3)
    expect(r.report.scope.hosts).toBe(4)
  })

  it('--mix is compared too', () => {
    const r = capacityWhatIf(
      twoZones().build(),
      {disableHosts: ['b1']},
      {
        mix: [
          {flavor: 'm1.small', weight: 1},
          {flavor: 'm1.large', weight: 1},
        ],
      },
    )
    expect(r.scenario?.mix?.change).toBe((r.scenario?.mix?.after ?? 0) - (r.scenario?.mix?.before ?? 0))
    expect(r.scenario?.mix?.change).toBeLessThan(0)
  })

  it('a flavor refused by a filter counts zero where the division sees room (AggregateInstanceExtraSpecsFilter)', () => {
    const b = base()
    b.addAggregate({name: 'fast', metadata: {ssd: 'true'}})
    b.addFlavor({name: 'ssd.large', vcpus: 4, memory_mb: 8192, root_gb: 80, extra_specs: {'aggregate_instance_extra_specs:ssd': 'true'}})
    b.addHost('cell1', {host: 'f1', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['fast']})
    b.addHost('cell1', {host: 's1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
    const config = {...defaultSchedulerConfig(), enabled_filters: [...ZED_DEFAULT_FILTERS, 'AggregateInstanceExtraSpecsFilter']}
    const fc = capacityFor(buildModel(b.build()), {flavors: ['ssd.large'], perHost: true, config}).flavors[0] as FlavorCapacity
    expect(fc.hosts?.map((h) => [h.host, h.fits, h.naive])).toEqual([
      ['f1', 11, 11],
      ['s1', 0, 11],
    ])
    expect(fc.overestimate).toBe(11)
    expect(fc.hosts?.[1]?.limit).toMatch(/^AggregateInstanceExtraSpecsFilter: /)
    expect(fc.byAggregate).toEqual([{name: 'fast', hosts: 1, fits: 11, naive: 11}])
  })
})

describe('renderCapacity', () => {
  it('tables per flavor, AZ and aggregate; the what-if columns; bars only when asked', () => {
    const snap = twoZones().build()
    const r = asResult(capacityWhatIf(snap, {disableHosts: ['a1']}, {flavors: ['m1.large'], perHost: true}))
    const plain = renderCapacity(r, fixedDisplay(0))
    expect(plain).toMatch(/│ m1\.large +│ +4 │ +8192 │ +80 │ +16 │ +27 │ +11 │ +27 │ +-11 │/)
    expect(plain).toMatch(/│ m1\.large +│ +5 \(16\) │ +11 \(11\) │/)
    expect(plain).toContain('Per aggregate: fits (naive ÷)')
    expect(plain).toMatch(/│ a1 +│ az1 +│ +│ +0 │ +11 │ placement: disabled \(COMPUTE_STATUS_DISABLED\) │/)
    expect(plain).not.toContain('█')
    const bars = renderCapacity(r, fixedDisplay(0), {bars: true, barWidth: 10})
    expect(bars).toContain('Zones: used █ / free ░, and what fits')
    expect(bars).toMatch(/fits +m1\.large 5\n/)
  })

  it('usageBar: used cells in proportion, free after, nothing to draw without capacity', () => {
    const c = new Chalk({level: 0})
    expect(usageBar(25, 100, 8, c)).toBe('██░░░░░░')
    expect(usageBar(150, 100, 4, c)).toBe('████')
    expect(usageBar(0, 0, 3, c)).toBe('···')
  })

  it('cpuRanges folds runs', () => {
    expect(cpuRanges([12, 4, 5, 6, 7, 13, 15])).toBe('4-7,12-13,15')
    expect(cpuRanges([])).toBe('')
  })
})

describe('renderCapacityHtml', () => {
  it('one capacity chart and one utilisation chart per AZ, escaped names, no external resource', () => {
    const b = twoZones()
    b.addFlavor({name: '<script>alert(1)</script>', vcpus: 1, memory_mb: 512, root_gb: 1})
    const r = asResult(capacityWhatIf(b.build(), {}, {hostUsage: true}))
    const html = renderCapacityHtml(r)
    expect(html.match(/<section class="az" data-az="(az\d)"/g)).toEqual(['<section class="az" data-az="az1"', '<section class="az" data-az="az2"'])
    expect(html.match(/<svg class="chart chart-flavors"/g)).toHaveLength(2)
    expect(html.match(/<svg class="chart chart-hosts"/g)).toHaveLength(2)
    expect(html).not.toContain('<script>')
    expect(html).toContain(escapeHtml('<script>alert(1)</script>'))
    expect(html.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/https?:|src=|href=/)
    // az1's fits bar for m1.large: a1 11 + a2 5, carried in data-value.
    expect(html).toMatch(/class="bar fits" data-flavor="m1.large" data-value="16"/)
  })

  it('a zone with many hosts gets a utilisation histogram instead of a row per host', () => {
    const b = base()
    for (let i = 0; i < 130; i++) b.addHost('cell1', {host: `h${i}`, vcpus: 16, memory_mb: 65536, local_gb: 1000, az: 'big'})
    for (let i = 0; i < 40; i++) b.addInstance(`h${i}`, 'm1.large')
    const r = asResult(capacityWhatIf(b.build(), {}, {flavors: ['m1.small'], hostUsage: true}))
    const html = renderCapacityHtml(r)
    expect(html).toContain('<svg class="chart chart-hosts histogram"')
    // MEMORY_MB: 8192 of 97536 = 8.4 % on 40 hosts (bucket 0-10 %), 0 % on 90.
    expect(html).toMatch(/data-rc="MEMORY_MB" data-bucket="0" data-value="130"/)
    expect(html).not.toContain('data-host="h0"')
  })
})
