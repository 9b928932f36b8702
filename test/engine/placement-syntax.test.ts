/**
 * The GET /allocation_candidates syntax of microversions 1.36 to 1.39 over small provider trees:
 * `in:` any-of traits (1.39), same_subtree and resourceless request groups (1.36), their 400s and
 * how nova renders them. Expectations follow placement 8 (Zed): lib.py (RequestGroup,
 * RequestWideParams), util.normalize_traits_qs_param and allocation_candidate._check_same_subtree.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {createEngineState} from '../../src/lib/engine/pipeline.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {toQueryString} from '../../src/lib/engine/placement-query.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {CloudBuilder} from '../support/builders.js'

interface GroupSpec {
  required?: string[]
  anyOf?: string[][]
  forbidden?: string[]
}

function group(suffix: string, resources: Record<string, number>, o: GroupSpec = {}): PlacementGroup {
  const g = emptyGroup(suffix)
  for (const [rc, n] of Object.entries(resources)) g.resources.set(rc, n)
  for (const t of o.required ?? []) g.required.add(t)
  for (const t of o.forbidden ?? []) g.forbidden.add(t)
  if (o.anyOf) g.requiredAnyOf = o.anyOf
  return g
}

function request(groups: PlacementGroup[], extra: Partial<PlacementRequest> = {}): PlacementRequest {
  return {
    groups,
    groupPolicy: groups.filter((g) => g.suffix !== '').length > 1 ? 'none' : null,
    limit: null,
    rootRequired: new Set(),
    rootForbidden: new Set(),
    ...extra,
  }
}

/** The query as a replayed client sends it: a resourceless group sends no resources$S. */
function asSent(req: PlacementRequest): PlacementRequest {
  const q = new URLSearchParams(toQueryString(req))
  return {...req, query: [...q].filter(([k, v]) => !(k.startsWith('resources') && v === ''))}
}

const TRAITS = ['CUSTOM_A', 'CUSTOM_B', 'CUSTOM_C', 'CUSTOM_NIC_ROOT', 'CUSTOM_PHYSNET1', 'CUSTOM_PHYSNET2']

interface ProviderSpec {
  name: string
  parent?: string
  inv?: Record<string, number>
  traits?: string[]
}

function providers(specs: ProviderSpec[]): Snapshot {
  const b = new CloudBuilder()
  for (const t of TRAITS) b.traitId(t)
  for (const p of specs) {
    const spec = {name: p.name, inventories: Object.fromEntries(Object.entries(p.inv ?? {}).map(([rc, total]) => [rc, {total}])), traits: p.traits}
    if (p.parent) b.addChildProvider(p.parent, spec)
    else b.addRootProvider(spec)
  }
  return b.build()
}

function candidates(s: Snapshot, req: PlacementRequest) {
  const idx = providerIndex(buildModel(s))
  const r = allocationCandidates(idx, req, createEngineState().usageView(idx))
  const name = (id: number) => idx.providers.get(id)?.name ?? String(id)
  return {
    r,
    /** each candidate as "rp.RC=amount ..." sorted, then its mappings "suffix=rp+rp" */
    text: r.all.map((a) =>
      [
        a.parts
          .map((p) => `${name(p.rpId)}.${p.rc}=${p.amount}`)
          .sort()
          .join(' '),
        [...a.mappings]
          .map(([s, ids]) => `${s || "''"}=${[...ids].map(name).sort().join('+')}`)
          .sort()
          .join(' '),
      ].join(' | '),
    ),
    stopped: r.diagnostics.stoppedAt,
  }
}

const refused = (message: string) => `placement answers 400 "${message}" (nova: NoValidHost)`

