import type {ConsumerSubject, LeakEvidence} from '../../domain/finding.js'
import {type CheckUnit, runbook} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, consumerRow, groupSubject, instanceRow, providerLabel, summarize} from './shared.js'
import {providerRow} from '../rows.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.consumer-deleted': [ConsumerSubject, LeakEvidence]
  }
}

/** Every instance row of the consumer is deleted, yet it holds allocations. */
export const consumerDeleted: CheckUnit = {
  code: 'allocation.consumer-deleted',
  check: 'leaks',
  severity: 'error',
  summary: 'allocation held by an instance soft-deleted in its cell',
  explain: {
    cause:
      'nova deletes an instance in its cell and then asks placement to drop its allocations; when nova-compute is down (the host died, LP 1679750) or the call fails, the row is soft-deleted but placement keeps the allocation, which the resource tracker of a dead host never cleans up. The host looks full to the scheduler.',
    repair:
      '`cloudctl repair leaks` deletes the allocations of that consumer on the provider tree the finding names (guarded by the consumer and provider generations), and the consumer when nothing is left.',
    runbook: runbook('leak-after-host-death'),
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.deleted.map(({consumer, g, deletedRows, row}) => ({
      check: 'leaks',
      code: 'allocation.consumer-deleted',
      severity: 'error',
      subject: groupSubject(ctx, consumer, g, deletedRows[0].cell_uuid),
      message: `Instance ${consumer} is deleted in cell ${ctx.cellName(deletedRows[0].cell_uuid)} but still holds ${summarize(ctx, g.allocations, g.rp)} on ${providerLabel(g.rp)}.`,
      evidence: {
        allocations: allocRows(ctx, g.allocations),
        provider: providerRow(g.rp),
        consumer: consumerRow(ctx, row),
        instances: deletedRows.map(instanceRow),
      },
      repair: REPAIR,
    }))
  },
}
