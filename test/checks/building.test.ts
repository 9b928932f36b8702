/**
 * Instances being built (issue 25 item 1): an instance nova-compute has not claimed on a host holds
 * the scheduler's allocations legitimately. One case per window of nova's boot flow (conductor
 * schedule_and_build_instances, compute _do_build_and_run_instance / instance_claim, a reschedule,
 * an unshelve), each with hand-built rows; and the states outside the rule, which stay judged.
 * test/adversarial/building.test.ts holds the rule against rows nova itself wrote at those windows.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Instance, Snapshot} from '../../src/lib/domain/snapshot.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {writeSteps} from '../../src/lib/repairs/plan.js'
import {addAllocations} from '../repairs/faults.js'
import {CloudBuilder} from '../support/builders.js'

interface Window {
  vm_state: string
  task_state: string | null
  host: string | null
  /** Where the scheduler's allocations are: the instance's own cmp1 or the alternate cmp2. */
  on: 'cmp1' | 'cmp2' | 'none'
  mapping?: 'cell' | 'null'
  buildRequest?: boolean
  /** Allocated amounts off by one VCPU (what heal would "correct"). */
  offByOne?: boolean
}

function cloud(w: Window): {s: Snapshot; uuid: string} {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  for (const host of ['cmp1', 'cmp2']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  const inst = b.addInstance('cmp1', 'm1.small').row
  if (w.mapping === 'null') b.instance(inst.uuid).mapping.cell_id = null
  const s = b.build()
  const row = s.nova.instances.find((i) => i.uuid === inst.uuid) as Instance
  Object.assign(row, {vm_state: w.vm_state, task_state: w.task_state, host: w.host, node: w.host, launched_at: null})
  const mine = s.placement.allocations.filter((a) => a.consumer_id === inst.uuid)
  s.placement.allocations = s.placement.allocations.filter((a) => a.consumer_id !== inst.uuid)
  if (w.on !== 'none') {
    const amounts = Object.fromEntries(mine.map((a) => [a.resource_class_id, a.used + (w.offByOne && a.resource_class_id === 0 ? 1 : 0)]))
    addAllocations(s, inst.uuid, w.on, amounts)
  } else s.placement.consumers = s.placement.consumers.filter((c) => c.uuid !== inst.uuid)
  if (w.buildRequest) s.nova_api.build_requests.push({id: 1, instance_uuid: inst.uuid, project_id: row.project_id ?? 'p1', created_at: row.created_at})
  return {s, uuid: inst.uuid}
}

const leakCodes = (s: Snapshot, uuid: string) =>
  runChecks(buildModel(s), {checks: ['leaks']})
    .findings.filter((f) => f.subject.consumer_uuid === uuid || f.subject.instance_uuid === uuid)
    .map((f) => f.code)

const planned = (s: Snapshot) => writeSteps(planLeaks(buildModel(s), {heal: true})).length + writeSteps(planLeaks(buildModel(s))).length

describe('instances being built hold the scheduler allocations legitimately', () => {
  const windows: Array<[string, Window]> = [
    [
      'phase 2: created in the cell by the conductor, mapping without cell, build request there',
      {vm_state: 'building', task_state: 'scheduling', host: null, on: 'cmp1', mapping: 'null', buildRequest: true},
    ],
    ['phase 3: mapped, queued behind max_concurrent_builds (task scheduling)', {vm_state: 'building', task_state: 'scheduling', host: null, on: 'cmp1'}],
    ['phase 3: nova-compute saved task None and waits for the claim', {vm_state: 'building', task_state: null, host: null, on: 'cmp1'}],
    ['rescheduled: host cleared, allocations moved to the alternate host', {vm_state: 'building', task_state: 'scheduling', host: null, on: 'cmp2'}],
    ['claim under way: host set, task None, allocations on its own node', {vm_state: 'building', task_state: null, host: 'cmp1', on: 'cmp1'}],
    ['building with a host and the allocations on another node', {vm_state: 'building', task_state: 'spawning', host: 'cmp1', on: 'cmp2'}],
    ['building with a host and amounts unlike the flavor', {vm_state: 'building', task_state: 'networking', host: 'cmp1', on: 'cmp1', offByOne: true}],
    ['building with a host and no allocation', {vm_state: 'building', task_state: 'block_device_mapping', host: 'cmp1', on: 'none'}],
    [
      'unshelve of an offloaded server: no host, task spawning, the destination allocations',
      {vm_state: 'shelved_offloaded', task_state: 'spawning', host: null, on: 'cmp2'},
    ],
    ['unshelve still in the conductor: no host, task unshelving', {vm_state: 'shelved_offloaded', task_state: 'unshelving', host: null, on: 'cmp2'}],
    ['an active server with no host while a task runs (a rebuild on a cleared host)', {vm_state: 'active', task_state: 'rebuilding', host: null, on: 'cmp1'}],
  ]
  for (const [name, w] of windows) {
    it(`${name}: no leak finding, nothing planned with or without --heal`, () => {
      const {s, uuid} = cloud(w)
      expect(leakCodes(s, uuid)).toEqual([])
      expect(planned(s)).toBe(0)
    })
  }
})

describe('outside the rule the allocations stay judged', () => {
  const judged: Array<[string, Window, string]> = [
    [
      'an ERROR instance with no host and no task (a build nova-compute put in ERROR at start)',
      {vm_state: 'error', task_state: null, host: null, on: 'cmp1'},
      'allocation.wrong-provider',
    ],
    [
      'an offloaded server with no task still holding allocations',
      {vm_state: 'shelved_offloaded', task_state: null, host: null, on: 'cmp2'},
      'allocation.wrong-provider',
    ],
    ['an active server on cmp1 with its allocations on cmp2', {vm_state: 'active', task_state: null, host: 'cmp1', on: 'cmp2'}, 'allocation.wrong-provider'],
    [
      'an active server with amounts unlike the flavor',
      {vm_state: 'active', task_state: null, host: 'cmp1', on: 'cmp1', offByOne: true},
      'allocation.amount-mismatch',
    ],
    ['an active server with no allocation', {vm_state: 'active', task_state: null, host: 'cmp1', on: 'none'}, 'allocation.missing'],
  ]
  for (const [name, w, code] of judged) {
    it(`${name}: ${code}`, () => {
      const {s, uuid} = cloud(w)
      expect(leakCodes(s, uuid)).toEqual([code])
    })
  }
})

describe('phase 2 in the cell checks: the conductor maps the instance and deletes its build request next', () => {
  const cellCodes = (s: Snapshot, uuid: string) =>
    runChecks(buildModel(s), {checks: ['cells']})
      .findings.filter((f) => f.subject.instance_uuid === uuid)
      .map((f) => f.code)
      .sort()

  it('building, mapping without cell, build request there: no cell finding', () => {
    const {s, uuid} = cloud({vm_state: 'building', task_state: 'scheduling', host: null, on: 'cmp1', mapping: 'null', buildRequest: true})
    expect(cellCodes(s, uuid)).toEqual([])
  })

  it('the conductor gone on (build request deleted) but the mapping left without cell: instance-mapped-wrong-cell', () => {
    const {s, uuid} = cloud({vm_state: 'building', task_state: null, host: null, on: 'cmp1', mapping: 'null'})
    expect(cellCodes(s, uuid)).toEqual(['cell.instance-mapped-wrong-cell'])
  })

  it('an active instance whose build request stayed: build-request-stale (and the null mapping)', () => {
    const {s, uuid} = cloud({vm_state: 'active', task_state: null, host: 'cmp1', on: 'cmp1', mapping: 'null', buildRequest: true})
    expect(cellCodes(s, uuid)).toEqual(['cell.build-request-stale', 'cell.instance-mapped-wrong-cell'])
  })

  it('mapped to its cell with the build request still there: build-request-stale', () => {
    const {s, uuid} = cloud({vm_state: 'building', task_state: 'scheduling', host: null, on: 'cmp1', buildRequest: true})
    expect(cellCodes(s, uuid)).toEqual(['cell.build-request-stale'])
  })
})

describe('a claim under way in the usage check: the node row is written at the end of instance_claim', () => {
  function claiming(vmState: string, extraVcpus = 0) {
    const {s, uuid} = cloud({vm_state: vmState, task_state: null, host: 'cmp1', on: 'cmp1'})
    // The row as before the claim: without the instance's m1.small (2 VCPU, 2048 MB, 20 GB).
    const cn = s.nova.compute_nodes.find((c) => c.host === 'cmp1')!
    Object.assign(cn, {
      vcpus_used: (cn.vcpus_used ?? 0) - 2 + extraVcpus,
      memory_mb_used: (cn.memory_mb_used ?? 0) - 2048,
      free_ram_mb: (cn.free_ram_mb ?? 0) + 2048,
      local_gb_used: (cn.local_gb_used ?? 0) - 20,
      free_disk_gb: (cn.free_disk_gb ?? 0) + 20,
      running_vms: (cn.running_vms ?? 0) - 1,
    })
    return {s, uuid}
  }
  const drift = (s: Snapshot) =>
    runChecks(buildModel(s), {checks: ['usage']}).findings.filter((f) => f.code === 'usage.node-drift' && f.subject.host === 'cmp1').length

  it('a building instance on the node, the row without it: no drift', () => {
    expect(drift(claiming('building').s)).toBe(0)
  })

  it('an active instance the row does not count: drift', () => {
    expect(drift(claiming('active').s)).toBe(1)
  })

  it('a building instance and a row off by more than it: drift', () => {
    expect(drift(claiming('building', 1).s)).toBe(1)
  })
})