describe('in: any-of traits (microversion 1.39)', () => {
  // three flat hosts: a carries CUSTOM_A and CUSTOM_C, b carries CUSTOM_B, n carries neither
  const flat = () =>
    providers([
      {name: 'a', inv: {VCPU: 4}, traits: ['CUSTOM_A', 'CUSTOM_C']},
      {name: 'b', inv: {VCPU: 4}, traits: ['CUSTOM_B']},
      {name: 'n', inv: {VCPU: 4}},
    ])

  it.each([
    ['in:A,B', {anyOf: [['CUSTOM_A', 'CUSTOM_B']]}, ['a', 'b']],
    ['in:A,B and C', {anyOf: [['CUSTOM_A', 'CUSTOM_B']], required: ['CUSTOM_C']}, ['a']],
    ['in:A,B and !A', {anyOf: [['CUSTOM_A', 'CUSTOM_B']], forbidden: ['CUSTOM_A']}, ['b']],
    [
      'in:A,B and in:B,C (every list must match)',
      {
        anyOf: [
          ['CUSTOM_A', 'CUSTOM_B'],
          ['CUSTOM_B', 'CUSTOM_C'],
        ],
      },
      ['a', 'b'],
    ],
    ['in:A,C and in:B (both lists)', {anyOf: [['CUSTOM_A', 'CUSTOM_C'], ['CUSTOM_B']]}, []],
  ] as const)('%s, unsuffixed and granular', (_name, spec, hosts) => {
    for (const suffix of ['', '_G']) {
      const g = [
        group(
          suffix,
          {VCPU: 1},
          {
            anyOf: spec.anyOf.map((l) => [...l]),
            required: [...('required' in spec ? spec.required : [])],
            forbidden: [...('forbidden' in spec ? spec.forbidden : [])],
          },
        ),
      ]
      const r = candidates(flat(), request(g, {microversion: '1.39'}))
      expect(r.r.all.map((a) => a.parts[0]?.rpId).map((id) => (id === undefined ? '' : ['a', 'b', 'n'][id - 1]))).toEqual(hosts)
    }
  })

  it('on a group spread over a tree, the providers of the allocation carry the traits together', () => {
    // root has MEMORY_MB and CUSTOM_A; numa0 has VCPU and CUSTOM_B; numa1 has VCPU only
    const s = providers([
      {name: 'root', inv: {MEMORY_MB: 1024}, traits: ['CUSTOM_A']},
      {name: 'numa0', parent: 'root', inv: {VCPU: 2}, traits: ['CUSTOM_B']},
      {name: 'numa1', parent: 'root', inv: {VCPU: 2}},
    ])
    const run = (anyOf: string[][]) => candidates(s, request([group('', {VCPU: 1, MEMORY_MB: 512}, {anyOf})], {microversion: '1.39'})).text
    expect(run([['CUSTOM_A', 'CUSTOM_C']])).toEqual(["numa0.VCPU=1 root.MEMORY_MB=512 | ''=numa0+root", "numa1.VCPU=1 root.MEMORY_MB=512 | ''=numa1+root"])
    expect(run([['CUSTOM_B', 'CUSTOM_C']])).toEqual(["numa0.VCPU=1 root.MEMORY_MB=512 | ''=numa0+root"])
    // a trait of a provider outside the allocation does not count
    expect(run([['CUSTOM_B'], ['CUSTOM_C']])).toEqual([])
  })

  it('nova renders each list as its own required$S=in:, sorted with the rest', () => {
    const g = group('_G', {VCPU: 1}, {required: ['CUSTOM_C'], forbidden: ['CUSTOM_B'], anyOf: [['CUSTOM_B', 'CUSTOM_A']]})
    expect(toQueryString(request([group('', {MEMORY_MB: 1}), g], {sameSubtree: [['_G']]}))).toBe(
      'required_G=CUSTOM_C,!CUSTOM_B&required_G=in:CUSTOM_A,CUSTOM_B&resources=MEMORY_MB:1&resources_G=VCPU:1&same_subtree=_G',
    )
  })
})

