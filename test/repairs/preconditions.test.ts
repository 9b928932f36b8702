/**
 * The preconditions of --apply (src/lib/repairs/preconditions.ts), pure: a plan from a snapshot
 * file, a plan touching a cell that could not be read, the blast-radius guard, and their order.
 */
import {describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {applyRefusals, guardRefusals} from '../../src/lib/repairs/preconditions.js'
import {leakySnapshot} from './leaky-cloud.js'

function leaky(live: number, leaked: number): Snapshot {
  const s = leakySnapshot(live, leaked, {seed: 77, hosts: 2})
  s.source = {kind: 'live', description: 'test'}
  return s
}

const codes = (errors: Array<{code?: string}>) => errors.map((e) => e.code)

describe('repair preconditions', () => {
  it('a live read of a sound cloud: nothing refuses', () => {
    const s = leaky(10, 2)
    const model = buildModel(s)
    const plan = planLeaks(model)
    expect(plan.steps.length).toBeGreaterThan(0)
    expect(applyRefusals(plan, {model, snapshot: s})).toEqual([])
  })

  it('a plan made from a snapshot file is never applied', () => {
    const s = leaky(10, 2)
    s.source = {kind: 'file', description: 'snap.json'}
    const model = buildModel(s)
    expect(codes(applyRefusals(planLeaks(model), {model, snapshot: s}))).toEqual(['RepairNeedsLiveSource'])
    // a dry run only notes the guards, which hold here
    expect(guardRefusals(planLeaks(model), {model, snapshot: s})).toEqual([])
  })

  it('the blast-radius guard refuses both --apply and (as a note) the dry run; the source comes first', () => {
    const s = leaky(2, 10)
    const model = buildModel(s)
    const plan = planLeaks(model)
    expect(codes(applyRefusals(plan, {model, snapshot: s, maxDelete: 5}))).toEqual(['BlastRadius'])
    expect(codes(guardRefusals(plan, {model, snapshot: s, maxDelete: 5}))).toEqual(['BlastRadius'])
    expect(applyRefusals(plan, {model, snapshot: s, maxDelete: 1000})).toEqual([])
    s.source = {kind: 'file', description: 'snap.json'}
    expect(codes(applyRefusals(plan, {model, snapshot: s, maxDelete: 5}))).toEqual(['RepairNeedsLiveSource', 'BlastRadius'])
  })

  it('a plan writing to a cell that could not be read is refused', () => {
    const s = leaky(10, 2)
    const model = buildModel(s)
    const plan = planLeaks(model)
    const cell = s.cells.find((c) => !c.is_cell0)!
    plan.db_order.push(`cell:${cell.uuid}`)
    Object.assign(cell, {status: 'unavailable', error: 'connection refused'})
    const [refusal] = applyRefusals(plan, {snapshot: s})
    expect(refusal?.code).toBe('CellUnavailable')
    expect(refusal?.message).toContain('connection refused')
  })

  it('undo plans have no model: only the source is checked', () => {
    const s = leaky(2, 10)
    const plan = planLeaks(buildModel(s))
    expect(applyRefusals(plan, {snapshot: null})).toEqual([])
  })
})
