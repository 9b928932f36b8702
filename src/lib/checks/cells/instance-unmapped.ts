import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {instRow, instanceSubject, liveMappings} from './mappings.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.instance-unmapped': [FindingSubject, Open]
  }
}

export const instanceUnmapped: CheckUnit = {
  code: 'cell.instance-unmapped',
  check: 'cells',
  severity: 'error',
  summary: 'instance live in a cell with no instance_mapping',
  explain: {
    cause:
      'The instance lives in a cell but nova_api has no instance_mapping: a boot interrupted between the cell write and the mapping, or a cell added without `nova-manage cell_v2 map_instances`. The API answers 404 for it.',
    repair: '`cloudctl cells map-instances` creates the mapping to the cell the instance lives in.',
  },
  run(ctx) {
    // No mapping is no proof of where an instance lives: while a cell is unreadable a live copy may
    // be there, so mapping this one (map-instances) could hide the real instance (the outage rule).
    if (ctx.model.unavailableCells.length > 0) return []
    const lm = liveMappings(ctx)
    const findings: Finding[] = []
    for (let k = 0; k < lm.liveCount.length; k++) {
      const inst = lm.sole[k]
      if (!inst || lm.mappingAt[k] >= 0) continue
      findings.push({
        check: 'cells',
        code: 'cell.instance-unmapped',
        severity: 'error',
        subject: instanceSubject(ctx, inst),
        message: `Instance ${inst.uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but has no instance_mapping: the API cannot find it.`,
        evidence: {instance: instRow(inst)},
        repair: 'cloudctl cells map-instances',
      })
    }
    return findings
  },
}