describe('same_subtree and resourceless request groups (microversion 1.36)', () => {
  // cn -> nic1 (CUSTOM_NIC_ROOT) -> pf1 (PHYSNET1), pf2 (PHYSNET2); cn -> nic2 (CUSTOM_NIC_ROOT) -> pf3 (PHYSNET2)
  const tree = () =>
    providers([
      {name: 'cn', inv: {VCPU: 4}},
      {name: 'nic1', parent: 'cn', traits: ['CUSTOM_NIC_ROOT']},
      {name: 'pf1', parent: 'nic1', inv: {SRIOV_NET_VF: 4}, traits: ['CUSTOM_PHYSNET1']},
      {name: 'pf2', parent: 'nic1', inv: {SRIOV_NET_VF: 4}, traits: ['CUSTOM_PHYSNET2']},
      {name: 'nic2', parent: 'cn', traits: ['CUSTOM_NIC_ROOT']},
      {name: 'pf3', parent: 'nic2', inv: {SRIOV_NET_VF: 4}, traits: ['CUSTOM_PHYSNET2']},
    ])
  const ports = () => [
    group('', {VCPU: 1}),
    group('_P1', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET1']}),
    group('_P2', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET2']}),
  ]
  const nic = () => group('_NIC', {}, {required: ['CUSTOM_NIC_ROOT']})

  it.each([
    [
      'no same_subtree: any two PFs',
      ports(),
      undefined,
      ["cn.VCPU=1 pf1.SRIOV_NET_VF=1 pf2.SRIOV_NET_VF=1 | ''=cn _P1=pf1 _P2=pf2", "cn.VCPU=1 pf1.SRIOV_NET_VF=1 pf3.SRIOV_NET_VF=1 | ''=cn _P1=pf1 _P2=pf3"],
    ],
    // siblings: neither provider is above the other, so nothing satisfies _P1,_P2 alone
    ['same_subtree=_P1,_P2: siblings are not one subtree', ports(), [['_P1', '_P2']], []],
    [
      'a resourceless _NIC names their parent: one candidate, _NIC mapped, nothing allocated on it',
      [...ports(), nic()],
      [['_NIC', '_P1', '_P2']],
      ["cn.VCPU=1 pf1.SRIOV_NET_VF=1 pf2.SRIOV_NET_VF=1 | ''=cn _NIC=nic1 _P1=pf1 _P2=pf2"],
    ],
    [
      'the root as the top of the subtree',
      [group('', {VCPU: 1}), group('_CN', {VCPU: 1}), group('_P2', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET2']})],
      [['_CN', '_P2']],
      ["cn.VCPU=2 pf2.SRIOV_NET_VF=1 | ''=cn _CN=cn _P2=pf2", "cn.VCPU=2 pf3.SRIOV_NET_VF=1 | ''=cn _CN=cn _P2=pf3"],
    ],
    [
      'two groups on one provider are one subtree',
      [group('', {VCPU: 1}), group('_X', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET1']}), group('_Y', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET1']})],
      [['_X', '_Y']],
      ["cn.VCPU=1 pf1.SRIOV_NET_VF=2 | ''=cn _X=pf1 _Y=pf1"],
    ],
    [
      'two same_subtree parameters must both hold',
      [...ports(), nic()],
      [
        ['_NIC', '_P1'],
        ['_NIC', '_P2'],
      ],
      ["cn.VCPU=1 pf1.SRIOV_NET_VF=1 pf2.SRIOV_NET_VF=1 | ''=cn _NIC=nic1 _P1=pf1 _P2=pf2"],
    ],
  ] as const)('%s', (_name, groups, sameSubtree, want) => {
    const req = asSent(request([...groups], {sameSubtree: sameSubtree?.map((l) => [...l])}))
    expect(candidates(tree(), req).text).toEqual(want)
  })

  it('group_policy=isolate counts the provider of a resourceless group', () => {
    // the resourceless _T asks for PHYSNET1, which only pf1 carries, and _P1 takes pf1 too
    const same = [group('', {VCPU: 1}), group('_P1', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_PHYSNET1']}), group('_T', {}, {required: ['CUSTOM_PHYSNET1']})]
    expect(candidates(tree(), asSent(request(same, {sameSubtree: [['_T', '_P1']], groupPolicy: 'none'}))).text).toEqual([
      "cn.VCPU=1 pf1.SRIOV_NET_VF=1 | ''=cn _P1=pf1 _T=pf1",
    ])
    expect(candidates(tree(), asSent(request(same, {sameSubtree: [['_T', '_P1']], groupPolicy: 'isolate'}))).r.all).toEqual([])
  })

  it('a resourceless group no provider satisfies: no candidates', () => {
    const g = [group('', {VCPU: 1}), group('_NIC', {}, {required: ['CUSTOM_A']})]
    expect(candidates(tree(), asSent(request(g, {sameSubtree: [['_NIC']]}))).r.all).toEqual([])
  })
})

describe("placement's 400s for the 1.36-1.39 syntax", () => {
  const cloud = () => providers([{name: 'a', inv: {VCPU: 4, SRIOV_NET_VF: 4}, traits: ['CUSTOM_A']}])
  const two = (o: GroupSpec = {}) => [group('', {VCPU: 1}), group('_G', {SRIOV_NET_VF: 1}, o)]
  const anyAB = {anyOf: [['CUSTOM_A', 'CUSTOM_B']]}
  const IN = "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC'"

  it.each([
    [
      'in: at 1.36 (what nova Zed asks for)',
      asSent(request(two(anyAB))),
      `Invalid query string parameters: ${IN} only supported since microversion 1.39. Got: in:CUSTOM_A,CUSTOM_B`,
    ],
    [
      'in: with an empty trait',
      asSent(request(two({anyOf: [['CUSTOM_A', '']]}), {microversion: '1.39'})),
      "Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: in:,CUSTOM_A",
    ],
    [
      'in: with a forbidden trait',
      asSent(request(two({anyOf: [['CUSTOM_A', '!CUSTOM_B']]}), {microversion: '1.39'})),
      `Invalid query string parameters: ${IN} does not support forbidden traits. Got: in:!CUSTOM_B,CUSTOM_A`,
    ],
    [
      'root_required=in: (never allowed, not even at 1.39)',
      {
        ...request([group('', {VCPU: 1})], {microversion: '1.39'}),
        query: [
          ['resources', 'VCPU:1'],
          ['root_required', 'in:CUSTOM_A,CUSTOM_B'],
        ],
      },
      `Invalid query string parameters: ${IN} only supported since microversion 1.39. Got: in:CUSTOM_A,CUSTOM_B`,
    ],
    [
      'every trait of an in: list forbidden',
      asSent(request(two({...anyAB, forbidden: ['CUSTOM_A', 'CUSTOM_B']}), {microversion: '1.39'})),
      'Conflicting required and forbidden traits found in the following traits keys: required_G: (CUSTOM_A, CUSTOM_B)',
    ],
    ['an unknown trait in an in: list', asSent(request(two({anyOf: [['CUSTOM_A', 'CUSTOM_NOPE']]}), {microversion: '1.39'})), 'No such trait(s): CUSTOM_NOPE.'],
    [
      'a resourceless group same_subtree does not name',
      asSent(request([group('', {VCPU: 1}), group('_R', {}, {required: ['CUSTOM_A']})])),
      "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - ['_R'].",
    ],
    [
      'a resourceless unsuffixed group',
      asSent(request([group('', {}, {required: ['CUSTOM_A']}), group('_G', {VCPU: 1})], {sameSubtree: [['_G']]})),
      "Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - [''].",
    ],
    [
      'only resourceless groups',
      asSent(request([group('_R', {}, {required: ['CUSTOM_A']})], {sameSubtree: [['_R']]})),
      'There must be at least one resources or resources[$S] parameter.',
    ],
    [
      'same_subtree naming a group that is not there',
      asSent(request(two(), {sameSubtree: [['G', '_G']]})),
      "Real suffixes should be specified in `same_subtree`: ['G'] not found in ['', '_G'].",
    ],
    [
      'same_subtree naming the unsuffixed group',
      asSent(request(two(), {sameSubtree: [['_G', '']]})),
      'Empty string (unsuffixed group) can not be specified in `same_subtree` ',
    ],
    // what nova itself sends for a group without resources: resources_R= (placement parses it first)
    [
      'nova rendering a resourceless group',
      request([group('', {VCPU: 1}), group('_R', {}, {required: ['CUSTOM_A']})], {sameSubtree: [['_R']]}),
      'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.',
    ],
  ] as const)('%s', (_name, req, message) => {
    const r = candidates(cloud(), req as PlacementRequest)
    expect(r.r.all).toEqual([])
    expect(r.stopped).toBe(refused(message))
  })

  it('before 1.39 a repeated required$S counts once, its last value', () => {
    const req = {
      ...request(two()),
      query: [
        ['resources', 'VCPU:1'],
        ['resources_G', 'SRIOV_NET_VF:1'],
        ['required_G', 'in:CUSTOM_A,CUSTOM_B'],
        ['required_G', 'CUSTOM_A'],
      ] as Array<[string, string]>,
    }
    expect(candidates(cloud(), req).r.all).toHaveLength(1)
  })
})
