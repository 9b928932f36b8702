/**
 * GET /allocation_candidates over small hand-built provider trees: the capacity rule with FLOAT
 * ratios, unit constraints and reserved amounts, nested providers, sharing providers, granular
 * groups, member_of, in_tree, traits, and the limit applied after ordering. Expectations follow
 * placement 8 (Zed): placement/objects/research_context.py and allocation_candidate.py.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import type {Inventory, Snapshot} from '../../src/lib/domain/snapshot.js'
import {createEngineState} from '../../src/lib/engine/pipeline.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {CloudBuilder, CONSUMER_TYPE_INSTANCE} from '../support/builders.js'

function group(
  suffix: string,
  resources: Record<string, number>,
  o: {required?: string[]; forbidden?: string[]; memberOf?: string[][]; forbiddenAggs?: string[]; inTree?: string} = {},
): PlacementGroup {
  const g = emptyGroup(suffix)
  for (const [rc, n] of Object.entries(resources)) g.resources.set(rc, n)
  for (const t of o.required ?? []) g.required.add(t)
  for (const t of o.forbidden ?? []) g.forbidden.add(t)
  g.memberOf = o.memberOf ?? []
  for (const a of o.forbiddenAggs ?? []) g.forbiddenAggregates.add(a)
  g.inTree = o.inTree ?? null
  return g
}

function request(groups: PlacementGroup[], extra: Partial<PlacementRequest> = {}): PlacementRequest {
  return {groups, groupPolicy: null, limit: 1000, rootRequired: new Set(), rootForbidden: new Set(['COMPUTE_STATUS_DISABLED']), ...extra}
}

function candidates(s: Snapshot, req: PlacementRequest) {
  const m = buildModel(s)
  const idx = providerIndex(m)
  const r = allocationCandidates(idx, req, createEngineState().usageView(idx))
  const name = (id: number) => idx.providers.get(id)?.name ?? String(id)
  return {
    r,
    /** each candidate as "anchor: rp.RC=amount ..." sorted within the candidate */
    text: r.all.map(
      (a) =>
        `${name(a.anchorRootId)}: ${a.parts
          .map((p) => `${name(p.rpId)}.${p.rc}=${p.amount}`)
          .sort()
          .join(' ')}`,
    ),
    anchors: r.all.map((a) => name(a.anchorRootId)),
  }
}

/** Placement only takes UUIDs in in_tree / member_of: provider uuids made from their names. */
const rpUuid = (name: string) => `00000000-0000-4000-8000-${Buffer.from(name).toString('hex').padStart(12, '0').slice(-12)}`
const [X, Y] = ['a99a0000-0000-4000-8000-000000000001', 'a99a0000-0000-4000-8000-000000000002']

type InventorySpec = Partial<Omit<Inventory, 'id' | 'resource_provider_id' | 'resource_class_id'>> & {total: number}
interface ProviderSpec {
  name: string
  /** parent provider's name (nested tree) */
  parent?: string
  /** resource class -> total, or the inventory's fields */
  inv?: Record<string, number | InventorySpec>
  traits?: string[]
  /** of the aggregates x (uuid X) and y (uuid Y) */
  aggregates?: Array<'x' | 'y'>
}

/** Provider trees with no compute node behind them; CUSTOM_GOLD is a known trait. */
function providers(specs: ProviderSpec[], edit: (b: CloudBuilder) => void = () => {}): Snapshot {
  const b = new CloudBuilder()
  b.traitId('CUSTOM_GOLD')
  b.addAggregate({name: 'x', uuid: X})
  b.addAggregate({name: 'y', uuid: Y})
  for (const p of specs) {
    const inventories = Object.fromEntries(Object.entries(p.inv ?? {}).map(([rc, v]) => [rc, typeof v === 'number' ? {total: v} : v]))
    const spec = {name: p.name, uuid: rpUuid(p.name), inventories, traits: p.traits}
    if (p.parent) b.addChildProvider(p.parent, spec)
    else b.addRootProvider(spec)
    for (const a of p.aggregates ?? []) b.linkProviderToAggregate(p.name, a)
  }
  edit(b)
  return b.build()
}

