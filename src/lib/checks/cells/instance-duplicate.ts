import type {Finding, InstanceSubject, Open} from '../../domain/finding.js'
import type {Instance} from '../../domain/snapshot.js'
import {type CheckUnit, runbook} from '../unit.js'
import type {AuditContext} from '../context.js'
import {type LiveMappings, instRow, instanceSubject, liveMappings, liveRowsAt, mappingOfLive} from './mappings.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.instance-duplicate': [InstanceSubject, Open]
  }
}

export const instanceDuplicate: CheckUnit = {
  code: 'cell.instance-duplicate',
  check: 'cells',
  severity: 'error',
  summary: 'instance live in two cells',
  explain: {
    cause:
      'The same uuid is live in two cells: typically an ERROR copy buried in cell0 by a failed schedule and the real instance in cell1 after a retry or a cross-cell move that did not clean up.',
    repair:
      '`cloudctl cells map-instances` keeps the copy that is live and not in ERROR, points the mapping at it and soft-deletes the other as nova does; when no single copy qualifies it is left to the operator.',
    runbook: runbook('instance-in-cell0-and-cell1'),
  },
  run(ctx) {
    const lm = liveMappings(ctx)
    const findings: Finding[] = []
    for (let k = 0; k < lm.liveCount.length; k++) {
      // The finding is made apart: its closures would cost a context on every one of the uuids.
      if (lm.liveCount[k] >= 2) findings.push(duplicateFinding(ctx, lm, k, liveRowsAt(ctx, k) as Instance[]))
    }
    return findings
  },
}

function duplicateFinding(ctx: AuditContext, lm: LiveMappings, k: number, rows: Instance[]): Finding {
  const uuid = rows[0].uuid
  const mapping = mappingOfLive(ctx, lm, k)
  // The copy the API uses (the mapped cell) first, the others in cell order: stable whatever order the rows were read in.
  const mappedUuid = mapping ? ctx.cellById(mapping.cell_id)?.uuid : undefined
  const rank = (i: Instance) => (i.cell_uuid === mappedUuid ? -1 : (ctx.model.cellOf(i.cell_uuid)?.id ?? Number.MAX_SAFE_INTEGER))
  const live = [...rows].sort((a, b) => rank(a) - rank(b))
  const cells = live.map((i) => ctx.cellName(i.cell_uuid))
  return {
    check: 'cells',
    code: 'cell.instance-duplicate',
    severity: 'error',
    subject: {...instanceSubject(ctx, live.find((i) => i.host) ?? live[0]), cell: cells.join(',')},
    message: `Instance ${uuid} is live in ${live.length} cells (${cells.join(', ')}): the API shows it but cannot delete it; keep the live copy that is not in ERROR, point the mapping at it and soft-delete the other (the mapping may point at the wrong one).`,
    evidence: {
      instances: live.map(instRow),
      instance_mapping: mapping ?? null,
      mapped_cell: mapping ? (ctx.cellById(mapping.cell_id)?.name ?? null) : null,
    },
    repair: 'cloudctl cells map-instances',
  }
}
