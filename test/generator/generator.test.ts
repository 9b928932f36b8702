import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {parseHostNumaTopology, parseInstanceNumaTopology} from '../../src/lib/domain/nova-objects.js'
import {FAULT_CODES, type FaultCode, generateCloud} from '../support/generator.js'
import {violations} from './invariants.js'

/** Which of our own invariant families a fault is allowed to break. */
const FAMILY: Record<string, string[]> = {
  allocation: ['allocation'],
  provider: ['provider', 'allocation'],
  cell: ['cell'],
  pinning: ['pinning', 'allocation'],
  usage: ['usage'],
  aggregate: ['aggregate'],
}

describe('generateCloud', () => {
  const base = {seed: 7, cells: 2, hostsPerCell: 16, instances: 200, migrationsInProgress: 2, completedMigrations: 3}

  it('is fully consistent without faults', () => {
    const {snapshot, planted} = generateCloud(base)
    expect(planted).toEqual([])
    expect(violations(snapshot)).toEqual([])
    expect(runChecks(buildModel(snapshot)).findings.map((f) => f.code)).toEqual([])
    expect(snapshot.nova.instances.length).toBe(200)
    expect(snapshot.nova.migrations.length).toBeGreaterThan(0)
  })

  it('is deterministic for a seed', () => {
    const a = generateCloud({...base, faults: {'allocation.consumer-deleted': 1, 'pinning.leaked': 1}})
    const b = generateCloud({...base, faults: {'allocation.consumer-deleted': 1, 'pinning.leaked': 1}})
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    expect(JSON.stringify(generateCloud({...base, seed: 8}).snapshot)).not.toBe(JSON.stringify(a.snapshot))
  })

  it.each(FAULT_CODES.map((c) => [c]))('%s plants exactly that fault', (code: FaultCode) => {
    const {snapshot, planted} = generateCloud({...base, faults: {[code]: 1}})
    expect(planted.map((p) => p.code)).toEqual([code])
    const broken = violations(snapshot)
    expect(broken.length).toBeGreaterThan(0)
    const allowed = FAMILY[code.split('.')[0]]
    for (const v of broken) expect(allowed).toContain(v.split(':')[0])
    // the audits find it, on the planted subject, and nothing else but what nova couples to it
    const findings = runChecks(buildModel(snapshot)).findings
    const p = planted[0]
    const hit = findings.filter((f) => f.code === code)
    expect(hit.length).toBeGreaterThan(0)
    const keys = [p.subject.instance_uuid, p.subject.consumer_uuid, p.subject.provider_uuid, p.subject.host].filter((k) => k !== undefined)
    expect(
      hit.some((f) =>
        [f.subject.instance_uuid, f.subject.consumer_uuid, f.subject.provider_uuid, f.subject.host].some((k) => k !== undefined && keys.includes(k)),
      ),
    ).toBe(true)
    for (const f of findings) expect([code, ...(p.alsoExpected ?? [])]).toContain(f.code)
  })

  it('plants several faults at once, each recorded', () => {
    const faults = {'allocation.missing': 2, 'cell.instance-duplicate': 1, 'provider.stale': 1, 'usage.negative-free': 1}
    const {snapshot, planted} = generateCloud({...base, faults})
    expect(planted.map((p) => p.code).sort()).toEqual([
      'allocation.missing',
      'allocation.missing',
      'cell.instance-duplicate',
      'provider.stale',
      'usage.negative-free',
    ])
    const codes = new Set<string>(runChecks(buildModel(snapshot)).findings.map((f) => f.code))
    for (const c of Object.keys(faults)) expect(codes.has(c)).toBe(true)
  })

  it('scales: ~1k hosts and 30k instances stay consistent', () => {
    const {snapshot} = generateCloud({seed: 3, cells: 3, hosts: 1000, instances: 30000})
    expect(snapshot.nova.compute_nodes.length).toBe(1000)
    expect(snapshot.placement.allocations.length).toBeGreaterThan(80000)
    expect(violations(snapshot)).toEqual([])
  }, 120000)
})

/** A parsed blob's value, null when it did not parse. */
const valueOf = <T>(p: {ok: true; value: T} | {ok: false; error: string}): T | null => (p.ok ? p.value : null)

