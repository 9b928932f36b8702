/**
 * The queries placement 8 refuses (400, with its message), the sharing-provider duplicates it
 * folds and the 1.36-1.39 syntax (same_subtree, resourceless groups, `in:` traits at 1.39), against placement's own WSGI app (python3-placement, Zed) on a MariaDB database made by its
 * migrations: for each request, the engine's placementBadRequest must give placement's message, and
 * where placement answers 200 the engine's allocation requests must be placement's (as a multiset).
 * Needs the test MariaDB (CLOUDCTL_TEST_DSN, default mysql://root@127.0.0.1:3306).
 */
import {randomBytes} from 'node:crypto'
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {createEngineState} from '../../src/lib/engine/pipeline.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {placementBadRequest, toQueryString} from '../../src/lib/engine/placement-query.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {CloudBuilder} from '../support/builders.js'
import {COMPARE, runNova} from './driver.js'

function group(
  suffix: string,
  resources: Record<string, number>,
  o: {required?: string[]; anyOf?: string[][]; forbidden?: string[]; memberOf?: string[][]; inTree?: string} = {},
): PlacementGroup {
  const g = emptyGroup(suffix)
  for (const [rc, n] of Object.entries(resources)) g.resources.set(rc, n)
  for (const t of o.required ?? []) g.required.add(t)
  if (o.anyOf) g.requiredAnyOf = o.anyOf
  for (const t of o.forbidden ?? []) g.forbidden.add(t)
  g.memberOf = o.memberOf ?? []
  g.inTree = o.inTree ?? null
  return g
}

const req = (groups: PlacementGroup[], extra: Partial<PlacementRequest> = {}): PlacementRequest => ({
  groups,
  groupPolicy: null,
  limit: null,
  rootRequired: new Set(),
  rootForbidden: new Set(),
  ...extra,
})

/** The query as a client other than nova sends it: a resourceless group sends no resources$S. */
function asSent(r: PlacementRequest): PlacementRequest {
  return {...r, query: [...new URLSearchParams(toQueryString(r))].filter(([k, v]) => !(k.startsWith('resources') && v === ''))}
}

function mysqlParams(): {host: string; port: number; user: string; password: string} {
  const u = new URL(process.env.CLOUDCTL_TEST_DSN || 'mysql://root@127.0.0.1:3306')
  return {host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password)}
}

/**
 * placement's error body: the message is the last paragraph of `detail`. A JSON-schema refusal goes
 * on with jsonschema's dump of the schema and instance, which the engine leaves out.
 */
function placementMessage(body: unknown): string {
  const detail = (body as {errors?: Array<{detail?: string}>})?.errors?.[0]?.detail ?? JSON.stringify(body)
  return (detail.split('\n\n').pop() ?? '').trim().replace(/\s+Failed validating .*$/s, '')
}

