import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {type CheckUnit, runbook} from '../unit.js'
import {REPAIR_HOSTS, computeServices} from './hosts.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.host-unmapped': [FindingSubject, Open]
  }
}

export const hostUnmapped: CheckUnit = {
  code: 'cell.host-unmapped',
  check: 'cells',
  severity: 'error',
  summary: 'nova-compute host with no host_mapping',
  explain: {
    cause:
      'A nova-compute host has no host_mapping: `nova-manage cell_v2 discover_hosts` was not run after the host was added (and discover_hosts_in_cells_interval is off). No instance lands on it: a boot the scheduler sends there fails in nova-conductor ("Host \'...\' is not mapped to any cell") and the instance ends in ERROR in cell0.',
    repair: '`cloudctl cells discover-hosts` creates the mapping and sets compute_nodes.mapped (also for nodes marked mapped whose mapping is missing).',
    runbook: runbook('new-compute-never-scheduled'),
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const service of computeServices(ctx).services) {
      const {svc, mappings, nodes} = service
      if (mappings.length > 0) continue
      const mappedFlag = nodes.some((cn) => cn.mapped === 1)
      findings.push({
        check: 'cells',
        code: 'cell.host-unmapped',
        severity: 'error',
        subject: service.subject,
        message: `Compute host ${svc.host} in cell ${ctx.cellName(svc.cell_uuid)} has no host_mapping: nothing can be scheduled to it${mappedFlag ? ', and discover_hosts skips it because compute_nodes.mapped = 1' : ''}.`,
        evidence: {
          service: {id: svc.id, uuid: svc.uuid, host: svc.host, cell_uuid: svc.cell_uuid},
          compute_nodes: nodes.map((cn) => ({id: cn.id, uuid: cn.uuid, mapped: cn.mapped})),
        },
        repair: REPAIR_HOSTS,
      })
    }
    return findings
  },
}
