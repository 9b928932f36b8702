import type {ConsumerSubject, LeakEvidence} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {providerRow} from '../rows.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, consumerRow, groupSubject, providerLabel, summarize} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.consumer-unknown': [ConsumerSubject, LeakEvidence]
  }
}

/** The consumer is no instance row in any readable cell, no migration and no build request. */
export const consumerUnknown: CheckUnit = {
  code: 'allocation.consumer-unknown',
  check: 'leaks',
  severity: 'error',
  summary: 'allocation whose consumer is no instance in any cell and no migration',
  explain: {
    cause:
      'The consumer is in no readable cell, no migration and no build request: an instance archived or purged (`nova-manage db archive_deleted_rows`) before placement let go of it, or a consumer written by hand or another service.',
    repair:
      '`cloudctl repair leaks` deletes its allocations on that provider tree. Check first that no other service (cinder, neutron, cyborg) owns the consumer.',
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.unknown.map(({consumer, g, row}) => ({
      check: 'leaks',
      code: 'allocation.consumer-unknown',
      severity: 'error',
      subject: groupSubject(ctx, consumer, g),
      message: `Consumer ${consumer} is neither an instance in any cell nor a migration, yet holds ${summarize(ctx, g.allocations, g.rp)} on ${providerLabel(g.rp)}.`,
      evidence: {
        allocations: allocRows(ctx, g.allocations),
        provider: providerRow(g.rp),
        consumer: consumerRow(ctx, row),
        instance_mapping: ctx.mappingOf(consumer) ?? null,
      },
      repair: REPAIR,
    }))
  },
}
