/**
 * NUMA fitting as nova/virt/hardware.py (Zed) does it: numa_get_constraints (the guest topology a
 * flavor asks for), numa_fit_instance_to_host / _numa_fit_instance_cell / _pack_instance_onto_cores
 * (dedicated CPUs, thread policies and siblings, emulator threads, memory and page sizes, cell
 * order), and the host usage after a claim.
 */
import {describe, expect, it} from 'vitest'

import type {HostNumaTopology} from '../../src/lib/domain/nova-objects.js'
import {consumeNuma, fitInstanceToHost, instanceTopologyFor, NumaRequestError, type InstanceTopologyRequest} from '../../src/lib/engine/numa.js'
import {numaCell, topology} from '../support/builders.js'

const spread = {limits: {cpu: 16, ram: 1.5}, packing: false}

function fit(
  host: HostNumaTopology,
  vcpus: number,
  memoryMb: number,
  specs: Record<string, string>,
  opts: {limits?: {cpu: number; ram: number} | null; packing?: boolean} = {},
) {
  const req = instanceTopologyFor(vcpus, memoryMb, specs, {}) as InstanceTopologyRequest
  expect(req).not.toBeNull()
  return fitInstanceToHost(host, req, {...spread, ...opts})
}

/** host cell id -> pCPUs the guest's vCPUs are pinned to (in vCPU order), + reserved */
function pins(r: ReturnType<typeof fit>): Array<{cell: number; pcpus: number[]; reserved: number[]}> | string {
  if (!r.ok) return r.reason
  return r.cells.map((c) => ({cell: c.id, pcpus: c.pinning.map(([, p]) => p), reserved: c.cpusetReserved}))
}