/** A consumer already holding `used` of a class on a provider. */
function allocate(b: CloudBuilder, provider: string, rc: string, used: number): void {
  b.putAllocations(b.newUuid(), b.defaultProject, b.defaultUser, CONSUMER_TYPE_INSTANCE, [{rp: b.provider(provider), rc: b.rcId(rc), used}])
}

describe('capacity rule at the candidate level', () => {
  it.each([
    // total, reserved, ratio, used, amount, candidate?
    [10, 0, 0.9, 0, 9, false], // 10 x float32(0.9) = 8.99999976 < 9: exact fit excluded
    [10, 0, 0.9, 0, 8, true],
    [10, 0, 0.9, 1, 8, false],
    [20, 0, 0.9, 0, 18, false], // 17.9999995 < 18
    [100, 0, 1.1, 0, 110, true], // float32(1.1) = 1.10000002384: 110.0000024 >= 110
    [100, 0, 0.7, 0, 70, false], // float32(0.7) = 0.69999998808
    [10, 3, 1.0, 0, 7, true], // reserved comes off before the ratio
    [10, 3, 1.0, 0, 8, false],
    [10, 3, 2.0, 6, 8, true], // (10 - 3) x 2 = 14 >= 6 + 8
    [10, 3, 2.0, 7, 8, false],
  ] as const)('total %i reserved %i ratio %f used %i: %i -> %s', (total, reserved, ratio, used, amount, ok) => {
    // max_unit 1000: only the capacity rule is under test here
    const s = providers(
      [{name: 'h', inv: {VCPU: {total, reserved, allocation_ratio: ratio, max_unit: 1000}}}],
      (b) => used > 0 && allocate(b, 'h', 'VCPU', used),
    )
    const {r} = candidates(s, request([group('', {VCPU: amount})]))
    expect(r.all.length).toBe(ok ? 1 : 0)
    if (!ok) expect(r.diagnostics.rejectedRoots.get(1)?.label).toBe('insufficient VCPU')
  })

  it.each([
    // min_unit, max_unit, step_size, amount, ok
    [1, 16, 1, 16, true],
    [1, 8, 1, 9, false], // above max_unit even though capacity is there
    [4, 16, 1, 2, false], // below min_unit
    [4, 16, 4, 8, true],
    [1, 16, 4, 6, false], // not a multiple of step_size
    [2, 16, 2, 2, true],
  ] as const)('min_unit %i max_unit %i step_size %i, amount %i -> %s', (min_unit, max_unit, step_size, amount, ok) => {
    const s = providers([{name: 'h', inv: {DISK_GB: {total: 100, min_unit, max_unit, step_size}}}])
    expect(candidates(s, request([group('', {DISK_GB: amount})])).r.all.length).toBe(ok ? 1 : 0)
  })

  it('counts usage claimed earlier in the simulation (engine state), like the snapshot usage', () => {
    const s = providers([
      {name: 'a', inv: {VCPU: 4}},
      {name: 'b', inv: {VCPU: 4}},
    ])
    const m = buildModel(s)
    const idx = providerIndex(m)
    const state = createEngineState()
    state.addUsage(1, 0, 2) // VCPU on a
    const req = request([group('', {VCPU: 3})])
    const fast = allocationCandidates(idx, req, state.usageView(idx))
    // a plain view (no fast-path hints) must give the same answer
    const plain = allocationCandidates(idx, req, {used: (rp, rc) => state.usageView(idx).used(rp, rc)})
    expect(fast.all.map((a) => a.anchorRootId)).toEqual([2])
    expect(plain.all.map((a) => a.anchorRootId)).toEqual([2])
    expect(fast.diagnostics.rejectedRoots.get(1)).toMatchObject({label: 'insufficient VCPU', need: 3, have: 2})
  })
})

