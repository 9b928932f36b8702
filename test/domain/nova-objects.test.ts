import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {
  parseHostNumaTopology,
  parseInstanceFlavors,
  parseInstanceNumaTopology,
  parseStats,
  parseUnwrapped,
  pinnedHostCpus,
} from '../../src/lib/domain/nova-objects.js'

// Written by nova 26.2.2 itself (see shared/reference/blobs.md).
const blob = (name: string): string => readFileSync(new URL(`../fixtures/blobs/${name}.json`, import.meta.url), 'utf8')

describe('nova versioned-object readers', () => {
  it('reads a Zed host NUMATopology: cpuset, pcpuset, pinned_cpus, siblings, mempages', () => {
    const r = parseHostNumaTopology(blob('host-numa-topology'))
    expect(r.ok).toBe(true)
    if (!r.ok || !r.value) throw new Error('unreachable')
    expect(r.value.version).toBe('1.2')
    expect(r.value.cells.map((c) => [c.id, c.cpuset, c.pcpuset, c.pinned_cpus])).toEqual([
      [0, [0, 1, 2, 3], [4, 5, 6, 7], [4, 5]],
      [1, [8, 9, 10, 11], [12, 13, 14, 15], []],
    ])
    expect(r.value.cells[0].siblings).toEqual([
      [4, 5],
      [6, 7],
    ])
    expect(r.value.cells[0].mempages[0]).toEqual({size_kb: 4, total: 8388608, used: 0, reserved: 0})
    expect(r.value.cells[0].version).toBe('1.5')
  })

  it('treats cpuset as the dedicated set of a NUMACell older than 1.5 (no pcpuset yet)', () => {
    const old = JSON.stringify({
      'nova_object.name': 'NUMATopology',
      'nova_object.version': '1.2',
      'nova_object.data': {
        cells: [{'nova_object.version': '1.4', 'nova_object.data': {id: 0, cpuset: [0, 1, 2, 3], memory: 1024, pinned_cpus: [1], siblings: []}}],
      },
    })
    const r = parseHostNumaTopology(old)
    if (!r.ok || !r.value) throw new Error(JSON.stringify(r))
    expect(r.value.cells[0].pcpuset).toEqual([0, 1, 2, 3])
    expect(r.value.cells[0].version).toBe('1.4')
  })

  it('reads the pins of a dedicated instance: pCPUs 4 and 5', () => {
    const r = parseInstanceNumaTopology(blob('instance-numa-dedicated'))
    if (!r.ok || !r.value) throw new Error(JSON.stringify(r))
    const cell = r.value.cells[0]
    expect(cell.pcpuset).toEqual([0, 1])
    expect([...cell.cpu_pinning.entries()]).toEqual([
      [0, 4],
      [1, 5],
    ])
    expect(pinnedHostCpus(cell)).toEqual([4, 5])
  })

  it('counts emulator-thread reservations as pinned and moves pre-Ussuri dedicated cpuset to pcpuset', () => {
    const legacy = JSON.stringify({
      'nova_object.version': '1.3',
      'nova_object.data': {
        cells: [
          {'nova_object.data': {id: 1, cpuset: [0, 1], memory: 512, cpu_policy: 'dedicated', cpu_pinning_raw: {'0': 10, '1': 11}, cpuset_reserved: [12]}},
        ],
      },
    })
    const r = parseInstanceNumaTopology(legacy)
    if (!r.ok || !r.value) throw new Error(JSON.stringify(r))
    expect(r.value.cells[0].pcpuset).toEqual([0, 1])
    expect(r.value.cells[0].cpuset).toEqual([])
    expect([...pinnedHostCpus(r.value.cells[0])].sort((a, b) => a - b)).toEqual([10, 11, 12])
  })

  it('reads a shared instance with no pinning', () => {
    const r = parseInstanceNumaTopology(blob('instance-numa-shared'))
    if (!r.ok || !r.value) throw new Error(JSON.stringify(r))
    expect(r.value.cells[0].cpuset).toEqual([0, 1])
    expect(r.value.cells[0].cpu_pinning.size).toBe(0)
  })

  it('reads the instance flavor blob with extra specs', () => {
    const r = parseInstanceFlavors(blob('instance-flavor'))
    if (!r.ok || !r.value) throw new Error(JSON.stringify(r))
    expect(r.value.cur).toMatchObject({name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}})
    expect(r.value.old).toBeNull()
  })

  it('unwraps nested objects of a RequestSpec', () => {
    const r = parseUnwrapped(blob('request-spec'), 'request spec')
    if (!r.ok) throw new Error(r.error)
    const spec = r.value as {image: {properties: {hw_architecture: string}}; scheduler_hints: {group: string[]}}
    expect(spec.image.properties.hw_architecture).toBe('x86_64')
    expect(spec.scheduler_hints.group).toHaveLength(1)
  })

  it.each([
    ['truncated JSON', '{"nova_object.data": {"cells": [', /not valid JSON/],
    ['no cells', '{"nova_object.data": {}}', /no "cells"/],
    ['bad pinned_cpus', '{"nova_object.data": {"cells": [{"nova_object.data": {"id": 0, "cpuset": [0], "pinned_cpus": "0-3"}}]}}', /pinned_cpus is not a list/],
  ])('reports an unreadable host topology as data (%s), never throws', (_name, text, message) => {
    const r = parseHostNumaTopology(text)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(message)
  })

  it('reads NULL columns as absent and stats as strings', () => {
    expect(parseHostNumaTopology(null)).toEqual({ok: true, value: null})
    expect(parseInstanceFlavors(null)).toEqual({ok: true, value: null})
    expect(parseStats('{"io_workload": 2, "num_instances": "5"}')).toEqual({ok: true, value: {io_workload: '2', num_instances: '5'}})
    expect(parseStats('[1]').ok).toBe(false)
  })
})
