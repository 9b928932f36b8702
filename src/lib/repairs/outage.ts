/**
 * The outage rule as a last line of defence (docs/repairs.md): whatever a planner decided, no write
 * step is applied whose premise depends on a cell that could not be read. The checks already leave
 * such findings undecided, so this should find nothing; when it does, the whole apply is refused.
 * The rule itself is domain/outage.ts, the one the checks read; no audit is built to reach it.
 */
import type {CloudModel} from '../domain/model.js'
import {OutageRule} from '../domain/outage.js'
import type {ResourceProvider} from '../domain/snapshot.js'
import {type RepairPlan, type Row, type Scalar, type Step, writeSteps} from './plan.js'

export interface BlockedStep {
  step: Step
  /** Uuids of the unreadable cells its premise depends on. */
  cells: string[]
  reason: string
}

const PROVIDER_TABLES = new Set(['resource_providers', 'inventories', 'resource_provider_traits', 'resource_provider_aggregates'])

/** The write steps of a plan whose premise depends on an unreadable cell ([] while every cell was read). */
export function outageBlockedSteps(model: CloudModel, plan: RepairPlan, rule: OutageRule = new OutageRule(model)): BlockedStep[] {
  const down = model.unavailableCells
  if (down.length === 0) return []
  const all = down.map((c) => c.uuid)
  const out: BlockedStep[] = []
  for (const step of writeSteps(plan)) {
    const cells = new Set<string>()
    let reason = ''
    if (step.db.startsWith('cell:') && plan.kind !== 'map-instances') {
      const uuid = step.db.slice(5)
      if (all.includes(uuid)) {
        cells.add(uuid)
        reason = 'writes to a cell that could not be read'
      }
    } else if (step.db === 'placement' && (step.table === 'allocations' || step.table === 'consumers')) {
      const consumer = str(field(step, step.table === 'consumers' ? 'uuid' : 'consumer_id'))
      if (consumer === undefined) {
        for (const c of all) cells.add(c)
        reason = 'an allocation change whose consumer the step does not name'
      } else {
        // Every provider the consumer holds allocations on, and the one this step writes to.
        const providers: ResourceProvider[] = []
        for (const a of model.allocationsByConsumer.get(consumer) ?? []) {
          const held = model.providersById.get(a.resource_provider_id)
          if (held) providers.push(held)
        }
        const rp = providerOf(model, step)
        if (rp) providers.push(rp)
        for (const c of rule.unreadableCellsOfConsumer(consumer, providers)) cells.add(c)
        if (cells.size > 0) reason = `consumer ${consumer} may live in a cell that could not be read`
      }
    } else if (step.db === 'placement' && PROVIDER_TABLES.has(step.table)) {
      const rp = providerOf(model, step)
      if (rp) for (const c of rule.unreadableCellsOfProvider(rp)) cells.add(c)
      if (cells.size > 0) reason = `provider ${rp?.name ?? rp?.uuid} stands for a host of a cell that could not be read`
    } else if (plan.kind === 'map-instances' || (step.db === 'nova_api' && step.table === 'instance_mappings')) {
      // Where an instance lives, and which copies of it exist, is known only when every cell was read.
      for (const c of all) cells.add(c)
      reason = 'which cells hold a live copy of the instance is unknown while a cell cannot be read'
    } else if (step.db === 'nova_api' && step.table === 'host_mappings' && step.op === 'delete') {
      for (const c of all) cells.add(c)
      reason = 'a host mapping removed: the host may run in the cell that could not be read'
    }
    if (cells.size > 0) out.push({step, cells: [...cells], reason})
  }
  return out
}

function field(step: Step, name: string): Scalar | undefined {
  const rows: Array<Row | Record<string, unknown> | null | undefined> = []
  if (step.op === 'delete' || step.op === 'update') rows.push(step.expect, step.key)
  if (step.op === 'insert') rows.push(step.unique, step.values)
  if (step.op === 'restore') rows.push(step.before, step.after, step.key)
  if (step.op === 'update-all' || step.op === 'delete-all') rows.push(step.where)
  for (const r of rows) {
    const v = r?.[name]
    if (typeof v === 'string' || typeof v === 'number') return v
  }
  return undefined
}

const str = (v: Scalar | undefined): string | undefined => (typeof v === 'string' ? v : undefined)

function providerOf(model: CloudModel, step: Step) {
  const id = step.table === 'resource_providers' ? field(step, 'id') : field(step, 'resource_provider_id')
  return typeof id === 'number' ? model.providersById.get(id) : undefined
}
