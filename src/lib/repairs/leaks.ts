/**
 * repair leaks: remove leaked allocations, and with `heal` create missing ones and fix amounts (what
 * `nova-manage placement heal_allocations` does; that planning is in heal.ts). Only the rows on the provider tree a finding names
 * are removed; a consumer keeps its allocations elsewhere, and loses its consumers row only when no
 * allocation is left, as placement does.
 *
 * Every step is preceded by checks of the premise in the databases that hold it: the instance is still
 * deleted (or absent everywhere), the migration still finished, the consumer's allocations still
 * exactly the observed rows.
 */
import {runChecks} from '../checks/index.js'
import {capacityOf} from '../domain/placement-capacity.js'
import type {Finding, FindingOf} from '../domain/finding.js'
import {type CloudModel, nodeKey} from '../domain/model.js'
import type {Allocation, ResourceProvider} from '../domain/snapshot.js'
import {type RepairScope, allCellDbs, allocationRow, cellDbOf, instanceGuard, liveOnProvider, lockConsumerAllocations, subjectOf} from './common.js'
import {planMismatch, planMissing} from './heal.js'
import {NOW, PlanBuilder, type RepairPlan} from './plan.js'

export const LEAK_CODES = [
  'allocation.consumer-deleted',
  'allocation.consumer-unknown',
  'allocation.migration-finished',
  'allocation.evacuation-leftover',
  'allocation.wrong-provider',
] as const
export const HEAL_CODES = ['allocation.missing', 'allocation.amount-mismatch'] as const

export type LeakFinding = FindingOf<(typeof LEAK_CODES)[number]>
const LEAK_CODE_SET: ReadonlySet<string> = new Set(LEAK_CODES)
export const isLeakFinding = (f: Finding): f is LeakFinding => LEAK_CODE_SET.has(f.code)

export interface LeaksOptions extends RepairScope {
  heal?: boolean
  /** Only findings of this consumer / instance uuid. */
  consumer?: string
  /** At most this many findings (a consumer's leaks count as one) per plan; the rest waits (exit 6). */
  maxCount?: number
  now?: string
}

export function planLeaks(model: CloudModel, opts: LeaksOptions = {}): RepairPlan {
  const b = new PlanBuilder('leaks', opts.now, opts.maxCount)
  const findings = runChecks(model, {checks: ['leaks'], cell: opts.cell, host: opts.host}).findings.filter(
    (f) => !opts.consumer || f.subject.consumer_uuid === opts.consumer,
  )
  const removals = new Map<string, {ids: Set<number>; findings: LeakFinding[]}>()

  for (const f of findings) {
    if (isLeakFinding(f)) {
      const consumer = f.subject.consumer_uuid
      const home = f.code === 'allocation.wrong-provider' ? placedOnFindingProvider(model, f) : undefined
      if (home) {
        b.skip(
          f.code,
          subjectOf(f),
          `not removed: instance ${consumer} is placed on ${home.node ?? home.host}, the host this provider stands for (its compute node or service is deleted); see provider.stale`,
        )
        continue
      }
      const misplaced = f.code === 'allocation.wrong-provider' && !f.evidence.migration ? homeWithoutAllocations(model, consumer) : undefined
      if (misplaced) {
        // Removing these would leave a running instance with no allocation at all (allocation.missing):
        // they belong on its own host. heal_allocations territory, so only with --heal.
        if (!opts.heal)
          b.skip(
            f.code,
            subjectOf(f),
            `instance ${consumer} holds nothing on its own host ${misplaced.node ?? misplaced.host}: removing these would leave it with no allocation; run with --heal to move them there`,
          )
        else b.unit(() => planMove(model, b, f, misplaced))
        continue
      }
      let r = removals.get(consumer)
      if (!r) removals.set(consumer, (r = {ids: new Set(), findings: []}))
      for (const a of f.evidence.allocations) r.ids.add(a.id)
      r.findings.push(f)
    } else if (f.code === 'allocation.missing' || f.code === 'allocation.amount-mismatch') {
      if (!opts.heal) b.skip(f.code, subjectOf(f), 'run with --heal to create or correct allocations from the flavor')
    } else if (f.code === 'allocation.undecided') {
      b.skip(f.code, subjectOf(f), 'a cell could not be read: nothing is concluded for its consumers')
    } else if (f.code === 'allocation.consumer-incomplete') {
      b.skip(f.code, subjectOf(f), 'not repaired here: nova heals incomplete consumers (nova-manage placement heal_allocations)')
    }
  }

  for (const [consumer, r] of removals) b.unit(() => planRemoval(model, b, consumer, r.ids, r.findings))

  if (opts.heal) {
    for (const f of findings) {
      if (f.code === 'allocation.missing') b.unit(() => planMissing(model, b, f))
      else if (f.code === 'allocation.amount-mismatch') b.unit(() => planMismatch(model, b, f))
    }
  }
  if (b.findings.length > 0)
    b.note(
      'Placement commits first, then nothing else: every step is in the placement database; the cell databases are only read (locked) to re-check each finding.',
    )
  return b.build(['placement'])
}

