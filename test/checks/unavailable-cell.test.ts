import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CloudBuilder} from '../support/builders.js'

/** cell2 holds cmp5 and its instance; the capture could not read it, so its rows are absent. */
function cloudWithUnreadableCell(extra?: (b: CloudBuilder, near: string) => void) {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500})
  const near = b.addInstance('cmp1', 'm1.small').row.uuid
  const cell2 = b.addCell('cell2')
  b.addHost('cell2', {host: 'cmp5', vcpus: 16, memory_mb: 65536, local_gb: 500})
  const far = b.addInstance('cmp5', 'm1.small').row
  b.addAggregate({name: 'agg', hosts: ['cmp1', 'cmp5']})
  extra?.(b, near)
  const snap = b.build()
  const unread = snap.cells.find((c) => c.uuid === cell2.uuid)!
  unread.status = 'unavailable'
  unread.error = "Can't connect to MySQL server on 'db-cell2'"
  snap.nova.services = snap.nova.services.filter((r) => r.cell_uuid !== cell2.uuid)
  snap.nova.compute_nodes = snap.nova.compute_nodes.filter((r) => r.cell_uuid !== cell2.uuid)
  snap.nova.instances = snap.nova.instances.filter((r) => r.cell_uuid !== cell2.uuid)
  snap.nova.migrations = snap.nova.migrations.filter((r) => r.cell_uuid !== cell2.uuid)
  return {snap, cell2, far}
}

describe('a cell that could not be read', () => {
  it('yields unknown findings for that cell and no false leak, stale provider, stale mapping or missing host', () => {
    const {snap, cell2, far} = cloudWithUnreadableCell()
    const report = runChecks(buildModel(snap))
    expect(report.findings.every((f) => f.severity === 'unknown')).toBe(true)
    expect(report.findings.every((f) => f.subject.cell_uuid === cell2.uuid)).toBe(true)
    expect(report.findings.map((f) => f.code).sort()).toEqual(
      ['aggregate.undecided', 'allocation.undecided', 'cell.undecided', 'pinning.undecided', 'provider.undecided', 'usage.undecided'].sort(),
    )
    const leak = report.findings.find((f) => f.code === 'allocation.undecided')
    expect(leak?.evidence.sample).toEqual([far.uuid])
    expect(report.unavailableCells).toEqual([{uuid: cell2.uuid, name: 'cell2', error: "Can't connect to MySQL server on 'db-cell2'"}])
  })

  it('still judges what the readable cells decide: a consumer deleted in cell1 is a leak', () => {
    let gone = ''
    const {snap} = cloudWithUnreadableCell((b, near) => {
      // nova deleted the instance (and untracked its usage) but placement kept its allocations
      b.deleteInstance(near, {keepAllocations: true})
      gone = near
    })
    const report = runChecks(buildModel(snap))
    const known = report.findings.filter((f) => f.severity !== 'unknown')
    expect(known.map((f) => [f.code, f.subject.consumer_uuid])).toEqual([['allocation.consumer-deleted', gone]])
  })

  it('filters by --cell and --severity', () => {
    const {snap} = cloudWithUnreadableCell()
    const model = buildModel(snap)
    expect(runChecks(model, {cell: 'cell1'}).findings).toEqual([])
    expect(runChecks(model, {cell: 'cell2'}).counts.bySeverity.unknown).toBe(6)
    expect(runChecks(model, {severity: 'error'}).findings).toEqual([])
    expect(runChecks(model, {checks: ['leaks']}).counts.byCode).toEqual({'allocation.undecided': 1})
  })
})