describe('nested providers (unsuffixed group spreads over the tree)', () => {
  // root: MEMORY_MB; two NUMA children with 4 VCPU each, child 1 carries CUSTOM_GOLD
  function tree(edit?: (b: CloudBuilder) => void): Snapshot {
    return providers(
      [
        {name: 'root', inv: {MEMORY_MB: 8192}},
        {name: 'numa0', parent: 'root', inv: {VCPU: 4}, traits: ['CUSTOM_GOLD']},
        {name: 'numa1', parent: 'root', inv: {VCPU: 4}},
        {name: 'other', inv: {MEMORY_MB: 1024, VCPU: 2}},
      ],
      edit,
    )
  }

  it('one candidate per way to serve each class from some provider of the tree', () => {
    expect(candidates(tree(), request([group('', {VCPU: 2, MEMORY_MB: 512})])).text).toEqual([
      'root: numa0.VCPU=2 root.MEMORY_MB=512',
      'root: numa1.VCPU=2 root.MEMORY_MB=512',
      'other: other.MEMORY_MB=512 other.VCPU=2',
    ])
  })

  it('one class is never split over two providers', () => {
    expect(candidates(tree(), request([group('', {VCPU: 6, MEMORY_MB: 512})])).r.all).toEqual([])
  })

  it('required / forbidden traits of the unsuffixed group apply to the providers of the allocation', () => {
    expect(candidates(tree(), request([group('', {VCPU: 2, MEMORY_MB: 512}, {required: ['CUSTOM_GOLD']})])).text).toEqual([
      'root: numa0.VCPU=2 root.MEMORY_MB=512',
    ])
    expect(candidates(tree(), request([group('', {VCPU: 2, MEMORY_MB: 512}, {forbidden: ['CUSTOM_GOLD']})])).text).toEqual([
      'root: numa1.VCPU=2 root.MEMORY_MB=512',
      'other: other.MEMORY_MB=512 other.VCPU=2',
    ])
  })

  it('in_tree restricts to one tree', () => {
    expect(candidates(tree(), request([group('', {VCPU: 1, MEMORY_MB: 512}, {inTree: rpUuid('numa1')})])).anchors).toEqual(['root', 'root'])
    expect(candidates(tree(), request([group('', {VCPU: 1, MEMORY_MB: 512}, {inTree: rpUuid('other')})])).anchors).toEqual(['other'])
    expect(candidates(tree(), request([group('', {VCPU: 1}, {inTree: rpUuid('nope')})])).r.diagnostics.stoppedAt).toMatch(
      `in_tree provider ${rpUuid('nope')} does not exist`,
    )
  })

  it('granular groups: each group from a single provider; isolate needs distinct providers', () => {
    const g = () => [group('', {MEMORY_MB: 512}), group('1', {VCPU: 2}), group('2', {VCPU: 2})]
    // none: (numa0, numa0) needs 4 of numa0's 4: ok; every pair of children works -> 4 for root; other has 2 VCPU: (other, other) = 4 > 2
    expect(candidates(tree(), request(g(), {groupPolicy: 'none'})).text).toEqual([
      'root: numa0.VCPU=4 root.MEMORY_MB=512',
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
      'root: numa1.VCPU=4 root.MEMORY_MB=512',
    ])
    expect(candidates(tree(), request(g(), {groupPolicy: 'isolate'})).text).toEqual([
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
    ])
  })

  it('a granular group with a required trait only takes providers that have it', () => {
    expect(candidates(tree(), request([group('', {MEMORY_MB: 512}), group('1', {VCPU: 1}, {required: ['CUSTOM_GOLD']})])).text).toEqual([
      'root: numa0.VCPU=1 root.MEMORY_MB=512',
    ])
  })

  it('groups combined beyond a provider capacity are dropped (provider summary check)', () => {
    const s = tree((b) => allocate(b, 'numa0', 'VCPU', 1))
    // numa0 has 3 free: (numa0, numa0) = 4 > 3 is dropped, the rest stays
    expect(candidates(s, request([group('', {MEMORY_MB: 512}), group('1', {VCPU: 2}), group('2', {VCPU: 2})], {groupPolicy: 'none'})).text).toEqual([
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
      'root: numa0.VCPU=2 numa1.VCPU=2 root.MEMORY_MB=512',
      'root: numa1.VCPU=4 root.MEMORY_MB=512',
    ])
  })
})

