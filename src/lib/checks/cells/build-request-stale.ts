import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {inConductor, instRow} from './mappings.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.build-request-stale': [FindingSubject, Open]
  }
}

/** build_requests whose instance already exists in a cell. */
export const buildRequestStale: CheckUnit = {
  code: 'cell.build-request-stale',
  check: 'cells',
  severity: 'warning',
  summary: 'build_request of an instance that already exists in a cell',
  explain: {
    cause:
      'A build_request stays after the instance was created in a cell: the conductor failed to delete it. The API may list the instance twice or as still building.',
    repair: 'Reported only: delete the build_request row once the instance is confirmed in its cell (`cloudctl cells verify-instance UUID`).',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const br of ctx.model.snapshot.nova_api.build_requests) {
      if (!br.instance_uuid) continue
      const rows = ctx.rowsOf(br.instance_uuid) ?? []
      if (rows.length === 0) continue
      // The conductor deletes it right after mapping the instance it created (phase 2 of a boot).
      if (rows.length === 1 && rows[0].deleted === 0 && inConductor(ctx, rows[0])) continue
      findings.push({
        check: 'cells',
        code: 'cell.build-request-stale',
        severity: 'warning',
        subject: {cell: ctx.cellName(rows[0].cell_uuid), cell_uuid: rows[0].cell_uuid, instance_uuid: br.instance_uuid},
        message: `build_request ${br.id} remains for instance ${br.instance_uuid}, which already exists in cell ${ctx.cellName(rows[0].cell_uuid)}: the API may list it twice.`,
        evidence: {build_request: br, instances: rows.map(instRow)},
        repair: 'cloudctl cells map-instances',
      })
    }
    return findings
  },
}
