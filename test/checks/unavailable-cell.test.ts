import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {MiniCloud} from './mini-cloud.js'

/** cell2 holds cmp5 and its instance; the capture could not read it, so its rows are absent. */
function cloudWithUnreadableCell(extra?: (c: MiniCloud) => void) {
  const c = new MiniCloud()
  const h1 = c.host('cmp1')
  c.instance(h1)
  const cell2 = c.addCell('cell2')
  const h5 = c.host('cmp5', {cell: cell2})
  const far = c.instance(h5)
  c.aggregate('agg', [h1, h5])
  extra?.(c)
  c.build()
  cell2.status = 'unavailable'
  cell2.error = "Can't connect to MySQL server on 'db-cell2'"
  c.snap.nova.services = c.snap.nova.services.filter((r) => r.cell_uuid !== cell2.uuid)
  c.snap.nova.compute_nodes = c.snap.nova.compute_nodes.filter((r) => r.cell_uuid !== cell2.uuid)
  c.snap.nova.instances = c.snap.nova.instances.filter((r) => r.cell_uuid !== cell2.uuid)
  c.snap.nova.migrations = c.snap.nova.migrations.filter((r) => r.cell_uuid !== cell2.uuid)
  return {c, cell2, far, h5}
}

describe('a cell that could not be read', () => {
  it('yields unknown findings for that cell and no false leak, stale provider, stale mapping or missing host', () => {
    const {c, cell2, far} = cloudWithUnreadableCell()
    const report = runChecks(c.build())
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
    const {c} = cloudWithUnreadableCell()
    const gone = c.snap.nova.instances[0]
    gone.deleted = gone.id
    gone.vm_state = 'deleted'
    const report = runChecks(c.build())
    const known = report.findings.filter((f) => f.severity !== 'unknown')
    expect(known.map((f) => [f.code, f.subject.consumer_uuid])).toEqual([['allocation.consumer-deleted', gone.uuid]])
  })

  it('filters by --cell and --severity', () => {
    const {c} = cloudWithUnreadableCell()
    const model = c.build()
    expect(runChecks(model, {cell: 'cell1'}).findings).toEqual([])
    expect(runChecks(model, {cell: 'cell2'}).counts.bySeverity.unknown).toBe(6)
    expect(runChecks(model, {severity: 'error'}).findings).toEqual([])
    expect(runChecks(model, {checks: ['leaks']}).counts.byCode).toEqual({'allocation.undecided': 1})
  })
})