describe('sharing providers (MISC_SHARES_VIA_AGGREGATE)', () => {
  function cloud(nfsShares = true): Snapshot {
    return providers([
      {name: 'c1', inv: {VCPU: 8, DISK_GB: 50}, aggregates: ['x']},
      {name: 'c2', inv: {VCPU: 8}, aggregates: ['x']},
      {name: 'c3', inv: {VCPU: 8}, aggregates: ['y']},
      {name: 'nfs', inv: {DISK_GB: 1000}, traits: nfsShares ? ['MISC_SHARES_VIA_AGGREGATE'] : [], aggregates: ['x']},
    ])
  }

  it('serves the hosts of its aggregate; a host with local disk gets both options', () => {
    expect(candidates(cloud(), request([group('', {VCPU: 1, DISK_GB: 20})])).text).toEqual([
      'c1: c1.DISK_GB=20 c1.VCPU=1',
      'c1: c1.VCPU=1 nfs.DISK_GB=20',
      'c2: c2.VCPU=1 nfs.DISK_GB=20',
    ])
  })

  it('local disk too small: only the share', () => {
    expect(candidates(cloud(), request([group('', {VCPU: 1, DISK_GB: 60})])).text).toEqual(['c1: c1.VCPU=1 nfs.DISK_GB=60', 'c2: c2.VCPU=1 nfs.DISK_GB=60'])
  })

  it('a provider that does not carry the trait shares nothing', () => {
    expect(candidates(cloud(false), request([group('', {VCPU: 1, DISK_GB: 20})])).text).toEqual(['c1: c1.DISK_GB=20 c1.VCPU=1'])
  })
})

describe('member_of, forbidden aggregates, root traits', () => {
  function cloud(): Snapshot {
    return providers([
      {name: 'a', inv: {VCPU: 4}, aggregates: ['x']},
      {name: 'b', inv: {VCPU: 4}, aggregates: ['y']},
      {name: 'c', inv: {VCPU: 4}, aggregates: ['x', 'y'], traits: ['HW_CPU_X86_AVX2']},
      {name: 'd', inv: {VCPU: 4}, traits: ['COMPUTE_STATUS_DISABLED']},
    ])
  }

  it.each([
    ['member_of=in:x,y (any of)', {memberOf: [[X, Y]]}, ['a', 'b', 'c']],
    ['member_of=in:x & member_of=in:y (all of)', {memberOf: [[X], [Y]]}, ['c']],
    ['member_of=!in:y', {forbiddenAggs: [Y]}, ['a']],
    ['no aggregate constraint (d is disabled)', {}, ['a', 'b', 'c']],
  ] as const)('%s', (_name, o, anchors) => {
    const g = group(
      '',
      {VCPU: 1},
      {memberOf: 'memberOf' in o ? o.memberOf.map((l) => [...l]) : [], forbiddenAggs: 'forbiddenAggs' in o ? [...o.forbiddenAggs] : []},
    )
    expect(candidates(cloud(), request([g])).anchors).toEqual(anchors)
  })

  it('root_required selects the anchor roots; an unknown trait is an error (NoValidHost)', () => {
    expect(candidates(cloud(), request([group('', {VCPU: 1})], {rootRequired: new Set(['HW_CPU_X86_AVX2'])})).anchors).toEqual(['c'])
    const r = candidates(cloud(), request([group('', {VCPU: 1})], {rootRequired: new Set(['CUSTOM_NOPE'])})).r
    expect(r.all).toEqual([])
    expect(r.diagnostics.stoppedAt).toMatch('No such trait(s): CUSTOM_NOPE.')
  })

  it('an unknown resource class is an error', () => {
    expect(candidates(cloud(), request([group('', {CUSTOM_NOPE: 1})])).r.diagnostics.stoppedAt).toMatch('No such resource class CUSTOM_NOPE.')
  })
})

