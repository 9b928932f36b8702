import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {Aggregate} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, aggRow, aggregateIndex} from './membership.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.az-conflict': [FindingSubject, Open]
  }
}

/** A host in two availability zones: nova refuses to create this, a direct DB edit does not. */
export const azConflict: CheckUnit = {
  code: 'aggregate.az-conflict',
  check: 'aggregates',
  severity: 'error',
  summary: 'host in two availability zones',
  explain: {
    cause:
      'The host sits in two aggregates with different availability_zone metadata (the API refuses this, but direct edits and old releases allow it): its AZ is ambiguous.',
    repair: 'Reported only: remove the host from one of the aggregates.',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const [host, aggs] of aggregateIndex(ctx).aggregatesByHost) {
      const zones = new Map<string, Aggregate[]>()
      for (const a of aggs) if (a.metadata.availability_zone) push(zones, a.metadata.availability_zone, a)
      if (zones.size < 2) continue
      findings.push({
        check: 'aggregates',
        code: 'aggregate.az-conflict',
        severity: 'error',
        subject: {host, aggregate: aggs.map((a) => a.name ?? a.uuid ?? a.id).join(',')},
        message: `${host} is in ${zones.size} availability zones (${[...zones.keys()].sort().join(', ')}): AZ filtering and instance AZs become unpredictable.`,
        evidence: {host, zones: Object.fromEntries([...zones].map(([z, list]) => [z, list.map(aggRow)]))},
        repair: REPAIR,
      })
    }
    return findings
  },
}