describe('numa_get_constraints', () => {
  it.each([
    ['no NUMA request', {}, null],
    ['dedicated: one node, every vCPU dedicated', {'hw:cpu_policy': 'dedicated'}, [{pcpuset: [0, 1, 2, 3], cpuset: [], memory: 4096}]],
    [
      'shared with two nodes',
      {'hw:numa_nodes': '2'},
      [
        {pcpuset: [], cpuset: [0, 1], memory: 2048},
        {pcpuset: [], cpuset: [2, 3], memory: 2048},
      ],
    ],
    ['mixed with a dedicated mask', {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '2-3'}, [{pcpuset: [2, 3], cpuset: [0, 1], memory: 4096}]],
    ['mixed with an exclusion mask', {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}, [{pcpuset: [1, 2, 3], cpuset: [0], memory: 4096}]],
    ['page size alone makes a topology', {'hw:mem_page_size': 'large'}, [{pcpuset: [], cpuset: [0, 1, 2, 3], memory: 4096}]],
    [
      'manual cells',
      {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0', 'hw:numa_mem.0': '1024', 'hw:numa_cpus.1': '1-3', 'hw:numa_mem.1': '3072'},
      [
        {pcpuset: [], cpuset: [0], memory: 1024},
        {pcpuset: [], cpuset: [1, 2, 3], memory: 3072},
      ],
    ],
  ] as const)('%s', (_name, specs, cells) => {
    const t = instanceTopologyFor(4, 4096, {...specs}, {})
    expect(t === null ? null : t.cells.map((c) => ({pcpuset: c.pcpuset, cpuset: c.cpuset, memory: c.memory}))).toEqual(cells)
  })

  it('emulator threads isolation with dedicated CPUs', () => {
    expect(instanceTopologyFor(2, 1024, {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'}, {})?.emulatorThreadsIsolated).toBe(true)
  })

  it.each([
    ['vCPUs not divisible by the node count', 3, 4096, {'hw:numa_nodes': '2'}],
    ['memory not divisible by the node count', 4, 4097, {'hw:numa_nodes': '2'}],
    ['zero nodes', 4, 4096, {'hw:numa_nodes': '0'}],
    ['mixed without a mask', 4, 4096, {'hw:cpu_policy': 'mixed'}],
    ['mixed with every vCPU dedicated', 2, 4096, {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0-1'}],
    ['a dedicated mask without the mixed policy', 2, 4096, {'hw:cpu_policy': 'dedicated', 'hw:cpu_dedicated_mask': '1'}],
    ['emulator threads isolation for a shared guest', 2, 4096, {'hw:numa_nodes': '1', 'hw:emulator_threads_policy': 'isolate'}],
    ['a thread policy for a shared guest', 2, 4096, {'hw:cpu_thread_policy': 'prefer'}],
  ] as const)('rejects %s', (_name, vcpus, mem, specs) => {
    expect(() => instanceTopologyFor(vcpus, mem, {...specs}, {})).toThrow(NumaRequestError)
  })
})

describe('dedicated CPUs and thread policies (_pack_instance_onto_cores)', () => {
  // one cell, 4 pCPUs as 2 cores x 2 threads
  const ht = (pinned: number[] = [], over: Partial<Parameters<typeof numaCell>[0]> = {}) =>
    topology(
      numaCell({
        id: 0,
        pcpuset: [0, 1, 2, 3],
        siblings: [
          [0, 1],
          [2, 3],
        ],
        pinned,
        ...over,
      }),
    )
  const noHt = (pinned: number[] = []) => topology(numaCell({id: 0, pcpuset: [0, 1, 2, 3], siblings: [[0], [1], [2], [3]], pinned}))
  const ded = (extra: Record<string, string> = {}) => ({'hw:cpu_policy': 'dedicated', ...extra})

  it.each([
    // name, host, vcpus, extra specs, expected pins (or failure text)
    ['prefer (default): packs vCPUs onto thread siblings', ht(), 2, {}, [{cell: 0, pcpus: [0, 1], reserved: []}]],
    ['prefer: a half-used core is skipped for whole free ones', ht([0]), 2, {}, [{cell: 0, pcpus: [2, 3], reserved: []}]],
    ['prefer: falls back to single threads when no core has 2 free', ht([0, 2]), 2, {}, [{cell: 0, pcpus: [1, 3], reserved: []}]],
    ['prefer: 3 vCPUs over 3 free threads of 2 cores', ht([0]), 3, {}, [{cell: 0, pcpus: [1, 2, 3], reserved: []}]],
    ['all pCPUs pinned', ht([0, 1, 2, 3]), 1, {}, /needs 1 free pCPUs, has 0/],
    ['require: sibling pairs', ht(), 2, {'hw:cpu_thread_policy': 'require'}, [{cell: 0, pcpus: [0, 1], reserved: []}]],
    ['require: no whole free core left', ht([0, 2]), 2, {'hw:cpu_thread_policy': 'require'}, /cannot pin 2 vCPU/],
    ['require on a host without hyperthreads', noHt(), 2, {'hw:cpu_thread_policy': 'require'}, /no hyperthreads/],
    // isolate on an SMT host is refused unless cpu_dedicated_set == cpu_shared_set (legacy vcpu_pin_set)
    ['isolate on an SMT host with separate dedicated set', ht(), 1, {'hw:cpu_thread_policy': 'isolate'}, /isolate on a host with hyperthreads/],
    [
      'isolate with cpuset == pcpuset: one vCPU per whole core',
      ht([], {cpuset: [0, 1, 2, 3]}),
      2,
      {'hw:cpu_thread_policy': 'isolate'},
      [{cell: 0, pcpus: [0, 2], reserved: []}],
    ],
    ['isolate: only one whole free core for 2 vCPUs', ht([1], {cpuset: [0, 1, 2, 3]}), 2, {'hw:cpu_thread_policy': 'isolate'}, /cannot pin 2 vCPU/],
    ['isolate without hyperthreads', noHt(), 2, {'hw:cpu_thread_policy': 'isolate'}, [{cell: 0, pcpus: [0, 1], reserved: []}]],
    // emulator threads: one more pCPU, taken from what the vCPUs left
    ['emulator_threads isolate: reserves a further pCPU', ht(), 2, {'hw:emulator_threads_policy': 'isolate'}, [{cell: 0, pcpus: [0, 1], reserved: [2]}]],
    ['emulator_threads isolate: 3 + 1 > 3 free', ht([0]), 3, {'hw:emulator_threads_policy': 'isolate'}, /needs 4 free pCPUs, has 3/],
  ] as const)('%s', (_name, host, vcpus, extra, expected) => {
    const got = pins(fit(host, vcpus, 1024, ded(extra)))
    if (expected instanceof RegExp) expect(got).toMatch(expected)
    else expect(got).toEqual(expected)
  })

  it('more dedicated vCPUs than the cell has in cpu_dedicated_set', () => {
    expect(pins(fit(ht(), 5, 1024, ded()))).toMatch(/needs 5 dedicated pCPUs, cell has 4/)
  })

  it('a host cell without siblings information cannot be packed (nova raises ValueError)', () => {
    expect(pins(fit(topology(numaCell({id: 0, pcpuset: [0, 1], siblings: []})), 1, 1024, ded()))).toMatch(/no siblings information/)
  })
})

describe('memory and shared CPUs per cell (_numa_fit_instance_cell)', () => {
  it.each([
    // name, cell, vcpus, memory, specs, fits?
    ['shared: fits in cell memory', {id: 0, cpuset: [0, 1, 2, 3], memory: 4096}, 2, 4096, {'hw:numa_nodes': '1'}, true],
    ['shared: more than the cell has in small pages', {id: 0, cpuset: [0, 1, 2, 3], memory: 4096}, 2, 4097, {'hw:numa_nodes': '1'}, false],
    // limits: cpu_usage + vcpus <= len(cpuset) x cpu ratio, memory_usage + mem <= memory x ram ratio
    ['shared: CPU limit 4 x 16 = 64', {id: 0, cpuset: [0, 1, 2, 3], cpuUsage: 62, memory: 8192}, 2, 1024, {'hw:numa_nodes': '1'}, true],
    ['shared: CPU limit exceeded', {id: 0, cpuset: [0, 1, 2, 3], cpuUsage: 63, memory: 8192}, 2, 1024, {'hw:numa_nodes': '1'}, false],
    ['shared: RAM limit 8192 x 1.5 = 12288', {id: 0, cpuset: [0, 1], memoryUsage: 11264, memory: 8192}, 1, 1024, {'hw:numa_nodes': '1'}, true],
    ['shared: RAM limit exceeded', {id: 0, cpuset: [0, 1], memoryUsage: 11265, memory: 8192}, 1, 1024, {'hw:numa_nodes': '1'}, false],
    ['shared: more vCPUs than the cell has CPUs', {id: 0, cpuset: [0, 1], memory: 8192}, 3, 1024, {'hw:numa_nodes': '1'}, false],
    // dedicated guests: no overcommit, memory must be free in the cell
    [
      'dedicated: memory free in the cell',
      {id: 0, pcpuset: [0, 1], siblings: [[0], [1]], memory: 8192, memoryUsage: 7168},
      1,
      1024,
      {'hw:cpu_policy': 'dedicated'},
      true,
    ],
    [
      'dedicated: memory used up',
      {id: 0, pcpuset: [0, 1], siblings: [[0], [1]], memory: 8192, memoryUsage: 7169},
      1,
      1024,
      {'hw:cpu_policy': 'dedicated'},
      false,
    ],
    // page sizes
    [
      'large pages available',
      {
        id: 0,
        cpuset: [0, 1],
        memory: 8192,
        pages: [
          {size_kb: 4, total: 1048576},
          {size_kb: 2048, total: 1024},
        ],
      },
      1,
      2048,
      {'hw:mem_page_size': 'large'},
      true,
    ],
    [
      'large pages used up',
      {
        id: 0,
        cpuset: [0, 1],
        memory: 8192,
        pages: [
          {size_kb: 4, total: 1048576},
          {size_kb: 2048, total: 1024, used: 1023},
        ],
      },
      1,
      2048,
      {'hw:mem_page_size': 'large'},
      false,
    ],
    ['no large pages on the host', {id: 0, cpuset: [0, 1], memory: 8192}, 1, 2048, {'hw:mem_page_size': 'large'}, false],
    [
      'explicit page size in KiB',
      {
        id: 0,
        cpuset: [0, 1],
        memory: 8192,
        pages: [
          {size_kb: 4, total: 1048576},
          {size_kb: 2048, total: 1024},
        ],
      },
      1,
      2048,
      {'hw:mem_page_size': '2048'},
      true,
    ],
    [
      'small pages count free pages',
      {id: 0, cpuset: [0, 1], memory: 8192, pages: [{size_kb: 4, total: 2097152, used: 2097000}]},
      1,
      1024,
      {'hw:mem_page_size': 'small'},
      false,
    ],
  ] as const)('%s', (_name, cell, vcpus, mem, specs, ok) => {
    expect(fit(topology(numaCell({...cell})), vcpus, mem, {...specs}).ok).toBe(ok)
  })
})

describe('multi-node guests and cell order (numa_fit_instance_to_host)', () => {
  const cells = (a: Partial<Parameters<typeof numaCell>[0]>, b: Partial<Parameters<typeof numaCell>[0]>) =>
    topology(
      numaCell({id: 0, cpuset: [0, 1, 2, 3], pcpuset: [4, 5, 6, 7], siblings: [[4], [5], [6], [7]], ...a}),
      numaCell({id: 1, cpuset: [8, 9, 10, 11], pcpuset: [12, 13, 14, 15], siblings: [[12], [13], [14], [15]], ...b}),
    )

  it('hw:numa_nodes=2 puts one guest cell on each host cell', () => {
    const r = fit(cells({}, {}), 4, 4096, {'hw:numa_nodes': '2'})
    expect(r.ok && r.cells.map((c) => [c.id, c.cpuset, c.memory])).toEqual([
      [0, [0, 1], 2048],
      [1, [2, 3], 2048],
    ])
  })

  it('more guest nodes than host cells', () => {
    expect(fit(topology(numaCell({id: 0, cpuset: [0, 1]})), 2, 2048, {'hw:numa_nodes': '2'})).toEqual({
      ok: false,
      reason: 'instance wants 2 NUMA nodes, host has 1',
    })
  })

  it('dedicated multi-node: both cells need their share of free pCPUs', () => {
    expect(pins(fit(cells({}, {pinned: [12, 13, 14]}), 4, 4096, {'hw:cpu_policy': 'dedicated', 'hw:numa_nodes': '2'}))).toMatch(/needs 2 free pCPUs, has 1/)
    expect(pins(fit(cells({}, {pinned: [12, 13]}), 4, 4096, {'hw:cpu_policy': 'dedicated', 'hw:numa_nodes': '2'}))).toEqual([
      {cell: 0, pcpus: [4, 5], reserved: []},
      {cell: 1, pcpus: [14, 15], reserved: []},
    ])
  })

  it('a one-node dedicated guest goes to the cell with most free pCPUs (spread) or fewest (pack)', () => {
    const host = cells({pinned: [4]}, {})
    expect(fit(host, 1, 1024, {'hw:cpu_policy': 'dedicated'}).ok && fit(host, 1, 1024, {'hw:cpu_policy': 'dedicated'})).toMatchObject({cells: [{id: 1}]})
    expect(fit(host, 1, 1024, {'hw:cpu_policy': 'dedicated'}, {packing: true})).toMatchObject({cells: [{id: 0}]})
  })

  it('a one-node shared guest goes to the least used cell (spread) or the most used (pack)', () => {
    const host = cells({cpuUsage: 3}, {cpuUsage: 1})
    expect(fit(host, 1, 1024, {'hw:numa_nodes': '1'})).toMatchObject({cells: [{id: 1}]})
    expect(fit(host, 1, 1024, {'hw:numa_nodes': '1'}, {packing: true})).toMatchObject({cells: [{id: 0}]})
  })

  it('tries the next cell when the preferred one does not fit', () => {
    // cell 1 is preferred (less used) but over its RAM limit: 24000 + 1024 > 16384 x 1.5
    const host = cells({cpuUsage: 3}, {cpuUsage: 1, memoryUsage: 24000})
    expect(fit(host, 1, 1024, {'hw:numa_nodes': '1'})).toMatchObject({cells: [{id: 0}]})
  })
})

describe('usage after a claim (numa_usage_from_instance_numa)', () => {
  it('adds the pinned pCPUs, reserved emulator pCPU, memory and small pages', () => {
    const host = topology(
      numaCell({
        id: 0,
        pcpuset: [0, 1, 2, 3],
        siblings: [
          [0, 1],
          [2, 3],
        ],
        memory: 4096,
      }),
    )
    const r = fit(host, 2, 1024, {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'})
    if (!r.ok) throw new Error(r.reason)
    const after = consumeNuma(host, r.cells)
    expect(after.cells[0]).toMatchObject({pinned_cpus: [0, 1, 2], memory_usage: 1024, cpu_usage: 0})
    expect(after.cells[0]?.mempages[0]?.used).toBe(262144)
    // the snapshot's own topology is untouched
    expect(host.cells[0]?.pinned_cpus).toEqual([])
    // the next identical guest no longer fits: 1 free pCPU for 2 + 1
    expect(
      fitInstanceToHost(
        after,
        instanceTopologyFor(2, 1024, {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'}, {}) as InstanceTopologyRequest,
        spread,
      ).ok,
    ).toBe(false)
  })

  it('shared guests count CPU usage, not pins', () => {
    const host = topology(numaCell({id: 0, cpuset: [0, 1, 2, 3]}))
    const r = fit(host, 2, 1024, {'hw:numa_nodes': '1'})
    if (!r.ok) throw new Error(r.reason)
    expect(consumeNuma(host, r.cells).cells[0]).toMatchObject({pinned_cpus: [], cpu_usage: 2, memory_usage: 1024})
  })
})