/**
 * Removes the allocation rows `ids` of one consumer, after re-checking each finding's premise.
 * `deletedProviders`: providers the same plan deletes (repair providers): their generation is guarded
 * by the provider delete itself, so they are not bumped.
 */
export function planRemoval(
  model: CloudModel,
  b: PlanBuilder,
  consumer: string,
  ids: Set<number>,
  findings: LeakFinding[],
  deletedProviders: ReadonlySet<number> = new Set(),
): void {
  const allocs = model.allocationsByConsumer.get(consumer) ?? []
  const doomed = allocs.filter((a) => ids.has(a.id))
  if (doomed.length === 0) return
  for (const f of findings) b.finding(f.code, subjectOf(f), f.message)
  b.about(leakSubject(model, consumer, findings[0], doomed))
  const codes = [...new Set(findings.map((f) => f.code))].join(', ')

  // Re-validate the premise of each finding in the cell databases.
  for (const f of findings) premiseChecks(model, b, consumer, f)
  lockConsumerAllocations(model, b, consumer, `${codes}: the consumer's allocations are exactly those audited`)

  const providers = new Map<number, ResourceProvider>()
  for (const a of doomed) {
    const amount = `${model.rc.name(a.resource_class_id)}=${a.used}`
    b.add(
      {
        db: 'placement',
        table: 'allocations',
        op: 'delete',
        key: {id: a.id},
        expect: allocationRow(a),
        why: `${codes}: leaked ${amount} of ${consumer}`,
        code: findings[0].code,
      },
      amount,
    )
    const rp = model.providersById.get(a.resource_provider_id)
    if (rp) providers.set(rp.id, rp)
  }
  for (const rp of providers.values()) if (!deletedProviders.has(rp.id)) b.bumpProvider(rp, `allocations of ${consumer} removed`)
  const c = model.consumersByUuid.get(consumer)
  if (!c) return
  if (doomed.length === allocs.length) {
    b.add(
      {
        db: 'placement',
        table: 'consumers',
        op: 'delete',
        key: {id: c.id},
        expect: {uuid: c.uuid, project_id: c.project_id, user_id: c.user_id, generation: c.generation},
        why: `consumer ${consumer} has no allocation left (placement deletes such consumers)`,
      },
      'no allocation is left to it',
    )
  } else {
    b.bumpConsumer(c, 'some of its allocations removed')
  }
}

/** Whom a leak belongs to, as `openstack server show` / `openstack resource provider show` name them. */
const LEAK_OWNER: Record<LeakFinding['code'], string> = {
  'allocation.consumer-deleted': 'deleted instance',
  'allocation.consumer-unknown': 'unknown consumer',
  'allocation.migration-finished': 'finished migration',
  'allocation.evacuation-leftover': 'evacuated instance',
  'allocation.wrong-provider': 'instance',
}

