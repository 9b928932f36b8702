import type {ConsumerSubject, Finding, WrongProviderEvidence} from '../../domain/finding.js'
import type {AuditContext} from '../context.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, groupSubject, instanceRow, migrationRow, providerLabel, summarize} from './shared.js'
import type {WrongProvider} from './verdicts.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.wrong-provider': [ConsumerSubject, WrongProviderEvidence]
  }
}

/**
 * A live instance holds a provider that is not its node's (nor a sharing provider of its aggregates)
 * with no migration in progress to explain it, or a migration in progress holds a provider that is
 * neither its source nor its destination.
 */
export const wrongProvider: CheckUnit = {
  code: 'allocation.wrong-provider',
  check: 'leaks',
  severity: 'error',
  summary: "allocation on a provider that is not the consumer's node, with no migration in progress",
  explain: {
    cause:
      'The instance holds resources on a provider that is not its node and no migration explains it: a move whose allocation swap did not finish, an evacuation that rebuilt elsewhere, or `instances.host/node` edited by hand.',
    repair:
      '`cloudctl repair leaks` removes the rows on the wrong provider when the instance also holds its own host; `repair leaks --heal` moves them to its host when it holds nothing there (it never leaves an instance without an allocation).',
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.wrongProvider.map((w) => wrongProviderFinding(ctx, w))
  },
}

function wrongProviderFinding(ctx: AuditContext, w: WrongProvider): Finding {
  const {model} = ctx
  const {consumer, g} = w
  const held = summarize(ctx, g.allocations, g.rp)
  const base = {check: 'leaks', code: 'allocation.wrong-provider', severity: 'error'} as const
  if (w.kind === 'sharing') {
    return {
      ...base,
      subject: groupSubject(ctx, consumer, g, w.inst.cell_uuid),
      message: `Instance ${consumer} holds ${held} on sharing provider ${providerLabel(g.rp)}, which shares no aggregate with its compute node ${w.inst.node ?? w.inst.host}.`,
      evidence: {
        allocations: allocRows(ctx, g.allocations),
        provider: providerRow(g.rp),
        sharing: true,
        provider_aggregates: [...model.aggregatesOf(g.rp.id)].sort(),
        instance_aggregates: [...w.aggs].sort(),
        instance: instanceRow(w.inst),
      },
      repair: REPAIR,
    }
  }
  if (w.kind === 'migration') {
    const m = w.m
    return {
      ...base,
      subject: groupSubject(ctx, consumer, g, m.cell_uuid),
      message: `Migration ${consumer} (${m.migration_type ?? 'migration'} ${m.status}) holds ${held} on ${providerLabel(g.rp)}, which is neither its source nor its destination.`,
      evidence: {allocations: allocRows(ctx, g.allocations), provider: providerRow(g.rp), migration: migrationRow(m)},
      repair: REPAIR,
    }
  }
  const {inst, cn} = w
  return {
    ...base,
    subject: groupSubject(ctx, consumer, g, inst.cell_uuid),
    message: `Instance ${consumer} lives on ${inst.node ?? inst.host} but holds ${held} on ${providerLabel(g.rp)}, with no migration in progress.`,
    evidence: {
      allocations: allocRows(ctx, g.allocations),
      provider: providerRow(g.rp),
      provider_compute_node: cn ? {id: cn.id, cell_uuid: cn.cell_uuid, host: cn.host, node: cn.hypervisor_hostname} : null,
      instance: instanceRow(inst),
      migrations: (model.migrationsByInstance.get(consumer) ?? []).map(migrationRow),
    },
    repair: REPAIR,
  }
}