describe('limit (max_placement_results) is applied after ordering, and trims the provider summaries', () => {
  it('keeps the first N candidates in anchor order, summaries of their trees only', () => {
    // nested root 1 (two children: two candidates), then flat 4, 5
    const s = providers([
      {name: 'r1', inv: {MEMORY_MB: 4096}},
      {name: 'r1-n0', parent: 'r1', inv: {VCPU: 4}},
      {name: 'r1-n1', parent: 'r1', inv: {VCPU: 4}},
      {name: 'f4', inv: {MEMORY_MB: 4096, VCPU: 4}},
      {name: 'f5', inv: {MEMORY_MB: 4096, VCPU: 4}},
    ])
    const all = candidates(s, request([group('', {VCPU: 1, MEMORY_MB: 512})], {limit: null}))
    expect(all.anchors).toEqual(['r1', 'r1', 'f4', 'f5'])
    const lim = candidates(s, request([group('', {VCPU: 1, MEMORY_MB: 512})], {limit: 3}))
    expect(lim.r.all).toHaveLength(4)
    expect(lim.r.kept.map((a) => a.anchorRootId)).toEqual([1, 1, 4])
    expect([...lim.r.summaryProviderIds].sort()).toEqual([1, 2, 3, 4])
  })
})

describe('duplicate requests through sharing providers (placement keeps a set that ignores the anchor)', () => {
  // cn1 with local disk + ss1, ss2 sharing DISK_GB with it: placement's "disk alone" case
  function cloud(): Snapshot {
    return providers([
      {name: 'cn1', inv: {VCPU: 8, DISK_GB: 50}, aggregates: ['x']},
      {name: 'ss1', inv: {DISK_GB: 1000}, traits: ['MISC_SHARES_VIA_AGGREGATE'], aggregates: ['x']},
      {name: 'ss2', inv: {DISK_GB: 1000}, traits: ['MISC_SHARES_VIA_AGGREGATE'], aggregates: ['x']},
    ])
  }
  const parts = (r: ReturnType<typeof candidates>) => r.text.map((t) => t.replace(/^[^:]*: /, ''))

  it.each([
    ['disk alone: each sharing provider once, cn1 once', {DISK_GB: 10}, null, ['cn1.DISK_GB=10', 'ss1.DISK_GB=10', 'ss2.DISK_GB=10']],
    ['disk too big for cn1: the two shares, once each', {DISK_GB: 100}, null, ['ss1.DISK_GB=100', 'ss2.DISK_GB=100']],
    ['limit=2 is not wasted on copies', {DISK_GB: 100}, 2, ['ss1.DISK_GB=100', 'ss2.DISK_GB=100']],
    ['VCPU pins the request to cn1: nothing to merge', {VCPU: 1, DISK_GB: 100}, null, ['cn1.VCPU=1 ss1.DISK_GB=100', 'cn1.VCPU=1 ss2.DISK_GB=100']],
  ] as const)('%s', (_name, resources, limit, want) => {
    const r = candidates(cloud(), request([group('', {...resources})], {limit, rootForbidden: new Set()}))
    expect(parts(r).sort()).toEqual(want)
    expect(r.r.kept.length).toBe(limit ?? want.length)
  })
})

