/** Shared pieces of the planners: database labels, the re-validation checks that keep findings honest. */
import type {Finding} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Allocation, Instance, ResourceProvider} from '../domain/snapshot.js'
import {type DbKey, type PlanBuilder, type Row, cellDb} from './plan.js'

/** --cell / --host of a repair: only the findings the audit would show with the same filter are planned. */
export interface RepairScope {
  /** Cell name or uuid. */
  cell?: string
  /** Service host or hypervisor_hostname. */
  host?: string
}

export function cellDbOf(model: CloudModel, b: PlanBuilder, cellUuid: string): DbKey {
  const db = cellDb(cellUuid)
  b.label(db, `cell ${model.cellLabel(cellUuid)}`)
  return db
}

/**
 * Every readable cell database, labelled; the planner relies on the absence of rows in all of them.
 * An unreadable cell is left out: the audit judged nothing whose truth depends on it (the outage
 * rule), and naming it here would only make the executor fail to open it.
 */
export function allCellDbs(model: CloudModel, b: PlanBuilder): Array<{db: DbKey; uuid: string}> {
  return model.snapshot.cells.filter((c) => c.status === 'available').map((c) => ({db: cellDbOf(model, b, c.uuid), uuid: c.uuid}))
}

export function subjectOf(f: Finding): string {
  const s = f.subject
  return [
    s.cell && `cell=${s.cell}`,
    s.host && `host=${s.host}`,
    s.node && s.node !== s.host && `node=${s.node}`,
    s.numa_cell !== undefined && `numa=${s.numa_cell}`,
    s.provider_uuid && `provider=${s.provider_uuid}`,
    s.consumer_uuid && `consumer=${s.consumer_uuid}`,
    s.instance_uuid && s.instance_uuid !== s.consumer_uuid && `instance=${s.instance_uuid}`,
    s.aggregate && `aggregate=${s.aggregate}`,
  ]
    .filter(Boolean)
    .join(' ')
}

export const allocationRow = (a: Allocation): Row => ({
  id: a.id,
  resource_provider_id: a.resource_provider_id,
  consumer_id: a.consumer_id,
  resource_class_id: a.resource_class_id,
  used: a.used,
})

/** Lock every allocation of a consumer and require exactly the rows the snapshot holds: nothing new appeared. */
export function lockConsumerAllocations(model: CloudModel, b: PlanBuilder, consumer: string, why: string): void {
  const allocs = [...(model.allocationsByConsumer.get(consumer) ?? [])].sort((x, y) => x.id - y.id)
  b.add({db: 'placement', table: 'allocations', op: 'check', where: {consumer_id: consumer}, rows: allocs.map(allocationRow), why})
}

/** The instance row as the finding saw it (its placement and state). */
export const instanceGuard = (i: Instance): Row => ({
  id: i.id,
  uuid: i.uuid,
  host: i.host,
  node: i.node,
  vm_state: i.vm_state,
  task_state: i.task_state,
  deleted: i.deleted,
})

export function sortedUnique<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)]
}

/**
 * A live instance placed on the host this provider stands for, even when that host's compute node
 * row is deleted (the provider is stale but still the instance's only home). Its allocations there
 * are not a leak, whatever an audit calls them: removing them would hand a running guest's
 * resources to the scheduler.
 */
export function liveOnProvider(model: CloudModel, consumer: string, rp: ResourceProvider): Instance | undefined {
  const nodes = model.computeNodesByUuid.get(rp.uuid) ?? []
  return model
    .liveInstances(consumer)
    .find(
      (i) => (rp.name !== null && (i.node === rp.name || i.host === rp.name)) || nodes.some((cn) => cn.host === i.host && cn.hypervisor_hostname === i.node),
    )
}
