/**
 * The blast-radius limit (src/lib/repairs/blast-radius.ts) on real plans of builder clouds: what is
 * counted, the default (10 %, at least 100 rows, per kind), --max-delete, and the wording.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {blastRadius, defaultLimit, describeOverLimit, overLimit} from '../../src/lib/repairs/blast-radius.js'
import {planDiscoverHosts} from '../../src/lib/repairs/discover-hosts.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {CloudBuilder} from '../support/builders.js'
import {leakySnapshot} from './leaky-cloud.js'

const leaky = (live: number, leaked: number) => buildModel(leakySnapshot(live, leaked, {seed: 2514, hosts: 4}))

describe('blast radius', () => {
  it('the default limit is 10 % of the rows of a kind, rounded up, and never below 100', () => {
    expect([0, 50, 1000, 1001, 1050, 300_000].map(defaultLimit)).toEqual([100, 100, 100, 101, 105, 30_000])
  })

  it('counts the allocation rows a leaks plan deletes, against the allocations the cloud has', () => {
    const model = leaky(10, 40)
    expect(model.snapshot.placement.allocations.length).toBe(150)
    const plan = planLeaks(model)
    const [c] = blastRadius(model, plan)
    expect(c).toEqual({what: 'allocations', verb: 'deletes', planned: 120, total: 150, limit: 100, explicit: false})
    expect(overLimit(model, plan).map(describeOverLimit)).toEqual([
      'the plan deletes 120 of 150 allocations (80 %); the limit is 100 (10 % of 150, at least 100)',
    ])
  })

  it('--max-delete replaces the default for every kind, upwards or downwards', () => {
    const model = leaky(10, 40)
    const plan = planLeaks(model)
    expect(overLimit(model, plan, 120)).toEqual([])
    expect(overLimit(model, plan, 119).map(describeOverLimit)).toEqual(['the plan deletes 120 of 150 allocations (80 %); the limit is 119 (--max-delete)'])
    // Within the default, a lower explicit limit still refuses.
    const small = leaky(10, 5)
    expect(overLimit(small, planLeaks(small))).toEqual([])
    expect(overLimit(small, planLeaks(small), 0).map(describeOverLimit)).toEqual([
      'the plan deletes 15 of 45 allocations (33 %); the limit is 0 (--max-delete)',
    ])
  })

  it('a batch (--max-count) within the limit passes', () => {
    const model = leaky(10, 40)
    expect(overLimit(model, planLeaks(model, {maxCount: 30}))).toEqual([])
  })

  it('host mappings deleted or remapped count as one kind', () => {
    const b = new CloudBuilder({seed: 2515, requestSpecs: false})
    b.addCell('cell1')
    b.addCell('cell2')
    for (let h = 0; h < 150; h++) b.addHost('cell1', {host: `h${h}`, vcpus: 8, memory_mb: 8192, local_gb: 100})
    const s = b.build()
    // Every host mapped to cell2: discover-hosts remaps 150 of 150.
    const cell2 = s.cells.find((c) => c.name === 'cell2')!
    for (const hm of s.nova_api.host_mappings) hm.cell_id = cell2.id
    const model = buildModel(s)
    const plan = planDiscoverHosts(model)
    expect(overLimit(model, plan).map(describeOverLimit)).toEqual([
      'the plan deletes or remaps 150 of 150 host mappings (100 %); the limit is 100 (10 % of 150, at least 100)',
    ])
    expect(overLimit(model, planDiscoverHosts(model, {maxCount: 100}))).toEqual([])
  })

  it('creating rows is not counted: discover-hosts mapping 150 new hosts is within the limit', () => {
    const b = new CloudBuilder({seed: 2516, requestSpecs: false})
    b.addCell('cell1')
    for (let h = 0; h < 150; h++) b.addHost('cell1', {host: `h${h}`, vcpus: 8, memory_mb: 8192, local_gb: 100})
    const s = b.build()
    s.nova_api.host_mappings = []
    const model = buildModel(s)
    const plan = planDiscoverHosts(model)
    expect(plan.steps.filter((x) => x.table === 'host_mappings' && x.op === 'insert')).toHaveLength(150)
    expect(blastRadius(model, plan)).toEqual([])
  })
})
