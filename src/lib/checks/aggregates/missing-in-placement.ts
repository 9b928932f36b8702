import type {AggregateLinkEvidence, Finding, FindingSubject} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import {type CheckUnit, runbook} from '../unit.js'
import {REPAIR, aggLabel, aggRow, aggregateIndex} from './membership.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.missing-in-placement': [FindingSubject, AggregateLinkEvidence]
  }
}

export const missingInPlacement: CheckUnit = {
  code: 'aggregate.missing-in-placement',
  check: 'aggregates',
  severity: 'warning',
  summary: 'host in a nova aggregate whose provider lacks the placement aggregate',
  explain: {
    cause:
      "nova mirrors each host aggregate into placement on the host's provider; adding a host while placement was unreachable, or a provider re-created later, leaves the link missing and aggregate-based filters/prefilters ignore the host.",
    repair: '`cloudctl repair aggregates` creates the placement aggregate link on the provider.',
    runbook: runbook('aggregates-out-of-sync'),
  },
  run(ctx) {
    const {model} = ctx
    const {liveNodesByHost} = aggregateIndex(ctx)
    const findings: Finding[] = []
    for (const agg of model.snapshot.nova_api.aggregates) {
      if (!agg.uuid) continue
      const label = aggLabel(agg)
      for (const host of agg.hosts) {
        for (const cn of liveNodesByHost.get(host) ?? []) {
          const rp = ctx.providerOf(cn)
          if (!rp) continue // provider.missing says it
          if (model.aggregatesOf(rp.id).has(agg.uuid)) continue
          findings.push({
            check: 'aggregates',
            code: 'aggregate.missing-in-placement',
            severity: 'warning',
            subject: {...ctx.nodeSubject(cn), aggregate: label, provider_uuid: rp.uuid},
            message: `${host} is in host aggregate ${label}${agg.metadata.availability_zone ? ` (availability zone ${agg.metadata.availability_zone})` : ''} but its provider ${rp.name ?? rp.uuid} is not in placement aggregate ${agg.uuid}: member_of / AZ prefiltering skips it.`,
            evidence: {aggregate: aggRow(agg), provider: providerRow(rp), provider_aggregates: [...model.aggregatesOf(rp.id)].sort()},
            repair: REPAIR,
          })
        }
      }
    }
    return findings
  },
}
