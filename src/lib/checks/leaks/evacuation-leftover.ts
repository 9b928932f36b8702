import type {ConsumerSubject, MigrationLeakEvidence} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import {type CheckUnit, runbook} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, groupSubject, instanceRow, migrationRow, summarize} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.evacuation-leftover': [ConsumerSubject, MigrationLeakEvidence]
  }
}

export const evacuationLeftover: CheckUnit = {
  code: 'allocation.evacuation-leftover',
  check: 'leaks',
  severity: 'warning',
  summary: 'allocation left on the source of a done evacuation',
  explain: {
    cause:
      'Evacuation allocates on the destination and leaves the source allocation until the source nova-compute starts again and cleans it up; a source host that never comes back (or was deleted) keeps it forever.',
    repair: '`cloudctl repair leaks` deletes the leftover rows on the evacuation source.',
    runbook: runbook('stale-provider-after-service-delete'),
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.evacuation.map(({consumer, g, inst, evacuation}) => ({
      check: 'leaks',
      code: 'allocation.evacuation-leftover',
      severity: 'warning',
      subject: {...groupSubject(ctx, consumer, g, inst.cell_uuid), ...(evacuation.uuid ? {migration_uuid: evacuation.uuid} : {})},
      message: `Instance ${consumer} was evacuated from ${evacuation.source_node ?? evacuation.source_compute} to ${inst.node ?? inst.host}; the source still holds ${summarize(ctx, g.allocations, g.rp)} (nova-compute frees it only when the source host restarts).`,
      evidence: {allocations: allocRows(ctx, g.allocations), provider: providerRow(g.rp), instance: instanceRow(inst), migration: migrationRow(evacuation)},
      repair: REPAIR,
    }))
  },
}
