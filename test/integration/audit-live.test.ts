/**
 * Every generator fault switch, planted into one generated cloud seeded into MariaDB, found by the
 * built CLI reading the live databases (`cloudctl audit <check> --json --api-db … --placement-db …`).
 *
 * One cloud holds all the faults: the generator puts each on its own host and instance, so they do
 * not interact (test/checks/generated.test.ts plants them one at a time in-process). Each check's
 * report must then be exactly the planted faults of that check, each with its subject.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {FINDING_CODES} from '../../src/lib/checks/index.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {FAULT_CODES, generateCloud, type PlantedFault} from '../support/generator.js'
import {type AuditRun, auditLive, brief, nowSql, subjectLine} from './audit-live-support.js'

const CHECKS = ['leaks', 'providers', 'cells', 'pinning', 'usage', 'aggregates'] as const

let cloud: TestCloud | undefined
let planted: PlantedFault[] = []
const runs = new Map<string, AuditRun>()

beforeAll(async () => {
  const generated = generateCloud({seed: 7, cells: 2, hostsPerCell: 24, now: nowSql(), faults: Object.fromEntries(FAULT_CODES.map((c) => [c, 1]))})
  planted = generated.planted
  cloud = await createTestCloud('audit_live', {cells: ['cell1', 'cell2']})
  await seedSnapshot(generated.snapshot, cloud)
  const c = cloud
  await Promise.all(CHECKS.map(async (check) => runs.set(check, await auditLive(c, check))))
})

afterAll(async () => {
  await cloud?.drop()
})

/** Which of two instances "owns" an overlap or a PCPU drift is the planter's knowledge, not the audit's. */
const OWNERLESS = new Set(['pinning.overlap', 'pinning.placement-drift'])

function wantedSubject(p: PlantedFault): Record<string, unknown> {
  return Object.fromEntries(Object.entries(p.subject).filter(([k, v]) => v !== undefined && !(OWNERLESS.has(p.code) && k === 'instance_uuid')))
}

describe('cloudctl audit <check> on live databases, one generated cloud with every fault planted', () => {
  it('plants every generator fault once', () => {
    expect(planted.map((p) => p.code).sort()).toEqual([...FAULT_CODES].sort())
  })

  it.each(CHECKS.map((check) => ({check})))('audit $check reports exactly the faults planted for it, and exits 3', ({check}) => {
    const run = runs.get(check) as AuditRun
    expect(run.exitCode).toBe(3)
    expect(run.doc.checks).toContain(check)
    const expected = planted.flatMap((p) => [p.code, ...(p.alsoExpected ?? [])]).filter((code) => FINDING_CODES[code].check === check)
    expect(run.doc.findings.map((f) => f.code).sort(), run.doc.findings.map(brief).join('\n')).toEqual(expected.sort())
    expect(run.doc.findings.every((f) => f.check === check)).toBe(true)
    expect(run.doc.counts.total).toBe(expected.length)
    expect(run.doc.unavailable_cells).toEqual([])
  })

  it.each(FAULT_CODES.map((code) => ({code})))('$code: reported by its check with the planted subject', ({code}) => {
    const p = planted.find((x) => x.code === code) as PlantedFault
    const run = runs.get(FINDING_CODES[code].check) as AuditRun
    // provider.stale brings an evacuation-leftover of its own (alsoExpected): count both, match ours.
    const times = planted.filter((x) => x.code === code || x.alsoExpected?.includes(code)).length
    const found = run.doc.findings.filter((f) => f.code === code)
    expect(found, `${code} ${subjectLine(p.subject)}\n${found.map(brief).join('\n')}`).toHaveLength(times)
    const mine = found.filter((f) => Object.entries(wantedSubject(p)).every(([k, v]) => f.subject[k as keyof typeof f.subject] === v))
    expect(mine, `${subjectLine(p.subject)} among\n${found.map(brief).join('\n')}`).toHaveLength(1)
    expect(mine[0].severity).toBe(code === 'usage.negative-free' ? 'info' : FINDING_CODES[code].severity)
    expect(mine[0].message.length).toBeGreaterThan(0)
    expect(Object.keys(mine[0].evidence).length).toBeGreaterThan(0)
  })
})
