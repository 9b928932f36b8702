import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {FAULT_CODES, generateCloud} from '../support/generator.js'

describe('audit on generated clouds (test/support/generator.ts)', () => {
  it('a clean generated cloud gives zero findings', () => {
    const {snapshot} = generateCloud({seed: 11, cells: 2, hostsPerCell: 12, migrationsInProgress: 3, completedMigrations: 3})
    const report = runChecks(buildModel(snapshot))
    expect(report.findings.map((f) => [f.code, f.message])).toEqual([])
  })

  it.each(FAULT_CODES.map((code) => ({code})))('planting $code is reported exactly, with its subject', ({code}) => {
    const {snapshot, planted} = generateCloud({seed: 5, hostsPerCell: 12, faults: {[code]: 1}})
    expect(planted.map((p) => p.code)).toEqual([code])
    const report = runChecks(buildModel(snapshot))
    const expected = [code, ...(planted[0].alsoExpected ?? [])].sort()
    expect(report.findings.map((f) => f.code).sort(), JSON.stringify(report.findings.map((f) => [f.code, f.message]))).toEqual(expected)
    const f = report.findings.find((x) => x.code === code)
    // Which of two instances "owns" an overlap or a PCPU drift is the planter's knowledge, not the audit's.
    const ownerless = code === 'pinning.overlap' || code === 'pinning.placement-drift'
    const want = Object.fromEntries(Object.entries(planted[0].subject).filter(([k, v]) => v !== undefined && !(ownerless && k === 'instance_uuid')))
    expect(f?.subject).toMatchObject(want)
  })
})
