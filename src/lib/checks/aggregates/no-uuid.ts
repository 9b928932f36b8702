import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, aggLabel, aggRow} from './membership.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.no-uuid': [FindingSubject, Open]
  }
}

export const noUuid: CheckUnit = {
  code: 'aggregate.no-uuid',
  check: 'aggregates',
  severity: 'warning',
  summary: 'nova aggregate without a uuid',
  explain: {
    cause: 'An aggregate row without a uuid (created before aggregates had uuids and never migrated): it cannot be mirrored into placement.',
    repair: 'Reported only: run `nova-manage db online_data_migrations`.',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const agg of ctx.model.snapshot.nova_api.aggregates) {
      if (agg.uuid) continue
      const label = aggLabel(agg)
      findings.push({
        check: 'aggregates',
        code: 'aggregate.no-uuid',
        severity: 'warning',
        subject: {aggregate: label},
        message: `Host aggregate ${label} has no uuid: nova cannot mirror it into placement.`,
        evidence: {aggregate: aggRow(agg)},
        repair: REPAIR,
      })
    }
    return findings
  },
}
