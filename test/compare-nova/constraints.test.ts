/**
 * The expected answers of test/engine/constraints.test.ts are nova's: every case of
 * test/engine/constraint-cases.ts is asked of the real hardware.numa_get_constraints (python3-nova,
 * Zed), topology or exception name and message.
 */
import {describe, expect, it} from 'vitest'

import {CONSTRAINT_CASES} from '../engine/constraint-cases.js'
import {COMPARE, runNova} from './driver.js'

describe.skipIf(!COMPARE)('compare with nova: numa_get_constraints on the engine table', () => {
  it("each expected answer is nova's own", () => {
    const cases = CONSTRAINT_CASES.filter((c) => !c.novaTooLarge)
    const nova = runNova<unknown[]>({
      mode: 'constraints',
      cases: cases.map((c) => ({flavor: {vcpus: c.vcpus, memory_mb: c.memoryMb, extra_specs: c.extraSpecs}, image_properties: c.image ?? {}})),
    })
    expect(cases.length).toBeGreaterThan(30)
    cases.forEach((c, i) => expect({name: c.name, answer: nova[i]}).toEqual({name: c.name, answer: c.expect}))
  }, 120_000)
})
