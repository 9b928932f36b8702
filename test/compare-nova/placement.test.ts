/**
 * cloudctl's allocation candidates against placement's own GET /allocation_candidates (python3-
 * placement, Zed): placement's WSGI app runs in-process on a MariaDB database made by its own
 * migrations (so allocation_ratio is a real MySQL FLOAT), filled with the snapshot's placement
 * rows; the engine's query string for each request is sent to it. Compared without `limit`
 * (placement's order comes from Python sets): the allocation requests as a multiset, and the
 * provider summaries. Skipped when /usr/bin/python3 cannot import nova (driver.ts); needs the test MariaDB
 * (CLOUDCTL_TEST_DSN, default mysql://root@127.0.0.1:3306).
 */
import {randomBytes} from 'node:crypto'
import {describe, expect, it} from 'vitest'

import {buildModel, type CloudModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig} from '../../src/lib/engine/config.js'
import {createEngineState} from '../../src/lib/engine/pipeline.js'
import {floatStored} from '../../src/lib/domain/placement-capacity.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {toQueryString} from '../../src/lib/engine/placement-query.js'
import {type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {buildRequestSpec, placementRequestFor, runRequestFilters} from '../../src/lib/engine/request.js'
import {type BootRequest} from '../../src/lib/engine/request-spec.js'
import {generateCloud} from '../support/generator.js'
import {COMPARE, runNova} from './driver.js'

const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`

/**
 * A generated cloud plus what the generator does not make: nested SR-IOV providers (with a custom
 * trait on some), a DISK_GB sharing provider in the ssd aggregate, FLOAT ratios that are not exact
 * in single precision, reserved / step_size / max_unit constraints, an over-allocated provider.
 */
function cloud(): Snapshot {
  const {snapshot: s} = generateCloud({
    seed: 9,
    now: '2024-06-03 05:03:40',
    cells: 1,
    hosts: 24,
    instances: 150,
    pinnedHostFraction: 0.3,
    faults: {'provider.over-capacity': 1},
  })
  const p = s.placement
  const trait = (name: string): number => {
    const t = p.traits.find((x) => x.name === name)
    if (t) return t.id
    const id = Math.max(...p.traits.map((x) => x.id)) + 1
    p.traits.push({id, name})
    return id
  }
  let rpId = Math.max(...p.resource_providers.map((r) => r.id))
  let invId = Math.max(...p.inventories.map((i) => i.id))
  const roots = p.resource_providers.filter((r) => r.parent_provider_id === null).sort((a, b) => a.id - b.id)
  const gold = trait('CUSTOM_GOLD')
  roots.slice(0, 8).forEach((root, i) => {
    for (let k = 0; k < 2; k++) {
      const id = ++rpId
      p.resource_providers.push({
        id,
        uuid: uuid('5f000000', id),
        name: `${root.name ?? root.uuid}_pf${k}`,
        generation: 1,
        root_provider_id: root.id,
        parent_provider_id: root.id,
      })
      p.inventories.push({
        id: ++invId,
        resource_provider_id: id,
        resource_class_id: 4,
        total: 2 + k * 2,
        reserved: k,
        min_unit: 1,
        max_unit: 2 + k,
        step_size: 1,
        allocation_ratio: 1,
      })
      if ((i + k) % 3 === 0) p.resource_provider_traits.push({resource_provider_id: id, trait_id: gold})
    }
  })
  const share = ++rpId
  p.resource_providers.push({id: share, uuid: uuid('5a000000', share), name: 'nfs-share', generation: 1, root_provider_id: share, parent_provider_id: null})
  p.inventories.push({
    id: ++invId,
    resource_provider_id: share,
    resource_class_id: 2,
    total: 2000,
    reserved: 100,
    min_unit: 10,
    max_unit: 500,
    step_size: 10,
    allocation_ratio: 1,
  })
  p.resource_provider_traits.push({resource_provider_id: share, trait_id: trait('MISC_SHARES_VIA_AGGREGATE')})
  const ssd = s.nova_api.aggregates.find((a) => a.name === 'ssd')
  const ssdPlacement = p.placement_aggregates.find((a) => a.uuid === ssd?.uuid)
  if (ssdPlacement) p.resource_provider_aggregates.push({resource_provider_id: share, aggregate_id: ssdPlacement.id})
  // a small host where single precision decides: 10 VCPU x FLOAT 0.9 = 8.99999976 < 9 (excluded),
  // 1000 MB x FLOAT 1.1 = 1100.0000238 >= 1100 (included)
  const tiny = ++rpId
  p.resource_providers.push({id: tiny, uuid: uuid('5b000000', tiny), name: 'float-host', generation: 1, root_provider_id: tiny, parent_provider_id: null})
  p.inventories.push({
    id: ++invId,
    resource_provider_id: tiny,
    resource_class_id: 0,
    total: 10,
    reserved: 0,
    min_unit: 1,
    max_unit: 10,
    step_size: 1,
    allocation_ratio: floatStored(0.9),
  })
  p.inventories.push({
    id: ++invId,
    resource_provider_id: tiny,
    resource_class_id: 1,
    total: 1000,
    reserved: 0,
    min_unit: 1,
    max_unit: 2000,
    step_size: 1,
    allocation_ratio: floatStored(1.1),
  })
  // ratios that are not exact in float32, on a third of the hosts' VCPU and MEMORY_MB
  for (const inv of p.inventories) {
    if (inv.resource_provider_id % 3 !== 0) continue
    if (inv.resource_class_id === 0) inv.allocation_ratio = floatStored(0.9)
    if (inv.resource_class_id === 1) inv.allocation_ratio = floatStored(1.1)
  }
  return s
}

function engineCandidates(model: CloudModel, req: PlacementRequest): {areqs: string[]; summaries: string[]} {
  const idx = providerIndex(model)
  const r = allocationCandidates(idx, req, createEngineState().usageView(idx))
  const uuidOf = (id: number) => idx.providers.get(id)?.uuid ?? String(id)
  return {
    areqs: r.all.map((a) => canonical(Object.fromEntries(groupBy(a.parts.map((p) => [uuidOf(p.rpId), p.rc, p.amount] as const))))).sort(),
    summaries: [...r.summaryProviderIds].map(uuidOf).sort(),
  }
}

function groupBy(parts: ReadonlyArray<readonly [string, string, number]>): Array<[string, {resources: Record<string, number>}]> {
  const m = new Map<string, Record<string, number>>()
  for (const [u, rc, n] of parts) {
    const r = m.get(u) ?? {}
    r[rc] = (r[rc] ?? 0) + n
    m.set(u, r)
  }
  return [...m].map(([u, resources]) => [u, {resources}])
}

function canonical(allocations: Record<string, {resources: Record<string, number>}>): string {
  return Object.keys(allocations)
    .sort()
    .map(
      (u) =>
        `${u}{${Object.entries((allocations[u] as {resources: Record<string, number>}).resources)
          .sort()
          .map(([rc, n]) => `${rc}:${n}`)
          .join(',')}}`,
    )
    .join(' ')
}

function mysqlParams(): {host: string; port: number; user: string; password: string} {
  const u = new URL(process.env.CLOUDCTL_TEST_DSN || 'mysql://root@127.0.0.1:3306')
  return {host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password)}
}

describe.skipIf(!COMPARE)('compare with placement: allocation candidates', () => {
  it('the engine finds the same allocation requests and provider summaries as placement', () => {
    const snapshot = cloud()
    const model = buildModel(snapshot)
    const cfg = defaultSchedulerConfig()
    const boots: Array<[string, BootRequest]> = [
      ['small', {flavor: 'm1.small'}],
      ['large in az1', {flavor: 'm1.large', availabilityZone: 'az1'}],
      ['pinned (PCPU)', {flavor: 'm1.pinned'}],
      ['pinned + emulator thread', {flavor: 'm1.pinned-iso'}],
      ['mixed', {flavor: 'm1.mixed'}],
      ['big memory', {flavor: 'r1.large'}],
      ['boot from volume', {flavor: 'm1.medium', bootFromVolume: true}],
      ['VF from the tree (unsuffixed)', {flavor: 'm1.small', extraSpecs: {'resources:SRIOV_NET_VF': '2'}}],
      ['granular VF group with a trait', {flavor: 'm1.small', extraSpecs: {'resources1:SRIOV_NET_VF': '1', 'trait1:CUSTOM_GOLD': 'required'}}],
      ['two VF groups, isolate', {flavor: 'm1.small', extraSpecs: {'resources1:SRIOV_NET_VF': '1', 'resources2:SRIOV_NET_VF': '1', group_policy: 'isolate'}}],
      ['two VF groups, none', {flavor: 'm1.small', extraSpecs: {'resources1:SRIOV_NET_VF': '2', 'resources2:SRIOV_NET_VF': '1', group_policy: 'none'}}],
      ['disk from the share (step 10)', {flavor: 'm1.small', extraSpecs: {'resources:DISK_GB': '30'}}],
      ['disk not a multiple of the step', {flavor: 'm1.small', extraSpecs: {'resources:DISK_GB': '35'}}],
      // trait:HW_CPU_HYPERTHREADING=forbidden would imply cpu_thread_policy=isolate, which nova-api refuses for a shared guest
      ['forbidden trait', {flavor: 'm1.small', extraSpecs: {'trait:CUSTOM_GOLD': 'forbidden'}}],
      ['required trait', {flavor: 'm1.small', extraSpecs: {'trait:CUSTOM_GOLD': 'required', 'resources:SRIOV_NET_VF': '1'}}],
      [
        'FLOAT: exact fit at 0.9 is excluded',
        {flavor: 'm1.small', extraSpecs: {'resources:VCPU': '9', 'resources:MEMORY_MB': '1000', 'resources:DISK_GB': '0'}},
      ],
      ['FLOAT: 1.1 lets 1100 MB in', {flavor: 'm1.small', extraSpecs: {'resources:VCPU': '8', 'resources:MEMORY_MB': '1100', 'resources:DISK_GB': '0'}}],
    ]
    const queries: string[] = []
    const expected: Array<{areqs: string[]; summaries: string[]}> = []
    for (const [, boot] of boots) {
      const spec = buildRequestSpec(model, boot, cfg)
      runRequestFilters(model, spec, cfg)
      const pr = placementRequestFor(model, spec, cfg)
      expect(pr.fatal).toBeNull()
      const req = {...pr.request, limit: null}
      queries.push(toQueryString(req, {encoded: true}))
      expected.push(engineCandidates(model, req))
    }
    const db = `cloudctl_cmp_${randomBytes(4).toString('hex')}`
    const nova = runNova<
      Array<{status: number; error?: unknown; allocation_requests?: Array<Record<string, {resources: Record<string, number>}>>; provider_summaries?: string[]}>
    >({
      mode: 'placement',
      mysql: mysqlParams(),
      database: db,
      placement: snapshot.placement,
      queries,
    })
    let nonEmpty = 0
    boots.forEach(([name], i) => {
      const got = nova[i]
      expect({name, status: got?.status, error: got?.error}).toEqual({name, status: 200, error: undefined})
      const areqs = (got?.allocation_requests ?? []).map(canonical).sort()
      if (areqs.length > 0) nonEmpty++
      if (process.env.COMPARE_DEBUG) console.log(name, areqs.length, expected[i]?.areqs.length, got?.provider_summaries?.length, queries[i])
      expect({name, query: queries[i], areqs}).toEqual({name, query: queries[i], areqs: expected[i]?.areqs})
      expect({name, summaries: got?.provider_summaries}).toEqual({name, summaries: expected[i]?.summaries})
    })
    // most requests must find something, or the comparison is trivial
    expect(nonEmpty).toBeGreaterThan(boots.length / 2)
    // and MySQL's single-precision FLOAT really decided the float-host cases
    const floatHost = snapshot.placement.resource_providers.find((r) => r.name === 'float-host')?.uuid as string
    const hits = (name: string) => (nova[boots.findIndex(([n]) => n === name)]?.allocation_requests ?? []).some((a) => floatHost in a)
    expect([hits('FLOAT: exact fit at 0.9 is excluded'), hits('FLOAT: 1.1 lets 1100 MB in')]).toEqual([false, true])
  }, 300_000)
})
