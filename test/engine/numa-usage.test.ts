/**
 * numa_usage_from_instance_numa as nova (Zed) applies a claim: an isolate guest takes the thread
 * siblings of its pCPUs too (NUMACell.pin_cpus_with_siblings), and pinning a CPU that is not free
 * or not dedicated raises CPUPinningInvalid / CPUPinningUnknown, which the scheduler's
 * consume_from_request swallows after the plain counters were already consumed.
 */
import {describe, expect, it} from 'vitest'

import {consumeNuma, CpuPinningError, fitInstanceToHost, instanceTopologyFor, type FittedCell, type InstanceTopologyRequest} from '../../src/lib/engine/numa.js'
import {consumeHost} from '../../src/lib/engine/pipeline.js'
import {hostState, numaCell, requestSpec, topology} from '../support/builders.js'

function guestCell(over: Partial<FittedCell>): FittedCell {
  return {
    id: 0,
    cpuset: [],
    pcpuset: [0, 1],
    memory: 1024,
    pagesize: null,
    cpuPolicy: 'dedicated',
    pinning: [
      [0, 0],
      [1, 1],
    ],
    cpusetReserved: [],
    threadPolicy: null,
    ...over,
  }
}

const ht = () =>
  topology(
    numaCell({
      id: 0,
      pcpuset: [0, 1, 2, 3],
      siblings: [
        [0, 2],
        [1, 3],
      ],
      memory: 8192,
    }),
  )

describe('pinned_cpus after a claim', () => {
  it.each([
    ['prefer pins only the chosen pCPUs', {}, [0, 1]],
    ['isolate pins their siblings too', {threadPolicy: 'isolate'}, [0, 1, 2, 3]],
    ['isolate with one vCPU takes the whole core', {pcpuset: [0], pinning: [[0, 1]], threadPolicy: 'isolate'}, [1, 3]],
    [
      'a mixed isolate guest: only the dedicated vCPUs and their siblings',
      {cpuPolicy: 'mixed', cpuset: [1], pcpuset: [0], pinning: [[0, 0]], threadPolicy: 'isolate'},
      [0, 2],
    ],
    [
      'the reserved emulator pCPU is pinned with its sibling under isolate',
      {pcpuset: [0], pinning: [[0, 0]], cpusetReserved: [1], threadPolicy: 'isolate'},
      [0, 1, 2, 3],
    ],
  ] as const)('%s', (_name, over, pinned) => {
    expect(consumeNuma(ht(), [guestCell(over as Partial<FittedCell>)]).cells[0]?.pinned_cpus).toEqual(pinned)
  })

  it('on a host on the old vcpu_pin_set (pcpuset == cpuset) isolate also takes the siblings', () => {
    const host = topology(
      numaCell({
        id: 0,
        cpuset: [0, 1, 2, 3],
        pcpuset: [0, 1, 2, 3],
        siblings: [
          [0, 2],
          [1, 3],
        ],
        memory: 8192,
      }),
    )
    expect(consumeNuma(host, [guestCell({pcpuset: [0], pinning: [[0, 0]], threadPolicy: 'isolate'})]).cells[0]?.pinned_cpus).toEqual([0, 2])
  })

  it('an isolate guest leaves no half-free core: the next guests fit as nova counts them', () => {
    // 4 cores x 2 threads; two 2-vCPU isolate guests take all 4 cores, a third does not fit
    const host = topology(
      numaCell({
        id: 0,
        cpuset: [0, 1, 2, 3, 4, 5, 6, 7],
        pcpuset: [0, 1, 2, 3, 4, 5, 6, 7],
        siblings: [
          [0, 4],
          [1, 5],
          [2, 6],
          [3, 7],
        ],
        memory: 16384,
      }),
    )
    const req = instanceTopologyFor(2, 1024, {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'isolate'}, {}) as InstanceTopologyRequest
    const opts = {limits: {cpu: 16, ram: 1.5}, packing: false}
    let cur = host
    let placed = 0
    for (let i = 0; i < 4; i++) {
      const fit = fitInstanceToHost(cur, req, opts)
      if (!fit.ok) break
      cur = consumeNuma(cur, fit.cells)
      placed++
    }
    expect(placed).toBe(2)
    expect(cur.cells[0]?.pinned_cpus).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })
})

describe('pinning conflicts raise as nova raises', () => {
  it.each([
    ['a pCPU already pinned', {pinned: [1]}, {}, 'CPUPinningInvalid', 'CPU set to pin [0, 1] must be a subset of free CPU set [0, 2, 3]'],
    [
      'a sibling already pinned under isolate',
      {pinned: [2]},
      {threadPolicy: 'isolate'},
      'CPUPinningInvalid',
      'CPU set to pin [0, 1, 2, 3] must be a subset of free CPU set [0, 1, 3]',
    ],
    [
      'a CPU outside cpu_dedicated_set',
      {},
      {
        pinning: [
          [0, 0],
          [1, 7],
        ],
      },
      'CPUPinningUnknown',
      'CPU set to pin [0, 7] must be a subset of known CPU set [0, 1, 2, 3]',
    ],
  ] as const)('%s', (_name, cellOver, guestOver, novaName, message) => {
    const host = topology(
      numaCell({
        id: 0,
        pcpuset: [0, 1, 2, 3],
        siblings: [
          [0, 2],
          [1, 3],
        ],
        memory: 8192,
        ...cellOver,
      }),
    )
    let got: unknown = null
    try {
      consumeNuma(host, [guestCell(guestOver as Partial<FittedCell>)])
    } catch (error) {
      got = error
    }
    expect(got).toBeInstanceOf(CpuPinningError)
    expect({name: (got as CpuPinningError).novaName, message: (got as CpuPinningError).message}).toEqual({name: novaName, message})
  })

  it('consume_from_request keeps RAM, disk, vCPU and instance counts consumed, skips NUMA and io_ops', () => {
    const numa = topology(
      numaCell({
        id: 0,
        pcpuset: [0, 1, 2, 3],
        siblings: [
          [0, 2],
          [1, 3],
        ],
        memory: 8192,
        pinned: [1],
      }),
    )
    const hs = hostState({numa})
    const next = consumeHost(hs, requestSpec(), [guestCell({})], 'i-1')
    expect({
      ram: hs.freeRamMb - next.freeRamMb,
      vcpus: next.vcpusUsed - hs.vcpusUsed,
      instances: next.numInstances - hs.numInstances,
      ioOps: next.numIoOps - hs.numIoOps,
      pinned: next.numa?.cells[0]?.pinned_cpus,
    }).toEqual({ram: 2048, vcpus: 2, instances: 1, ioOps: 0, pinned: [1]})
  })
})