describe("placement's 400s (nova: NoValidHost)", () => {
  function cloud(): Snapshot {
    return providers([{name: 'a', inv: {VCPU: 4, SRIOV_NET_VF: 4}, aggregates: ['x']}])
  }

  it.each([
    ['unknown forbidden trait', [group('', {VCPU: 1}, {forbidden: ['CUSTOM_NOT_A_TRAIT']})], {}, 'No such trait(s): CUSTOM_NOT_A_TRAIT.'],
    ['unknown required trait', [group('', {VCPU: 1}, {required: ['CUSTOM_NOT_A_TRAIT']})], {}, 'No such trait(s): CUSTOM_NOT_A_TRAIT.'],
    ['unknown root_required forbidden trait', [group('', {VCPU: 1})], {rootForbidden: new Set(['CUSTOM_X'])}, 'No such trait(s): CUSTOM_X.'],
    ['unknown resource class', [group('', {CUSTOM_NOPE: 1})], {}, 'Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE.'],
    [
      'two granular groups without group_policy',
      [group('', {VCPU: 1}), group('1', {SRIOV_NET_VF: 1}), group('2', {SRIOV_NET_VF: 1})],
      {},
      'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.',
    ],
    ['limit=0', [group('', {VCPU: 1})], {limit: 0}, "Invalid query string parameters: '0' does not match '^[1-9][0-9]*$'"],
    ['a bad group_policy', [group('', {VCPU: 1})], {groupPolicy: 'some'}, "Invalid query string parameters: 'some' is not one of ['none', 'isolate']"],
    [
      'T and !T in one group',
      [group('', {VCPU: 1}, {required: ['CUSTOM_GOLD'], forbidden: ['CUSTOM_GOLD']})],
      {},
      'Conflicting required and forbidden traits found in the following traits keys: required: (CUSTOM_GOLD)',
    ],
    [
      'T and !T in root_required',
      [group('', {VCPU: 1})],
      {rootRequired: new Set(['CUSTOM_GOLD']), rootForbidden: new Set(['CUSTOM_GOLD'])},
      'Conflicting required and forbidden traits found in root_required: CUSTOM_GOLD',
    ],
    ['amount 0', [group('', {VCPU: 0, MEMORY_MB: 1})], {}, 'Requested resource VCPU requires amount >= 1. Got: 0.'],
    [
      'a resourceless granular group (trait1 without resources1)',
      [group('', {VCPU: 1}), group('1', {}, {required: ['CUSTOM_GOLD']})],
      {},
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.',
    ],
    [
      'member_of that is not a UUID',
      [group('', {VCPU: 1}, {memberOf: [['aggregate-id-7']]})],
      {},
      "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: aggregate-id-7",
    ],
    [
      'in_tree that is not a UUID',
      [group('', {VCPU: 1}, {inTree: 'compute-1'})],
      {},
      "Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: compute-1",
    ],
  ] as const)('%s', (_name, groups, extra, message) => {
    const r = candidates(cloud(), request([...groups], {rootForbidden: new Set(), ...(extra as Partial<PlacementRequest>)}))
    expect(r.r.all).toEqual([])
    expect(r.r.diagnostics.stoppedAt).toBe(`placement answers 400 "${message}" (nova: NoValidHost)`)
  })

  it('a valid query with member_of, in_tree and traits is not refused', () => {
    const s = cloud()
    const rp = s.placement.resource_providers[s.placement.resource_providers.length - 1]?.uuid as string
    const aggUuid = s.placement.placement_aggregates[0]?.uuid as string
    const r = candidates(
      s,
      request([group('', {VCPU: 1}, {memberOf: [[aggUuid]], inTree: rp, forbidden: ['CUSTOM_GOLD']})], {rootForbidden: new Set(['COMPUTE_STATUS_DISABLED'])}),
    )
    expect(r.anchors).toEqual(['a'])
  })
})
