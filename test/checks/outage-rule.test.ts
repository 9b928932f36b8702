/**
 * The outage rule (docs/repairs.md): while any cell is unreadable, no consumer is judged leaked, wrong
 * or deleted unless the readable data proves it lives in no unreadable cell. Built on the seed 004
 * cloud: an instance active in cell1 with a leftover ERROR copy in cell0, then cell1 goes dark.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Instance, Snapshot} from '../../src/lib/domain/snapshot.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {planProviders} from '../../src/lib/repairs/providers.js'
import {planMapInstances} from '../../src/lib/repairs/cells.js'
import {outageBlockedSteps} from '../../src/lib/repairs/outage.js'
import {AuditContext} from '../../src/lib/checks/context.js'
import {OutageRule} from '../../src/lib/domain/outage.js'
import {writeSteps} from '../../src/lib/repairs/plan.js'
import {CELL0_UUID} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

function seed004(opts: {mapTo?: 'cell0' | 'cell1' | 'none'} = {}) {
  const b = new CloudBuilder({seed: 11, requestSpecs: false})
  b.addCell('cell1')
  b.addCell('cell2')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'c1-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell2', {host: 'c2-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  const alive = b.addInstance('c1-cmp1', 'm1.small').row
  const other = b.addInstance('c2-cmp1', 'm1.small').row
  const copy: Instance = {
    ...alive,
    cell_uuid: CELL0_UUID,
    id: b.nextInstanceId(),
    host: null,
    node: null,
    vm_state: 'error',
    task_state: null,
    power_state: 0,
    launched_at: null,
  }
  b.pushInstanceRow(copy)
  if (opts.mapTo === 'none') b.removeInstanceMapping(alive.uuid)
  else if (opts.mapTo === 'cell0') b.instance(alive.uuid).mapping.cell_id = b.cell0.id
  return {b, alive, other}
}

/** What capture produces when a cell cannot be read: the cell is flagged, none of its rows are present. */
function darken(s: Snapshot, name: string, error = "Can't connect to MySQL server on '127.0.0.1:3399'"): Snapshot {
  const cell = s.cells.find((c) => c.name === name)!
  cell.status = 'unavailable'
  cell.error = error
  for (const t of ['services', 'compute_nodes', 'instances', 'migrations'] as const) {
    ;(s.nova[t] as Array<{cell_uuid: string}>) = (s.nova[t] as Array<{cell_uuid: string}>).filter((r) => r.cell_uuid !== cell.uuid)
  }
  return s
}

const known = (s: Snapshot) =>
  runChecks(buildModel(s))
    .findings.filter((f) => f.severity !== 'unknown')
    .map((f) => `${f.code} ${f.subject.consumer_uuid ?? f.subject.node ?? f.subject.host ?? ''}`)

describe('outage rule: a consumer that may live in an unreadable cell is never judged', () => {
  it('with every cell readable, the cell0 copy is reported as a duplicate (the premise of seed 004)', () => {
    const {b, alive} = seed004({mapTo: 'cell1'})
    expect(known(b.build())).toEqual([`cell.instance-duplicate ${alive.uuid}`])
  })

  for (const mapTo of ['cell1', 'cell0', 'none'] as const) {
    it(`cell1 unreadable, mapping ${mapTo}: the live instance's allocations are undecided, never wrong-provider`, () => {
      const {b, alive} = seed004({mapTo})
      const s = darken(b.build(), 'cell1')
      const model = buildModel(s)
      const report = runChecks(model)
      const mine = report.findings.filter((f) => f.subject.consumer_uuid === alive.uuid || f.subject.instance_uuid === alive.uuid)
      expect(mine.filter((f) => f.severity !== 'unknown')).toEqual([])
      expect(report.findings.filter((f) => f.severity !== 'unknown')).toEqual([])
      const leaks = planLeaks(model, {heal: true})
      expect(writeSteps(leaks)).toEqual([])
      expect(writeSteps(planProviders(model, {}))).toEqual([])
      expect(writeSteps(planMapInstances(model, {}))).toEqual([])
    })
  }

  it('cell2 unreadable: the same copy is still judged, since its mapping and host prove cell1', () => {
    const {b, alive} = seed004({mapTo: 'cell1'})
    const s = darken(b.build(), 'cell2')
    expect(known(s)).toEqual([`cell.instance-duplicate ${alive.uuid}`])
  })

  it('a deleted instance whose allocations sit on a host of the unreadable cell is undecided', () => {
    const {b, other} = seed004({mapTo: 'cell1'})
    const s = b.build()
    // A row for the same uuid, deleted, in cell0 (a failed rebuild's leftover): not proof of a leak.
    const row = s.nova.instances.find((i) => i.uuid === other.uuid)!
    s.nova.instances.push({...row, cell_uuid: CELL0_UUID, id: 9999, host: null, node: null, deleted: 9999, vm_state: 'deleted'})
    const dark = darken(s, 'cell2')
    expect(known(dark).filter((k) => k.includes(other.uuid))).toEqual([])
    expect(writeSteps(planLeaks(buildModel(dark), {heal: true}))).toEqual([])
  })

  it('a consumer deleted in a readable cell, mapped there, on a readable host, is still a leak', () => {
    const {b} = seed004({mapTo: 'cell1'})
    const gone = b.addInstance('c1-cmp1', 'm1.small').row
    const s = b.build()
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    row.deleted = row.id
    row.vm_state = 'deleted'
    const dark = darken(s, 'cell2')
    expect(known(dark)).toContain(`allocation.consumer-deleted ${row.uuid}`)
  })
})