describe("generateCloud shapes 'real'", () => {
  const base = {
    seed: 7,
    cells: 2,
    hostsPerCell: 16,
    instances: 300,
    migrationsInProgress: 2,
    completedMigrations: 8,
    deletedInstances: 20,
    shapes: 'real' as const,
  }

  it('is fully consistent without faults, deleted instances and migrations included', () => {
    const {snapshot, planted} = generateCloud(base)
    expect(planted).toEqual([])
    expect(violations(snapshot)).toEqual([])
    expect(runChecks(buildModel(snapshot)).findings.map((f) => f.code)).toEqual([])
    expect(snapshot.nova.instances.filter((i) => i.deleted === 0)).toHaveLength(300)
    expect(snapshot.nova.instances.filter((i) => i.deleted !== 0)).toHaveLength(20)
  })

  it('is deterministic for a seed', () => {
    expect(JSON.stringify(generateCloud(base).snapshot)).toBe(JSON.stringify(generateCloud(base).snapshot))
  })

  it('writes real-shaped rows: two-socket NUMA hosts with page pools, 60+ traits, NUMA, flavor, vcpu_model and keypairs on every instance, request specs', () => {
    const g = generateCloud(base)
    const s = g.snapshot
    const model = buildModel(s)
    expect(model.blobErrors()).toEqual([])
    for (const cn of s.nova.compute_nodes) {
      const numa = parseHostNumaTopology(cn.numa_topology)
      if (!numa.ok || !numa.value) throw new Error(`${cn.hypervisor_hostname}: no NUMA topology`)
      expect(numa.value.cells).toHaveLength(2)
      for (const c of numa.value.cells) {
        expect(c.siblings.length).toBeGreaterThan(0)
        expect(c.mempages.map((p) => p.size_kb)).toEqual([4, 2048, 1048576])
      }
    }
    const traits = new Map<number, number>()
    for (const t of s.placement.resource_provider_traits) traits.set(t.resource_provider_id, (traits.get(t.resource_provider_id) ?? 0) + 1)
    for (const rp of s.placement.resource_providers) expect(traits.get(rp.id) ?? 0).toBeGreaterThanOrEqual(60)
    const specs = new Set((s.nova_api.request_specs ?? []).map((r) => r.instance_uuid))
    for (const i of s.nova.instances) {
      expect(valueOf(parseInstanceNumaTopology(i.extra?.numa_topology ?? null)), i.uuid).not.toBeNull()
      expect(specs.has(i.uuid)).toBe(true)
      const [vcpuModel, keypairs] = g.instanceExtra?.values(i) ?? []
      expect(JSON.parse(vcpuModel ?? 'null')['nova_object.data'].topology['nova_object.data'].sockets).toBe(i.vcpus)
      expect(JSON.parse(keypairs ?? 'null')['nova_object.data'].objects[0]['nova_object.data'].user_id).toBe(i.user_id)
    }
    const spec = JSON.parse((s.nova_api.request_specs ?? [])[0]?.spec ?? 'null')
    expect(spec['nova_object.data'].instance_uuid).toBe((s.nova_api.request_specs ?? [])[0]?.instance_uuid)
  })

  it("keeps each host's NUMA usage and page pools equal to what its instances hold", () => {
    const s = generateCloud({...base, migrationsInProgress: 0}).snapshot
    const byNode = new Map<string, Map<number, {mem: number; small: number; pinned: number[]}>>()
    for (const i of s.nova.instances) {
      if (i.deleted !== 0 || i.node === null) continue
      const numa = valueOf(parseInstanceNumaTopology(i.extra?.numa_topology ?? null))
      for (const c of numa?.cells ?? []) {
        let cells = byNode.get(i.node)
        if (!cells) byNode.set(i.node, (cells = new Map()))
        const u = cells.get(c.id) ?? {mem: 0, small: 0, pinned: []}
        u.mem += c.memory
        if (!c.pagesize) u.small += c.memory * 256
        u.pinned.push(...c.cpu_pinning.values(), ...c.cpuset_reserved)
        cells.set(c.id, u)
      }
    }
    let checked = 0
    for (const cn of s.nova.compute_nodes) {
      for (const c of valueOf(parseHostNumaTopology(cn.numa_topology))?.cells ?? []) {
        const u = byNode.get(cn.hypervisor_hostname ?? '')?.get(c.id) ?? {mem: 0, small: 0, pinned: []}
        expect([c.memory_usage, c.mempages[0]?.used, [...c.pinned_cpus].sort((a, b) => a - b)]).toEqual([u.mem, u.small, u.pinned.sort((a, b) => a - b)])
        checked++
      }
    }
    expect(checked).toBe(s.nova.compute_nodes.length * 2)
  })

  it.each(FAULT_CODES.map((c) => [c]))('%s plants exactly that fault', (code: FaultCode) => {
    const {snapshot, planted} = generateCloud({...base, faults: {[code]: 1}})
    expect(planted.map((p) => p.code)).toEqual([code])
    const findings = runChecks(buildModel(snapshot)).findings
    expect(findings.some((f) => f.code === code)).toBe(true)
    for (const f of findings) expect([code, ...(planted[0].alsoExpected ?? [])]).toContain(f.code)
  })
})
