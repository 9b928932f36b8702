import type {ConsumerSubject, Finding, MigrationLeakEvidence} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, consumerRow, groupSubject, migrationRow, providerLabel, summarize} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.migration-finished': [ConsumerSubject, MigrationLeakEvidence]
  }
}

/** A migration consumer whose migration is over still holds allocations. */
export const migrationFinished: CheckUnit = {
  code: 'allocation.migration-finished',
  check: 'leaks',
  severity: 'error',
  summary: 'allocation held by a migration that is over (confirmed, reverted, done, completed, error, failed, cancelled) or deleted with its instance',
  explain: {
    cause:
      'During a move nova holds the source allocation under the migration uuid; confirm/revert hands it back or drops it. A confirm that failed, a revert interrupted by a restart, or an errored migration leaves the migration consumer holding resources after the move is over. When the instance is then deleted, nova soft-deletes the migration row with it and the allocation stays (nova-compute logs "the allocation held by the migration is leaked").',
    repair: '`cloudctl repair leaks` deletes the allocations of that migration consumer.',
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.finished.map(({consumer, g, m, row}): Finding => {
      const subject = groupSubject(ctx, consumer, g, m.cell_uuid)
      subject.migration_uuid = consumer
      if (m.instance_uuid) subject.instance_uuid = m.instance_uuid
      return {
        check: 'leaks',
        code: 'allocation.migration-finished',
        severity: 'error',
        subject,
        message:
          m.deleted === 0
            ? `Migration ${consumer} is ${m.status} but still holds ${summarize(ctx, g.allocations, g.rp)} on ${providerLabel(g.rp)}.`
            : `Migration ${consumer} (${m.status}, deleted with its instance${m.instance_uuid ? ` ${m.instance_uuid}` : ''}) still holds ${summarize(ctx, g.allocations, g.rp)} on ${providerLabel(g.rp)}: nova could not remove it when the move ended and leaked it.`,
        evidence: {allocations: allocRows(ctx, g.allocations), provider: providerRow(g.rp), consumer: consumerRow(ctx, row), migration: migrationRow(m)},
        repair: REPAIR,
      }
    })
  },
}
