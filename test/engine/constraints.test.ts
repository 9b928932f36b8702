/**
 * numa_get_constraints as nova (Zed) answers it: topologies implied by resources:PCPU, the
 * HW_CPU_HYPERTHREADING trait, hw:pmem and realtime masks, and the requests nova-api refuses, with
 * nova's exception name and message. CPU sets are bounded by the flavor's vCPUs.
 */
import {describe, expect, it} from 'vitest'

import {instanceTopologyFor, NumaRequestError, parseCpuSpecBounded} from '../../src/lib/engine/numa.js'
import {CONSTRAINT_CASES} from './constraint-cases.js'

function engineAnswer(c: (typeof CONSTRAINT_CASES)[number]): unknown {
  try {
    const t = instanceTopologyFor(c.vcpus, c.memoryMb, c.extraSpecs, c.image ?? {})
    if (t === null) return {cells: null, emulatorThreadsIsolated: false}
    return {
      cells: t.cells.map((x) => ({cpuset: x.cpuset, pcpuset: x.pcpuset, memory: x.memory, pagesize: x.pagesize, policy: x.cpuPolicy, thread: x.threadPolicy})),
      emulatorThreadsIsolated: t.emulatorThreadsIsolated,
    }
  } catch (error) {
    if (error instanceof NumaRequestError) return {error: error.novaName, message: error.message}
    throw error
  }
}

describe('numa_get_constraints: nova answers', () => {
  it.each(CONSTRAINT_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const want = 'error' in c.expect ? c.expect : {cells: c.expect.cells, emulatorThreadsIsolated: c.expect.emulatorThreadsPolicy === 'isolate'}
    expect(engineAnswer(c)).toEqual(want)
  })

  it('covers topologies, refusals and each refusal kind at least once', () => {
    const errors = new Set(CONSTRAINT_CASES.flatMap((c) => ('error' in c.expect ? [c.expect.error] : [])))
    expect(CONSTRAINT_CASES.filter((c) => !('error' in c.expect)).length).toBeGreaterThanOrEqual(8)
    expect(errors.size).toBeGreaterThanOrEqual(20)
  })
})

describe('CPU set specs bounded by the vCPUs', () => {
  it.each([
    ['0-3', 4, [0, 1, 2, 3], null],
    ['0-99999999', 4, [0, 1, 2, 3], 4],
    ['1,5-99999999,^5-99999990', 4, [1], 99999991],
    ['0-99999999,^4-99999999', 4, [0, 1, 2, 3], null],
    [' 2 , ^1, 0-1 ', 4, [0, 2], null],
    ['', 4, [], null],
  ] as const)('%s within %d', (spec, bound, within, beyond) => {
    expect(parseCpuSpecBounded(spec, bound)).toEqual({within, beyond})
  })

  it.each([
    ['3-1', "Invalid range expression '3-1'"],
    ['a', "Invalid inclusion expression 'a'"],
    ['^x', "Invalid exclusion expression '^x'"],
    ['-1', "Invalid range expression '-1'"],
  ])('%s is refused as nova refuses it', (spec, message) => {
    expect(() => parseCpuSpecBounded(spec, 4)).toThrow(message)
  })
})
