/**
 * The uuid joins the audits share (model.consumerIndex, AuditContext.instanceRows, the mapping
 * positions cells marks) take a fast path when every uuid's rows are adjacent or single. These tests
 * break that assumption and compare with plain uuid-keyed grouping, then with the audit's verdict.
 */
import {describe, expect, it} from 'vitest'

import {AuditContext, runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const r of rows) {
    const k = key(r)
    const list = out.get(k)
    if (list) list.push(r)
    else out.set(k, [r])
  }
  return out
}

/** Three instances on two hosts; the first consumer's rows split (one row moved last), one uuid in two cells. */
function oddCloud() {
  const c = new CloudBuilder({requestSpecs: false})
  c.addCell('cell1')
  c.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  for (const host of ['cmp1', 'cmp2']) c.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  const uuids = [c.addInstance('cmp1', 'm1.small'), c.addInstance('cmp2', 'm1.small'), c.addInstance('cmp2', 'm1.small')].map((r) => r.row.uuid)
  const snap = c.build()
  const [a, b, d] = uuids.map((u) => snap.nova.instances.find((i) => i.uuid === u)!)
  const allocs = snap.placement.allocations
  const moved = allocs.findIndex((x) => x.consumer_id === a.uuid)
  allocs.push(...allocs.splice(moved, 1))
  return {snap, a, b, d}
}

describe('consumer and instance indexes', () => {
  it('a consumer whose allocation rows are not adjacent is one consumer with all its rows, in row order', () => {
    const {snap, a} = oddCloud()
    const model = buildModel(snap)
    const allocs = model.snapshot.placement.allocations
    const naive = groupBy(allocs, (x) => x.consumer_id)
    expect(model.consumerIds).toEqual([...naive.keys()])
    expect([...model.allocationsByConsumer]).toEqual([...naive])
    expect(model.allocationsOf(model.consumerIndex.get(a.uuid) as number).map((x) => x.id)).toEqual(naive.get(a.uuid)?.map((x) => x.id))
    expect([...model.consumersByUuid]).toEqual([...new Map(model.snapshot.placement.consumers.map((x) => [x.uuid, x]))])
    // Judged once, with all its rows: no amount mismatch, nothing at all.
    expect(runChecks(model).findings).toEqual([])
  })

  it('consumers whose rows are adjacent: each list is exactly its run, in row order', () => {
    const c = new CloudBuilder({requestSpecs: false})
    c.addCell('cell1')
    c.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
    c.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500})
    for (let i = 0; i < 3; i++) c.addInstance('cmp1', 'm1.small')
    const model = buildModel(c.build())
    const naive = groupBy(model.snapshot.placement.allocations, (x) => x.consumer_id)
    expect(model.consumerIds).toEqual([...naive.keys()])
    expect(model.consumerIds.map((_, i) => model.allocationsOf(i))).toEqual([...naive.values()])
    // The rows themselves, not copies.
    expect(model.allocationsOf(0)[0]).toBe(model.snapshot.placement.allocations[0])
    expect([...naive.values()].every((rows) => rows.length > 1)).toBe(true)
  })

  it('instance rows of one uuid in two cells group like a uuid-keyed map, consumers or not', () => {
    const {snap, b, d} = oddCloud()
    // b: live in cell1 and (a hidden copy) in cell0; d: no allocation, a deleted row in cell0 read first.
    snap.nova.instances.push({...b, cell_uuid: CELL0_UUID, id: 900, hidden: true})
    snap.placement.allocations = snap.placement.allocations.filter((x) => x.consumer_id !== d.uuid)
    snap.nova.instances.unshift({...d, cell_uuid: CELL0_UUID, id: 901, deleted: 901, host: null, node: null})
    const model = buildModel(snap)
    const naive = groupBy(model.snapshot.nova.instances, (i) => i.uuid)
    expect([...model.instancesByUuid]).toEqual([...naive])
    const ctx = new AuditContext(model)
    const rows = ctx.instanceRows
    expect(Array.from({length: rows.size}, (_, k) => rows.order(k))).toEqual([...naive.values()])
    // Per consumer, its rows; the hidden copy makes b's two.
    expect(model.consumerIds.map((_, i) => rows.ofConsumer(i)?.map((x) => x.id))).toEqual(model.consumerIds.map((u) => naive.get(u)?.map((x) => x.id)))
    expect(rows.ofConsumer(model.consumerIndex.get(b.uuid) as number)).toHaveLength(2)
    for (const [uuid, rows] of naive) {
      expect(ctx.rowsOf(uuid)).toEqual(rows)
      const live = rows.filter((i) => i.deleted === 0 && !i.hidden)
      expect(ctx.liveRows(uuid)).toEqual(live.length > 0 ? live : undefined)
    }
    expect(ctx.liveRows(b.uuid)?.map((i) => i.id)).toEqual([b.id])
    expect(ctx.liveRows('no-such-uuid')).toBeUndefined()
    // d runs and holds nothing: reported once, from its live row.
    expect(runChecks(model, {checks: ['leaks']}).findings.map((f) => [f.code, f.subject.instance_uuid, (f.evidence.instance as {id: number}).id])).toEqual([
      ['allocation.missing', d.uuid, d.id],
    ])
  })

  it('an earlier second instance_mapping of a live instance is not taken for a stale one', () => {
    const {snap, b, d} = oddCloud()
    const cell0 = snap.cells.find((x) => x.uuid === CELL0_UUID)
    expect(cell0).toBeDefined()
    const of = (uuid: string) => snap.nova_api.instance_mappings.find((m) => m.instance_uuid === uuid)
    // b (a consumer) and d (made to hold nothing) each get an earlier mapping to cell0, where they have no row.
    snap.placement.allocations = snap.placement.allocations.filter((x) => x.consumer_id !== d.uuid)
    snap.nova_api.instance_mappings.unshift({...of(b.uuid)!, id: 700, cell_id: cell0!.id}, {...of(d.uuid)!, id: 701, cell_id: cell0!.id})
    const report = runChecks(buildModel(snap), {checks: ['cells']})
    expect(report.findings).toEqual([])
    // The last mapping decides: pointing it at cell0 is a wrong cell, and the earlier one still is no stale mapping.
    snap.nova_api.instance_mappings.push({...of(b.uuid)!, id: 702, cell_id: cell0!.id})
    expect(runChecks(buildModel(snap), {checks: ['cells']}).findings.map((f) => [f.code, f.subject.instance_uuid])).toEqual([
      ['cell.instance-mapped-wrong-cell', b.uuid],
    ])
  })
})

describe('buildModel', () => {
  it('leaves the snapshot as it was', () => {
    const {snap} = oddCloud()
    const before = JSON.stringify(snap)
    const model = buildModel(snap)
    runChecks(model)
    expect(JSON.stringify(snap)).toBe(before)
  })
})
