import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
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
    expect(hit.some((f) => [f.subject.instance_uuid, f.subject.consumer_uuid, f.subject.provider_uuid, f.subject.host].some((k) => k !== undefined && keys.includes(k)))).toBe(true)
    for (const f of findings) expect([code, ...(p.alsoExpected ?? [])]).toContain(f.code)
  })

  it('plants several faults at once, each recorded', () => {
    const faults = {'allocation.missing': 2, 'cell.instance-duplicate': 1, 'provider.stale': 1, 'usage.negative-free': 1}
    const {snapshot, planted} = generateCloud({...base, faults})
    expect(planted.map((p) => p.code).sort()).toEqual(['allocation.missing', 'allocation.missing', 'cell.instance-duplicate', 'provider.stale', 'usage.negative-free'])
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