/** 'deleted instance <uuid> on cmp-r1-04 (cell cell1)': the plain-words subject of a removal. */
function leakSubject(model: CloudModel, consumer: string, f: LeakFinding, allocs: Allocation[]): string {
  const hosts = [...new Set(allocs.map((a) => model.providersById.get(a.resource_provider_id)).map((rp) => (rp ? (model.rootOf(rp).name ?? rp.uuid) : '?')))]
  return `${LEAK_OWNER[f.code]} ${consumer} on ${hosts.join(', ')}${f.subject.cell ? ` (cell ${f.subject.cell})` : ''}`
}

function premiseChecks(model: CloudModel, b: PlanBuilder, consumer: string, f: LeakFinding): void {
  switch (f.code) {
    case 'allocation.consumer-deleted': {
      // Deleted where it was, live nowhere.
      for (const {db, uuid} of allCellDbs(model, b)) {
        const rows = (model.instancesByUuid.get(consumer) ?? []).filter((i) => i.cell_uuid === uuid).sort((x, y) => x.id - y.id)
        b.add({
          db,
          table: 'instances',
          op: 'check',
          where: {uuid: consumer},
          rows: rows.map((i) => ({id: i.id, deleted: i.deleted})),
          why: `${f.code}: instance ${consumer} is still deleted`,
        })
      }
      b.add({
        db: 'nova_api',
        table: 'build_requests',
        op: 'check',
        where: {instance_uuid: consumer},
        rows: [],
        why: `${f.code}: no build request for ${consumer}`,
      })
      return
    }
    case 'allocation.consumer-unknown': {
      for (const {db} of allCellDbs(model, b)) {
        b.add({db, table: 'instances', op: 'check', where: {uuid: consumer}, rows: [], why: `${f.code}: ${consumer} is still no instance`})
        b.add({db, table: 'migrations', op: 'check', where: {uuid: consumer}, rows: [], why: `${f.code}: ${consumer} is still no migration`})
      }
      b.add({
        db: 'nova_api',
        table: 'build_requests',
        op: 'check',
        where: {instance_uuid: consumer},
        rows: [],
        why: `${f.code}: no build request for ${consumer}`,
      })
      return
    }
    case 'allocation.migration-finished':
    case 'allocation.evacuation-leftover': {
      const m = f.evidence.migration
      const db = cellDbOf(model, b, m.cell_uuid)
      b.add({
        db,
        table: 'migrations',
        op: 'check',
        where: {id: m.id},
        rows: [{id: m.id, status: m.status, deleted: m.deleted}],
        why: `${f.code}: migration ${m.id} is still ${m.status}${m.deleted === 0 ? '' : ' and deleted'}`,
      })
      if (f.code === 'allocation.evacuation-leftover') instanceCheck(model, b, consumer, f)
      return
    }
    case 'allocation.wrong-provider': {
      const m = f.evidence.migration
      if (m) {
        const db = cellDbOf(model, b, m.cell_uuid)
        b.add({
          db,
          table: 'migrations',
          op: 'check',
          where: {id: m.id},
          rows: [{id: m.id, status: m.status, source_node: m.source_node, dest_node: m.dest_node}],
          why: `${f.code}: migration ${m.id} unchanged`,
        })
        return
      }
      instanceCheck(model, b, consumer, f)
      return
    }
  }
}

/** The live instance is still where the finding saw it, with the same migrations. */
function instanceCheck(model: CloudModel, b: PlanBuilder, consumer: string, f: Finding): void {
  const live = model.liveInstances(consumer)
  for (const inst of live) {
    const db = cellDbOf(model, b, inst.cell_uuid)
    b.add({
      db,
      table: 'instances',
      op: 'check',
      where: {uuid: consumer, deleted: 0},
      rows: [instanceGuard(inst)],
      why: `${f.code}: instance ${consumer} still on ${inst.node ?? inst.host}`,
    })
    const migs = (model.migrationsByInstance.get(consumer) ?? []).filter((m) => m.cell_uuid === inst.cell_uuid).sort((x, y) => x.id - y.id)
    b.add({
      db,
      table: 'migrations',
      op: 'check',
      where: {instance_uuid: consumer},
      rows: migs.map((m) => ({id: m.id, status: m.status, deleted: m.deleted})),
      why: `${f.code}: no migration of ${consumer} started or changed`,
    })
  }
}

