import type {AggregateLinkEvidence, Finding, FindingSubject} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, aggRow, aggregateIndex} from './membership.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.extra-in-placement': [FindingSubject, AggregateLinkEvidence]
  }
}

/** Compute node providers in a nova aggregate's placement aggregate whose host the aggregate does not list. */
export const extraInPlacement: CheckUnit = {
  code: 'aggregate.extra-in-placement',
  check: 'aggregates',
  severity: 'warning',
  summary: 'provider in the placement aggregate of a nova aggregate that does not list its host',
  explain: {
    cause: 'A host removed from a nova aggregate while placement was unreachable keeps the placement link: member_of requests still match it.',
    repair: '`cloudctl repair aggregates --prune` removes the link.',
  },
  run(ctx) {
    const {model} = ctx
    const {byUuid, hostSets} = aggregateIndex(ctx)
    const findings: Finding[] = []
    for (const cn of model.liveComputeNodes) {
      const rp = ctx.providerOf(cn)
      if (!rp || cn.host === null) continue
      for (const aggUuid of model.aggregatesOf(rp.id)) {
        const agg = byUuid.get(aggUuid)
        if (!agg || hostSets.get(agg)?.has(cn.host)) continue
        findings.push({
          check: 'aggregates',
          code: 'aggregate.extra-in-placement',
          severity: 'warning',
          subject: {...ctx.nodeSubject(cn), aggregate: agg.name ?? aggUuid, provider_uuid: rp.uuid},
          message: `Provider ${rp.name ?? rp.uuid} is in placement aggregate ${aggUuid} (${agg.name ?? 'unnamed'}) but ${cn.host} is not a member of that host aggregate.`,
          evidence: {aggregate: aggRow(agg), provider: providerRow(rp), aggregate_hosts: agg.hosts},
          repair: REPAIR,
        })
      }
    }
    return findings
  },
}
