import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {floatRead, floatStored} from '../../src/lib/domain/placement-capacity.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {checkCandidateCapacity, checkClaimCapacity} from '../../src/lib/engine/placement-capacity-check.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {inventoryOf} from '../../src/lib/engine/placement-capacity-check.js'
import {emptyGroup, type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {CloudBuilder, type HostSpec} from '../support/builders.js'

const inv = (o: Partial<{total: number; reserved: number; min_unit: number; max_unit: number; step_size: number; allocation_ratio: number}>) =>
  inventoryOf({
    id: 1,
    resource_provider_id: 1,
    resource_class_id: 0,
    total: 10,
    reserved: 0,
    min_unit: 1,
    max_unit: 10,
    step_size: 1,
    allocation_ratio: 1,
    ...o,
  })

describe('capacity rule (research_context._capacity_check_clause)', () => {
  it.each([
    // total, reserved, ratio, used, amount, ok   -- worked numbers
    [10, 0, 1.0, 0, 10, true], // 0 + 10 <= 10
    [10, 0, 1.0, 1, 10, false], // 1 + 10 > 10
    [10, 2, 1.0, 0, 8, true], // (10 - 2) x 1 = 8
    [10, 2, 1.0, 0, 9, false],
    [8, 0, 16.0, 120, 8, true], // 8 x 16 = 128
    [8, 0, 16.0, 121, 8, false],
    // ratio 0.9 is the FLOAT 0.89999997615814: 10 x 0.8999999761 = 8.99999976 < 9 -> an exact fit is excluded
    [10, 0, 0.9, 0, 9, false],
    [10, 0, 0.9, 0, 8, true],
    // 1.5 is exact in float32: 3944 - 512 = 3432 x 1.5 = 5148
    [3944, 512, 1.5, 5084, 64, true],
    [3944, 512, 1.5, 5085, 64, false],
  ])('total %i reserved %i ratio %f used %i amount %i -> %s', (total, reserved, ratio, used, amount, ok) => {
    expect(checkCandidateCapacity(inv({total, reserved, allocation_ratio: floatStored(ratio), max_unit: 100000}), used, amount, 'VCPU').ok).toBe(ok)
  })

  it.each([
    [{min_unit: 2}, 1, 'min_unit'],
    [{max_unit: 4}, 5, 'max_unit'],
    [{step_size: 4}, 6, 'step_size'],
    [{step_size: 4}, 8, null],
  ] as const)('unit constraints %o amount %i -> %s', (o, amount, why) => {
    const v = checkCandidateCapacity(inv({...o, total: 100, max_unit: 'max_unit' in o ? o.max_unit : 100}), 0, amount, 'DISK_GB')
    expect(v.ok ? null : v.why).toBe(why)
  })

  it('reads FLOAT columns back as placement does', () => {
    expect(floatStored(0.9)).toBe(0.8999999761581421)
    expect(floatRead(0.8999999761581421)).toBe(0.9)
    // the claim (Python, text value) accepts the exact fit the candidate query (SQL, float value) refused
    const i = inv({total: 10, allocation_ratio: 0.8999999761581421})
    expect(checkCandidateCapacity(i, 0, 9, 'VCPU').ok).toBe(false)
    expect(checkClaimCapacity(i, 0, 9)).toBe(true)
  })
})

function request(groups: PlacementRequest['groups'], extra: Partial<PlacementRequest> = {}): PlacementRequest {
  return {groups, groupPolicy: null, limit: 1000, rootRequired: new Set(), rootForbidden: new Set(['COMPUTE_STATUS_DISABLED']), ...extra}
}
function group(suffix: string, resources: Record<string, number>, required: string[] = [], forbidden: string[] = []) {
  const g = emptyGroup(suffix)
  for (const [rc, n] of Object.entries(resources)) g.resources.set(rc, n)
  for (const t of required) g.required.add(t)
  for (const t of forbidden) g.forbidden.add(t)
  return g
}
/** One cell; hosts of 16 vCPUs, 64 GiB and 1000 GB unless told otherwise. */
function hosts(specs: Array<Partial<HostSpec> & {host: string}>, edit: (b: CloudBuilder) => void = () => {}, aggregates: string[] = []): Snapshot {
  const b = new CloudBuilder()
  b.addCell('cell1')
  for (const name of aggregates) b.addAggregate({name})
  for (const h of specs) b.addHost('cell1', {vcpus: 16, memory_mb: 65536, local_gb: 1000, ...h})
  edit(b)
  return b.build()
}
const noUsage = (s: Snapshot) => {
  const m = buildModel(s)
  return {m, idx: providerIndex(m), usage: {used: (rp: number, rc: number) => m.usage(rp, rc)}}
}

describe('allocation candidates', () => {
  it('excludes disabled roots and roots without capacity, keeps id order, and applies the limit last', () => {
    const s = hosts(
      [{host: 'a', vcpus: 4, cpu_allocation_ratio: 1}, {host: 'b', disabled: true}, {host: 'c', vcpus: 4, cpu_allocation_ratio: 1}, {host: 'd'}, {host: 'e'}],
      (b) => {
        b.addFlavor({name: 'two', vcpus: 2, memory_mb: 512})
        b.addInstance('c', 'two')
      },
    )
    const {idx, usage} = noUsage(s)
    const r = allocationCandidates(idx, request([group('', {VCPU: 3, MEMORY_MB: 512})], {limit: 2}), usage)
    // a: 0+3<=4 ok; b disabled; c: 2+3>4; d, e ok -> a, d, e; limit 2 keeps a, d
    expect(r.all.map((a) => a.anchorRootId)).toEqual([1, 4, 5])
    expect(r.kept.map((a) => a.anchorRootId)).toEqual([1, 4])
    expect(r.diagnostics.rejectedRoots.get(2)?.label).toBe('disabled (COMPUTE_STATUS_DISABLED)')
    expect(r.diagnostics.rejectedRoots.get(3)).toMatchObject({label: 'insufficient VCPU', need: 3, have: 2})
  })

  it('granular groups: same provider per group; isolate forbids sharing a provider', () => {
    // a nested host: root (VCPU, MEMORY) with two children carrying CUSTOM_GOLD-less SRIOV_NET_VF
    const s = hosts([{host: 'n1'}], (b) => {
      b.addChildProvider('n1', {name: 'n1_pf1', inventories: {SRIOV_NET_VF: {total: 2}}})
      b.addChildProvider('n1', {name: 'n1_pf2', inventories: {SRIOV_NET_VF: {total: 1}}})
    })
    const {idx, usage} = noUsage(s)
    const name = (rpId: number | undefined) => (rpId === undefined ? undefined : idx.providers.get(rpId)?.name)
    const groups = () => [group('', {VCPU: 1, MEMORY_MB: 512}), group('1', {SRIOV_NET_VF: 1}), group('2', {SRIOV_NET_VF: 1})]
    // none: (pf1,pf1) summed to 2 <= 2 ok, (pf1,pf2), (pf2,pf1), (pf2,pf2) summed 2 > 1 excluded -> 3
    const none = allocationCandidates(idx, request(groups(), {groupPolicy: 'none'}), usage)
    expect(none.all).toHaveLength(3)
    // isolate: only (pf1,pf2) and (pf2,pf1)
    const iso = allocationCandidates(idx, request(groups(), {groupPolicy: 'isolate'}), usage)
    expect(iso.all).toHaveLength(2)
    // a VF amount that exceeds pf2's max_unit: only pf1 can serve 2
    const big = allocationCandidates(idx, request([group('', {VCPU: 1}), group('1', {SRIOV_NET_VF: 2})]), usage)
    expect(big.all).toHaveLength(1)
    expect(name(big.all[0]?.parts.find((p) => p.rc === 'SRIOV_NET_VF')?.rpId)).toBe('n1_pf1')
  })

  it('unsuffixed group spreads over the tree and a sharing provider via MISC_SHARES_VIA_AGGREGATE', () => {
    // no local disk inventories; a shared DISK_GB provider in aggregate nfs
    const s = hosts(
      [
        {host: 'n1', shared_storage: true, aggregates: ['nfs']},
        {host: 'n2', shared_storage: true},
      ],
      (b) => {
        b.addRootProvider({
          name: 'nfs-share',
          inventories: {DISK_GB: {total: 1000, min_unit: 10, max_unit: 500, step_size: 10}},
          traits: ['MISC_SHARES_VIA_AGGREGATE'],
        })
        b.linkProviderToAggregate('nfs-share', 'nfs')
      },
      ['nfs'],
    )
    const {idx, usage} = noUsage(s)
    const ok = allocationCandidates(idx, request([group('', {VCPU: 1, DISK_GB: 20})]), usage)
    // only n1 shares aggregate nfs with the share: one candidate anchored at n1, DISK_GB from the share
    expect(ok.all).toHaveLength(1)
    expect(ok.all[0]?.anchorRootId).toBe(1)
    const shareId = ok.all[0]?.parts.find((p) => p.rc === 'DISK_GB')?.rpId
    expect(shareId === undefined ? undefined : idx.providers.get(shareId)?.name).toBe('nfs-share')
    // 25 is not a multiple of step_size 10 -> nothing
    expect(allocationCandidates(idx, request([group('', {VCPU: 1, DISK_GB: 25})]), usage).all).toHaveLength(0)
  })

  it('member_of any-of and all-of, required and forbidden traits', () => {
    const s = hosts(
      [
        {host: 'a', aggregates: ['x'], traits: ['CUSTOM_GOLD']},
        {host: 'b', aggregates: ['y']},
        {host: 'c', aggregates: ['x', 'y'], traits: ['HW_CPU_HYPERTHREADING']},
      ],
      undefined,
      ['x', 'y'],
    )
    const {idx, usage} = noUsage(s)
    const [x, y] = s.nova_api.aggregates.map((a) => a.uuid as string)
    const run = (memberOf: string[][], req: string[] = [], forb: string[] = []) => {
      const g = group('', {VCPU: 1}, req, forb)
      g.memberOf = memberOf
      return allocationCandidates(idx, request([g]), usage).all.map((a) => a.anchorRootId)
    }
    expect(run([[x as string, y as string]])).toEqual([1, 2, 3]) // in:x,y
    expect(run([[x as string], [y as string]])).toEqual([3]) // x and y
    expect(run([[x as string]], ['CUSTOM_GOLD'])).toEqual([1])
    expect(run([[x as string]], [], ['HW_CPU_HYPERTHREADING'])).toEqual([1])
  })
})
