/**
 * repair leaks --heal: what `nova-manage placement heal_allocations` does for a live instance, as
 * guarded steps: allocations created from the flavor when it holds none, amounts corrected when they
 * differ from the flavor. Only where the amounts fit the provider, as placement would check.
 */
import {capacityOf} from '../domain/placement-capacity.js'
import type {FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Allocation, ResourceProvider} from '../domain/snapshot.js'
import {allocationRow, cellDbOf, instanceGuard, lockConsumerAllocations, subjectOf} from './common.js'
import {NOW, type PlanBuilder} from './plan.js'

export function planMissing(model: CloudModel, b: PlanBuilder, f: FindingOf<'allocation.missing'>): void {
  const ev = f.evidence
  const subject = subjectOf(f)
  const rp = ev.provider ? model.providersById.get(ev.provider.id) : undefined
  if (!rp) {
    b.skip(f.code, subject, 'the compute node has no resource provider: restart nova-compute there first (cloudctl repair providers)')
    return
  }
  const inst = model.liveInstances(ev.instance.uuid).find((i) => i.cell_uuid === ev.instance.cell_uuid)
  if (!inst || inst.project_id === null || inst.user_id === null) {
    b.skip(f.code, subject, 'the instance has no project or user to create its consumer with')
    return
  }
  const project = [...model.projectsById].find(([, ext]) => ext === inst.project_id)?.[0]
  const user = [...model.usersById].find(([, ext]) => ext === inst.user_id)?.[0]
  const existing = model.consumersByUuid.get(inst.uuid)
  if (!existing && (project === undefined || user === undefined)) {
    b.skip(
      f.code,
      subject,
      `placement has no projects/users row for ${inst.project_id}/${inst.user_id}: run nova-manage placement heal_allocations, which creates them through the API`,
    )
    return
  }
  const rows = planAmounts(model, rp, ev.expected)
  if (typeof rows === 'string') {
    b.skip(f.code, subject, rows)
    return
  }
  b.finding(f.code, subject, f.message)
  b.about(`instance ${inst.uuid} on ${rp.name ?? rp.uuid} (cell ${model.cellLabel(inst.cell_uuid)}), which holds no allocation`)
  b.add({
    db: cellDbOf(model, b, inst.cell_uuid),
    table: 'instances',
    op: 'check',
    where: {uuid: inst.uuid, deleted: 0},
    rows: [instanceGuard(inst)],
    why: `${f.code}: instance ${inst.uuid} still on ${inst.node}`,
  })
  b.add({
    db: 'placement',
    table: 'allocations',
    op: 'check',
    where: {consumer_id: inst.uuid},
    rows: [],
    why: `${f.code}: ${inst.uuid} still holds no allocation`,
  })
  for (const [rcId, used] of rows)
    b.add(
      {
        db: 'placement',
        table: 'allocations',
        op: 'insert',
        unique: {consumer_id: inst.uuid, resource_provider_id: rp.id, resource_class_id: rcId},
        values: {created_at: NOW, updated_at: null, resource_provider_id: rp.id, consumer_id: inst.uuid, resource_class_id: rcId, used},
        why: `heal: ${model.rc.name(rcId)}=${used} from the flavor of ${inst.uuid}`,
        code: f.code,
      },
      `${model.rc.name(rcId)}=${used}`,
    )
  b.bumpProvider(rp, `allocations of ${inst.uuid} created`)
  if (existing) b.bumpConsumer(existing, 'allocations created')
  else insertConsumer(model, b, inst.uuid, project as number, user as number)
}

/** The consumers row placement would create with the instance's first allocations. */
function insertConsumer(model: CloudModel, b: PlanBuilder, uuid: string, project: number, user: number): void {
  const type = model.snapshot.placement.consumer_types.find((t) => t.name === 'INSTANCE')
  b.add({
    db: 'placement',
    table: 'consumers',
    op: 'insert',
    unique: {uuid},
    values: {created_at: NOW, updated_at: null, uuid, project_id: project, user_id: user, generation: 1, consumer_type_id: type?.id ?? null},
    why: `heal: consumer ${uuid} (generation 1: created, then bumped by the allocation write, as placement does)`,
  })
}

/** [resource class id, amount] rows that fit the provider, or why they do not. */
function planAmounts(model: CloudModel, rp: ResourceProvider, want: Record<string, number>): Array<[number, number]> | string {
  const out: Array<[number, number]> = []
  for (const [name, used] of Object.entries(want)) {
    const rcId = model.rc.id(name)
    const inv = rcId === undefined ? undefined : model.inventory(rp.id, rcId)
    if (rcId === undefined || !inv) return `provider ${rp.name ?? rp.uuid} has no ${name} inventory`
    if (model.usage(rp.id, rcId) + used > capacityOf(inv) + 1e-6) return `${name}=${used} does not fit on ${rp.name ?? rp.uuid} (placement would refuse it)`
    out.push([rcId, used])
  }
  return out
}

