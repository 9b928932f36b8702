import type {Finding, FindingSubject, HostMappingWrongCellEvidence} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR_HOSTS, computeServices} from './hosts.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.host-mapped-wrong-cell': [FindingSubject, HostMappingWrongCellEvidence]
  }
}

export const hostMappedWrongCell: CheckUnit = {
  code: 'cell.host-mapped-wrong-cell',
  check: 'cells',
  severity: 'error',
  summary: 'host mapped to another cell than the one its service lives in',
  explain: {
    cause:
      'The host moved to another cell (re-installed, database restored) but its host_mapping still points at the old one: nova routes its instances to the wrong cell.',
    repair: '`cloudctl cells discover-hosts` points the mapping at the cell where the host’s service lives.',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const service of computeServices(ctx).services) {
      const {svc, mappings} = service
      if (mappings.length === 0) continue
      const mappedCell = ctx.cellById(mappings[0].cell_id)
      // Mapped to a cell that could not be read: the service may be there too.
      if (mappedCell?.uuid === svc.cell_uuid || (mappedCell && mappedCell.status !== 'available')) continue
      findings.push({
        check: 'cells',
        code: 'cell.host-mapped-wrong-cell',
        severity: 'error',
        subject: service.subject,
        message: `Compute host ${svc.host} runs in cell ${ctx.cellName(svc.cell_uuid)} but its host_mapping points at ${mappedCell?.name ?? `cell id ${mappings[0].cell_id}`}.`,
        evidence: {
          host_mapping: mappings[0],
          expected_cell_id: ctx.model.cellOf(svc.cell_uuid)?.id ?? null,
          service: {id: svc.id, host: svc.host, cell_uuid: svc.cell_uuid},
        },
        repair: REPAIR_HOSTS,
      })
    }
    return findings
  },
}
