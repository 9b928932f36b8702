import type {Finding, FindingSubject, HostMappingStaleEvidence} from '../../domain/finding.js'
import {type CheckUnit, runbook} from '../unit.js'
import {REPAIR_HOSTS, computeServices} from './hosts.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.host-mapping-stale': [FindingSubject, HostMappingStaleEvidence]
  }
}

export const hostMappingStale: CheckUnit = {
  code: 'cell.host-mapping-stale',
  check: 'cells',
  severity: 'warning',
  summary: 'host_mapping whose host has no live nova-compute service',
  explain: {
    cause:
      'The host_mapping outlived its nova-compute service (deleted or decommissioned host); a new host reusing the name in another cell would be mis-routed.',
    repair: '`cloudctl cells discover-hosts --prune` deletes the mapping.',
    runbook: runbook('stale-provider-after-service-delete'),
  },
  run(ctx) {
    // The host's service may run in a cell that could not be read, whatever cell the mapping names
    // (a wrong mapping is as possible as a stale one): nothing is concluded from its absence.
    if (ctx.model.unavailableCells.length > 0) return []
    const {hosts} = computeServices(ctx)
    const findings: Finding[] = []
    for (const hm of ctx.model.snapshot.nova_api.host_mappings) {
      if (hosts.has(hm.host)) continue
      const cell = ctx.cellById(hm.cell_id)
      findings.push({
        check: 'cells',
        code: 'cell.host-mapping-stale',
        severity: 'warning',
        subject: {cell: cell?.name ?? `cell id ${hm.cell_id}`, ...(cell ? {cell_uuid: cell.uuid} : {}), host: hm.host},
        message: `host_mapping ${hm.id} maps ${hm.host} to ${cell?.name ?? `cell id ${hm.cell_id}`}, where no live nova-compute service runs on that host.`,
        evidence: {host_mapping: hm},
        repair: REPAIR_HOSTS,
      })
    }
    return findings
  },
}