export function planMismatch(model: CloudModel, b: PlanBuilder, f: FindingOf<'allocation.amount-mismatch'>): void {
  const ev = f.evidence
  const subject = subjectOf(f)
  const consumer = ev.instance.uuid
  const inst = model.liveInstances(consumer).find((i) => i.cell_uuid === ev.instance.cell_uuid)
  const rp = f.subject.provider_uuid ? model.providersByUuid.get(f.subject.provider_uuid) : undefined
  const c = model.consumersByUuid.get(consumer)
  if (!inst || !rp || !c) {
    b.skip(f.code, subject, 'instance, provider or consumer row missing: re-audit')
    return
  }
  const planned = mismatchSteps(model, b, f, rp)
  if (typeof planned === 'string') return void b.skip(f.code, subject, planned)
  const {steps, touched} = planned
  b.finding(f.code, subject, f.message)
  b.about(`instance ${consumer} on ${rp.name ?? rp.uuid} (cell ${model.cellLabel(inst.cell_uuid)}), whose allocations differ from its flavor`)
  b.add({
    db: cellDbOf(model, b, inst.cell_uuid),
    table: 'instances',
    op: 'check',
    where: {uuid: consumer, deleted: 0},
    rows: [instanceGuard(inst)],
    why: `${f.code}: instance ${consumer} unchanged`,
  })
  lockConsumerAllocations(model, b, consumer, `${f.code}: the consumer's allocations are exactly those audited`)
  for (const s of steps) s()
  for (const p of touched.values()) b.bumpProvider(p, `allocations of ${consumer} corrected`)
  b.bumpConsumer(c, 'allocations corrected')
}

/**
 * The allocation writes that bring a consumer's amounts to its flavor, one per differing resource
 * class (deferred: nothing is added before every class is known to be repairable), and the providers
 * they touch; or why they cannot be planned.
 */
function mismatchSteps(
  model: CloudModel,
  b: PlanBuilder,
  f: FindingOf<'allocation.amount-mismatch'>,
  rp: ResourceProvider,
): {steps: Array<() => void>; touched: Map<number, ResourceProvider>} | string {
  const tree = new Set(model.tree(model.rootOf(rp)).map((p) => p.id))
  const steps: Array<() => void> = []
  const touched = new Map<number, ResourceProvider>()
  const consumer = f.evidence.instance.uuid
  const allocs = model.allocationsByConsumer.get(consumer) ?? []
  for (const [name, d] of Object.entries(f.evidence.differences)) {
    const rcId = model.rc.id(name)
    if (rcId === undefined) return `unknown resource class ${name}`
    const rows = allocs.filter((a) => a.resource_class_id === rcId)
    if (rows.some((a) => !tree.has(a.resource_provider_id)) || rows.length > 1)
      return `${name} is allocated on a sharing or nested provider: fix it with heal_allocations --force`
    const row: Allocation | undefined = rows[0]
    if (row && d.expected === 0) {
      steps.push(() =>
        b.add(
          {
            db: 'placement',
            table: 'allocations',
            op: 'delete',
            key: {id: row.id},
            expect: allocationRow(row),
            why: `heal: ${name} is not in the flavor of ${consumer}`,
            code: f.code,
          },
          `${name}=${row.used}, not in the flavor`,
        ),
      )
      touched.set(rp.id, model.providersById.get(row.resource_provider_id) ?? rp)
    } else if (row) {
      const target = model.providersById.get(row.resource_provider_id) ?? rp
      const inv = model.inventory(target.id, rcId)
      if (d.expected > d.allocated && (!inv || model.usage(target.id, rcId) - d.allocated + d.expected > capacityOf(inv) + 1e-6))
        return `${name}=${d.expected} does not fit on ${target.name ?? target.uuid}`
      steps.push(() =>
        b.add(
          {
            db: 'placement',
            table: 'allocations',
            op: 'update',
            key: {id: row.id},
            expect: allocationRow(row),
            set: {used: d.expected, updated_at: NOW},
            why: `heal: ${name} ${d.allocated} -> ${d.expected} from the flavor of ${consumer}`,
            code: f.code,
          },
          `${name} ${d.allocated} -> ${d.expected}`,
        ),
      )
      touched.set(target.id, target)
    } else {
      const fit = planAmounts(model, rp, {[name]: d.expected})
      if (typeof fit === 'string') return fit
      steps.push(() =>
        b.add(
          {
            db: 'placement',
            table: 'allocations',
            op: 'insert',
            unique: {consumer_id: consumer, resource_provider_id: rp.id, resource_class_id: rcId},
            values: {created_at: NOW, updated_at: null, resource_provider_id: rp.id, consumer_id: consumer, resource_class_id: rcId, used: d.expected},
            why: `heal: ${name}=${d.expected} from the flavor of ${consumer}`,
            code: f.code,
          },
          `${name}=${d.expected}`,
        ),
      )
      touched.set(rp.id, rp)
    }
  }
  return {steps, touched}
}