describe('outage rule, last line of defence: a plan made while the cell was readable is refused once it is not', () => {
  function leakedIn(cell: 'cell1' | 'cell2') {
    const {b} = seed004({mapTo: 'cell1'})
    const gone = b.addInstance(cell === 'cell1' ? 'c1-cmp1' : 'c2-cmp1', 'm1.small').row
    const s = b.build()
    const row = s.nova.instances.find((i) => i.uuid === gone.uuid)!
    row.deleted = row.id
    row.vm_state = 'deleted'
    return {s, gone}
  }

  it('every allocation and consumer write of a consumer of the dark cell is blocked', () => {
    const {s, gone} = leakedIn('cell1')
    const plan = planLeaks(buildModel(s))
    expect(writeSteps(plan).length).toBeGreaterThan(0)
    expect(outageBlockedSteps(buildModel(s), plan)).toEqual([])
    const dark = buildModel(darken(structuredClone(s), 'cell1'))
    const blocked = outageBlockedSteps(dark, plan)
    expect(blocked.map((x) => x.step)).toEqual(writeSteps(plan).filter((st) => st.db === 'placement'))
    expect(blocked.every((x) => x.cells.length === 1 && x.reason.length > 0)).toBe(true)
    expect(blocked[0].reason).toContain(gone.uuid)
  })

  it('the same plan for a consumer of a readable cell passes while another cell is dark', () => {
    const {s} = leakedIn('cell1')
    const plan = planLeaks(buildModel(s))
    expect(outageBlockedSteps(buildModel(darken(structuredClone(s), 'cell2')), plan)).toEqual([])
  })

  it('instance mappings are never written while any cell is dark', () => {
    const {b, alive} = seed004({mapTo: 'cell1'})
    const s = b.build()
    const plan = planMapInstances(buildModel(s), {})
    expect(writeSteps(plan).some((st) => st.table === 'instance_mappings' || st.table === 'instances')).toBe(true)
    const blocked = outageBlockedSteps(buildModel(darken(structuredClone(s), 'cell2')), plan)
    expect(blocked.length).toBeGreaterThan(0)
    expect(blocked.every((x) => x.step.table === 'instance_mappings' || x.step.db !== 'nova_api')).toBe(true)
    expect(writeSteps(planMapInstances(buildModel(darken(structuredClone(s), 'cell2')), {}))).toEqual([])
    expect(alive.uuid).toBeTruthy()
  })
})

describe("outage rule, one home: the rule repairs build from the model alone answers as the checks' does", () => {
  for (const mapTo of ['cell1', 'cell0', 'none'] as const) {
    for (const dark of ['cell1', 'cell2']) {
      it(`mapping ${mapTo}, ${dark} unreadable`, () => {
        const {b} = seed004({mapTo})
        const model = buildModel(darken(b.build(), dark))
        const audit = new AuditContext(model).outage
        const alone = new OutageRule(model)
        const providers = model.snapshot.placement.resource_providers
        const uuids = new Set([...model.allocationsByConsumer.keys(), ...b.build().nova.instances.map((i) => i.uuid)])
        let undecided = 0
        for (const uuid of uuids) {
          const held = (model.allocationsByConsumer.get(uuid) ?? []).map((a) => model.providersById.get(a.resource_provider_id)!)
          expect(alone.unreadableHomesOf(uuid)).toEqual(audit.unreadableHomesOf(uuid))
          expect(alone.unreadableCellsOfConsumer(uuid, held)).toEqual(audit.unreadableCellsOfConsumer(uuid, held))
          undecided += audit.unreadableCellsOfConsumer(uuid, held).length
        }
        for (const rp of providers) expect(alone.unreadableCellsOfProvider(rp)).toEqual(audit.unreadableCellsOfProvider(rp))
        // Not vacuous: some consumer depends on the dark cell in every variant.
        expect(undecided).toBeGreaterThan(0)
      })
    }
  }
})
