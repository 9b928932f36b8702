import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {Aggregate} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, aggLabel, aggRow, aggregateIndex} from './membership.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.host-not-found': [FindingSubject, Open]
  }
}

/**
 * Hosts a (uuid-carrying) aggregate lists that have no live compute node. While a cell is unreadable
 * a host mapped to it, or mapped nowhere, may live there: it is counted as undecided instead.
 */
export function listedHostsWithoutNode(ctx: AuditContext): {missing: Array<{agg: Aggregate; host: string}>; undecided: number} {
  return ctx.once(listedHostsWithoutNode, () => {
    const {model} = ctx
    const {liveNodesByHost} = aggregateIndex(ctx)
    const missing: Array<{agg: Aggregate; host: string}> = []
    let undecided = 0
    for (const agg of model.snapshot.nova_api.aggregates) {
      if (!agg.uuid) continue
      for (const host of agg.hosts) {
        if ((liveNodesByHost.get(host) ?? []).length > 0) continue
        const mapped = ctx.hostMappingsByHost.get(host) ?? []
        if (!model.allCellsAvailable && (mapped.length === 0 || !mapped.every((hm) => ctx.cellById(hm.cell_id)?.status === 'available'))) {
          undecided++
          continue
        }
        missing.push({agg, host})
      }
    }
    return {missing, undecided}
  })
}

export const hostNotFound: CheckUnit = {
  code: 'aggregate.host-not-found',
  check: 'aggregates',
  severity: 'warning',
  summary: 'nova aggregate lists a host with no live compute node',
  explain: {
    cause: 'The aggregate still lists a host that was decommissioned or renamed.',
    repair: 'Reported only: `openstack aggregate remove host AGG HOST`.',
  },
  run(ctx) {
    return listedHostsWithoutNode(ctx).missing.map(({agg, host}): Finding => {
      const label = aggLabel(agg)
      return {
        check: 'aggregates',
        code: 'aggregate.host-not-found',
        severity: 'warning',
        subject: {aggregate: label, host},
        message: `Host aggregate ${label} lists ${host}, which has no live compute node in any cell.`,
        evidence: {aggregate: aggRow(agg), host},
        repair: REPAIR,
      }
    })
  },
}
