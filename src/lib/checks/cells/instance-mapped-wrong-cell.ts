import type {Finding, InstanceSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {inConductor, instRow, instanceSubject, liveMappings, mappingOfLive} from './mappings.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.instance-mapped-wrong-cell': [InstanceSubject, Open]
  }
}

export const instanceMappedWrongCell: CheckUnit = {
  code: 'cell.instance-mapped-wrong-cell',
  check: 'cells',
  severity: 'error',
  summary: 'instance_mapping with a NULL or another cell than the one the instance lives in',
  explain: {
    cause:
      "The mapping's cell_id is NULL (a boot the conductor left after creating the instance; one still under way, building with its build request, is not reported) or another cell than the instance's: a cross-cell move interrupted, or a database restored in one cell only.",
    repair: '`cloudctl cells map-instances` points the mapping at the cell the instance lives in.',
  },
  run(ctx) {
    const lm = liveMappings(ctx)
    const anyCellDown = ctx.model.unavailableCells.length > 0
    const findings: Finding[] = []
    for (let k = 0; k < lm.liveCount.length; k++) {
      const inst = lm.sole[k]
      const mapping = inst ? mappingOfLive(ctx, lm, k) : undefined
      if (!inst || !mapping) continue
      // A NULL cell is no proof of where it lives while a cell is unreadable (the outage rule).
      if (mapping.cell_id === null && anyCellDown) continue
      // Phase 2 of a boot: the conductor has created the instance in its cell and maps it next.
      if (mapping.cell_id === null && inConductor(ctx, inst)) continue
      const mappedCell = ctx.cellById(mapping.cell_id)
      if (mappedCell?.uuid === inst.cell_uuid) continue
      // Mapped to a cell we could not read: the instance may be live there too, so say nothing.
      if (mappedCell && mappedCell.status !== 'available') continue
      findings.push({
        check: 'cells',
        code: 'cell.instance-mapped-wrong-cell',
        severity: 'error',
        subject: instanceSubject(ctx, inst),
        message:
          mapping.cell_id === null
            ? `Instance ${inst.uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but its instance_mapping has no cell.`
            : `Instance ${inst.uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but its instance_mapping points at ${mappedCell?.name ?? `cell id ${mapping.cell_id}`}.`,
        evidence: {
          cause: mapping.cell_id === null ? 'null-cell' : 'other-cell',
          instance_mapping: mapping,
          expected_cell_id: ctx.model.cellOf(inst.cell_uuid)?.id ?? null,
          instance: instRow(inst),
        },
        repair: 'cloudctl cells map-instances',
      })
    }
    return findings
  },
}