/** The live instance of a consumer when it holds no allocation on the provider tree of its own node. */
function homeWithoutAllocations(model: CloudModel, consumer: string) {
  const live = model.liveInstances(consumer)
  if (live.length !== 1) return undefined
  const inst = live[0]
  const cn = model.liveComputeNodesByKey.get(nodeKey(inst.host, inst.node))
  const rp = cn?.uuid ? model.providersByUuid.get(cn.uuid) : undefined
  if (!rp) return undefined
  const tree = new Set(model.tree(model.rootOf(rp)).map((p) => p.id))
  if ((model.allocationsByConsumer.get(consumer) ?? []).some((a) => tree.has(a.resource_provider_id))) return undefined
  return {...inst, provider: model.rootOf(rp)}
}

/** wrong-provider with --heal: the rows move to the instance's own provider, amounts kept, where they fit. */
function planMove(model: CloudModel, b: PlanBuilder, f: LeakFinding, inst: ReturnType<typeof homeWithoutAllocations> & object): void {
  const consumer = inst.uuid
  const target = inst.provider
  const subject = subjectOf(f)
  const ids = new Set(f.evidence.allocations.map((a) => a.id))
  const rows = (model.allocationsByConsumer.get(consumer) ?? []).filter((a) => ids.has(a.id))
  const c = model.consumersByUuid.get(consumer)
  if (!c || rows.length === 0) return void b.skip(f.code, subject, 'consumer or allocation rows missing: re-audit')
  for (const a of rows) {
    const inv = model.inventory(target.id, a.resource_class_id)
    if (!inv) return void b.skip(f.code, subject, `${target.name ?? target.uuid} has no ${model.rc.name(a.resource_class_id)} inventory: move it by hand`)
    if (model.usage(target.id, a.resource_class_id) + a.used > capacityOf(inv) + 1e-6)
      return void b.skip(
        f.code,
        subject,
        `${model.rc.name(a.resource_class_id)}=${a.used} does not fit on ${target.name ?? target.uuid} (placement would refuse it)`,
      )
  }
  b.finding(f.code, subject, f.message)
  b.about(`instance ${consumer} on ${target.name ?? target.uuid} (cell ${model.cellLabel(inst.cell_uuid)}), whose allocations sit on another host`)
  instanceCheck(model, b, consumer, f)
  lockConsumerAllocations(model, b, consumer, `${f.code}: the consumer's allocations are exactly those audited`)
  for (const a of rows) {
    b.add(
      {
        db: 'placement',
        table: 'allocations',
        op: 'update',
        key: {id: a.id},
        expect: allocationRow(a),
        set: {resource_provider_id: target.id, updated_at: NOW},
        why: `${f.code} (--heal): ${model.rc.name(a.resource_class_id)}=${a.used} of ${consumer} moves to its own host ${target.name ?? target.uuid}`,
        code: f.code,
      },
      `${model.rc.name(a.resource_class_id)}=${a.used} to ${target.name ?? target.uuid}`,
    )
    const from = model.providersById.get(a.resource_provider_id)
    if (from) b.bumpProvider(from, `allocations of ${consumer} moved away`)
  }
  b.bumpProvider(target, `allocations of ${consumer} moved here`)
  b.bumpConsumer(c, 'allocations moved to its own host')
}

function placedOnFindingProvider(model: CloudModel, f: LeakFinding) {
  const rp = f.subject.provider_uuid ? model.providersByUuid.get(f.subject.provider_uuid) : undefined
  return rp ? liveOnProvider(model, f.subject.consumer_uuid, model.rootOf(rp)) : undefined
}