describe.skipIf(!COMPARE)('compare with placement: its 400s and its de-duplication', () => {
  it('the engine refuses what placement refuses, with its message, and finds the same candidates otherwise', () => {
    const b = new CloudBuilder()
    b.traitId('CUSTOM_GOLD')
    b.addCell('cell1')
    b.addAggregate({name: 'az1'})
    b.addHost('cell1', {host: 'cn1', vcpus: 16, memory_mb: 65536, local_gb: 40, aggregates: ['az1']})
    b.addHost('cell1', {host: 'cn2', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['az1']})
    // two providers sharing DISK_GB with the hosts of az1
    for (const name of ['ss1', 'ss2']) b.addSharingProvider({name, disk_gb: 1000, aggregates: ['az1']})
    // under cn1, a NIC providing nothing and a PF with VFs below it (what same_subtree is for)
    b.traitId('CUSTOM_NIC')
    b.addChildProvider('cn1', {name: 'cn1-nic', inventories: {}, traits: ['CUSTOM_NIC']})
    b.addChildProvider('cn1-nic', {name: 'cn1-pf', inventories: {SRIOV_NET_VF: {total: 4}}, traits: ['CUSTOM_GOLD']})
    const s = b.build()
    const p = s.placement
    const agg = p.placement_aggregates[0]?.uuid as string
    const cn1 = p.resource_providers.find((r) => r.name === 'cn1')?.uuid as string
    const cn2 = p.resource_providers.find((r) => r.name === 'cn2')?.uuid as string
    const cases: Array<[string, PlacementRequest]> = [
      ['disk alone (each sharing provider once)', req([group('', {DISK_GB: 10})])],
      ['disk too big for cn1', req([group('', {DISK_GB: 100})])],
      ['VCPU and disk', req([group('', {VCPU: 1, DISK_GB: 100})])],
      ['granular disk from a share, isolate', req([group('', {VCPU: 1}), group('1', {DISK_GB: 10}), group('2', {DISK_GB: 10})], {groupPolicy: 'isolate'})],
      ['unknown forbidden trait', req([group('', {VCPU: 1}, {forbidden: ['CUSTOM_NOT_A_TRAIT']})])],
      ['unknown required trait', req([group('', {VCPU: 1}, {required: ['CUSTOM_NOT_A_TRAIT']})])],
      ['unknown forbidden root trait', req([group('', {VCPU: 1})], {rootForbidden: new Set(['CUSTOM_NOT_A_TRAIT'])})],
      ['unknown resource class', req([group('', {CUSTOM_NOPE: 1})])],
      ['two granular groups, no group_policy', req([group('', {VCPU: 1}), group('1', {DISK_GB: 1}), group('2', {DISK_GB: 1})])],
      ['limit=0', req([group('', {VCPU: 1})], {limit: 0})],
      ['bad group_policy', req([group('', {VCPU: 1}), group('1', {DISK_GB: 1})], {groupPolicy: 'some'})],
      ['T and !T', req([group('', {VCPU: 1}, {required: ['CUSTOM_GOLD'], forbidden: ['CUSTOM_GOLD']})])],
      ['T and !T in root_required', req([group('', {VCPU: 1})], {rootRequired: new Set(['CUSTOM_GOLD']), rootForbidden: new Set(['CUSTOM_GOLD'])})],
      ['amount 0', req([group('', {VCPU: 0, MEMORY_MB: 1})])],
      ['resourceless granular group', req([group('', {VCPU: 1}), group('1', {}, {required: ['CUSTOM_GOLD']})], {groupPolicy: 'none'})],
      ['no resources at all', req([group('', {}, {required: ['CUSTOM_GOLD']})])],
      ['member_of not a UUID', req([group('', {VCPU: 1}, {memberOf: [['aggregate-id-7']]})])],
      ['in_tree not a UUID', req([group('', {VCPU: 1}, {inTree: 'compute-1'})])],
      ['in: before 1.39', req([group('', {VCPU: 1}, {anyOf: [['CUSTOM_GOLD', 'HW_CPU_X86_AVX2']]})])],
      [
        'same_subtree: VFs under a resourceless NIC',
        asSent(
          req([group('', {VCPU: 1}), group('_NIC', {}, {required: ['CUSTOM_NIC']}), group('_VF', {SRIOV_NET_VF: 1})], {
            groupPolicy: 'none',
            sameSubtree: [['_NIC', '_VF']],
          }),
        ),
      ],
      // placement 8 reads in_treeN only when searching resources: cn1's NIC still qualifies
      [
        'a resourceless group with in_tree of another tree',
        asSent(
          req([group('', {VCPU: 1}), group('_NIC', {}, {required: ['CUSTOM_NIC'], inTree: cn2}), group('_VF', {SRIOV_NET_VF: 1})], {
            groupPolicy: 'none',
            sameSubtree: [['_NIC', '_VF']],
          }),
        ),
      ],
      [
        'same_subtree: disk from cn1 (above the NIC), not from a share',
        asSent(
          req([group('', {VCPU: 1}), group('_NIC', {}, {required: ['CUSTOM_NIC']}), group('_D', {DISK_GB: 1})], {
            groupPolicy: 'none',
            sameSubtree: [['_NIC', '_D']],
          }),
        ),
      ],
      [
        'same_subtree: the compute above the VF',
        req([group('', {MEMORY_MB: 1}), group('_CN', {VCPU: 1}), group('_VF', {SRIOV_NET_VF: 1})], {groupPolicy: 'none', sameSubtree: [['_CN', '_VF']]}),
      ],
      ['resourceless group not in same_subtree', asSent(req([group('', {VCPU: 1}), group('_NIC', {}, {required: ['CUSTOM_NIC']})]))],
      ['same_subtree naming a missing group', req([group('', {VCPU: 1}), group('_VF', {SRIOV_NET_VF: 1})], {sameSubtree: [['_VF', '_X']]})],
      ['same_subtree naming the unsuffixed group', req([group('', {VCPU: 1}), group('_VF', {SRIOV_NET_VF: 1})], {sameSubtree: [['_VF', '']]})],
      ['in: at 1.39, over the tree', req([group('', {VCPU: 1, SRIOV_NET_VF: 1}, {anyOf: [['CUSTOM_GOLD', 'CUSTOM_NIC']]})], {microversion: '1.39'})],
      ['in: at 1.39, a trait only off the allocation', req([group('', {VCPU: 1, SRIOV_NET_VF: 1}, {anyOf: [['CUSTOM_NIC']]})], {microversion: '1.39'})],
      [
        'in: at 1.39, granular',
        req([group('', {VCPU: 1}), group('_VF', {SRIOV_NET_VF: 1}, {required: ['CUSTOM_GOLD'], anyOf: [['CUSTOM_NIC', 'CUSTOM_GOLD']]})], {
          microversion: '1.39',
        }),
      ],
      [
        'in: at 1.39, every trait forbidden',
        req([group('', {VCPU: 1}, {anyOf: [['CUSTOM_GOLD', 'CUSTOM_NIC']], forbidden: ['CUSTOM_GOLD', 'CUSTOM_NIC']})], {microversion: '1.39'}),
      ],
      ['in: at 1.39 with a ! trait', req([group('', {VCPU: 1}, {anyOf: [['CUSTOM_GOLD', '!CUSTOM_NIC']]})], {microversion: '1.39'})],
      ['valid member_of and in_tree', req([group('', {VCPU: 1}, {memberOf: [[agg]], inTree: cn1, forbidden: ['CUSTOM_GOLD']})])],
    ]
    const model = buildModel(s)
    const idx = providerIndex(model)
    const db = `cloudctl_cmp_${randomBytes(4).toString('hex')}`
    const nova = runNova<Array<{status: number; error?: unknown; allocation_requests?: Array<Record<string, {resources: Record<string, number>}>>}>>({
      mode: 'placement',
      mysql: mysqlParams(),
      database: db,
      placement: s.placement,
      queries: cases.map(([, r]) => toQueryString(r, {encoded: true})),
      microversions: cases.map(([, r]) => r.microversion ?? null),
    })
    const uuidOf = (id: number) => idx.providers.get(id)?.uuid ?? String(id)
    let refused = 0
    cases.forEach(([name, r], i) => {
      const got = nova[i]
      const bad = placementBadRequest(idx, r)
      // both trimmed: placement ends its same_subtree message with a blank
      expect({name, status: bad === null ? 200 : 400, message: bad?.trim() ?? null}).toEqual({
        name,
        status: got?.status,
        message: got?.status === 200 ? null : placementMessage(got?.error),
      })
      if (bad !== null) {
        refused++
        return
      }
      const engine = allocationCandidates(idx, r, createEngineState().usageView(idx))
        .all.map((a) =>
          a.parts
            .map((x) => `${uuidOf(x.rpId)}:${x.rc}=${x.amount}`)
            .sort()
            .join(' '),
        )
        .sort()
      const real = (got?.allocation_requests ?? [])
        .map((a) =>
          Object.entries(a)
            .flatMap(([u, v]) => Object.entries(v.resources).map(([rc, n]) => `${u}:${rc}=${n}`))
            .sort()
            .join(' '),
        )
        .sort()
      expect({name, areqs: engine}).toEqual({name, areqs: real})
    })
    expect(refused).toBeGreaterThanOrEqual(14)
  }, 300_000)
})
