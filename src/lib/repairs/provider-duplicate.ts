/**
 * repair providers, provider.duplicate-name: the old provider of a renamed hypervisor (the header of
 * providers.ts describes the repair). Its servers move to the host's one live node and provider, its
 * leaks are removed, its tree is deleted.
 */
import {MIGRATION_DONE_STATUSES} from '../checks/context.js'
import type {Finding, FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {capacityOf} from '../domain/placement-capacity.js'
import type {Allocation, ComputeNode, Instance, ResourceProvider} from '../domain/snapshot.js'
import {cellDbOf, instanceGuard, subjectOf} from './common.js'
import type {LeakFinding} from './leaks.js'
import {type DbKey, NOW, type PlanBuilder} from './plan.js'
import {computeNodeChecks, deleteTree, leaksOnTree, moveConsumerAllocations, providerGuard, removeLeaked, treeAllocations} from './provider-tree.js'

/** The host's one live compute node, with the host and name the move relies on. */
type LiveNode = ComputeNode & {host: string; hypervisor_hostname: string}

export function planDuplicate(
  model: CloudModel,
  b: PlanBuilder,
  f: FindingOf<'provider.duplicate-name'>,
  leakOf: Map<number, LeakFinding>,
  cellWrites: Set<DbKey>,
): void {
  const subject = subjectOf(f)
  if (!model.allCellsAvailable) return void b.skip(f.code, subject, 'a cell could not be read: the servers on the old provider may live there')
  const ev = f.evidence
  const live = ev.providers.filter((p) => !p.stale && p.compute_node)
  if (live.length !== 1)
    return void b.skip(f.code, subject, `${live.length} providers of the host have a live compute node: decide by hand which one the servers run on`)
  const keep = model.providersById.get(live[0].id)
  const ref = live[0].compute_node
  const cn = ref ? model.liveComputeNodes.find((x) => x.cell_uuid === ref.cell_uuid && x.id === ref.id) : undefined
  if (!keep || !cn || cn.uuid !== keep.uuid || cn.host === null || cn.hypervisor_hostname === null)
    return void b.skip(f.code, subject, 'provider or compute node row missing: re-audit')
  const nodesOfHost = model.liveComputeNodes.filter((x) => x.host === cn.host)
  if (nodesOfHost.length !== 1)
    return void b.skip(f.code, subject, `host ${cn.host} has ${nodesOfHost.length} live compute nodes: which one a server runs on is not known`)
  for (const e of ev.providers.filter((p) => p.stale)) {
    const old = model.providersById.get(e.id)
    if (!old) {
      b.skip(f.code, subject, 'the provider is gone from the snapshot: re-audit')
      continue
    }
    planDuplicateProvider(model, b, f, leakOf, cellWrites, {old, keep, cn: cn as LiveNode})
  }
}

function planDuplicateProvider(
  model: CloudModel,
  b: PlanBuilder,
  f: Finding,
  leakOf: Map<number, LeakFinding>,
  cellWrites: Set<DbKey>,
  m: {old: ResourceProvider; keep: ResourceProvider; cn: LiveNode},
): void {
  const {old, keep, cn} = m
  const subject = `${subjectOf(f)} old=${old.uuid}`
  const tree = model.tree(old)
  const allocs = treeAllocations(model, tree)
  leakOf = leaksOnTree(model, old, allocs, leakOf)
  const moving = new Map<string, Allocation[]>()
  for (const a of allocs) {
    if (leakOf.has(a.id)) continue
    const list = moving.get(a.consumer_id)
    if (list) list.push(a)
    else moving.set(a.consumer_id, [a])
  }
  const {servers, refusals} = duplicateChecks(model, old, keep, cn, moving)
  if (refusals.length > 0) return void b.skip(f.code, subject, `refused: ${refusals.join('; ')}`)

  b.finding(f.code, subject, f.message)
  const what = `provider ${keep.name ?? keep.uuid}`
  computeNodeChecks(model, b, old.uuid, f.code, `no live compute node has uuid ${old.uuid}`)
  const cellDbKey = cellDbOf(model, b, cn.cell_uuid)
  b.add({
    db: cellDbKey,
    table: 'compute_nodes',
    op: 'check',
    where: {host: cn.host, deleted: 0},
    rows: [{id: cn.id, uuid: cn.uuid, hypervisor_hostname: cn.hypervisor_hostname}],
    why: `${f.code}: ${cn.hypervisor_hostname} is still the one live node of host ${cn.host}`,
  })
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'check',
    where: {id: keep.id},
    rows: [providerGuard(keep)],
    why: `${f.code}: ${what} unchanged (generation ${keep.generation})`,
  })
  removeLeaked(model, b, allocs, leakOf, new Set(tree.map((p) => p.id)))
  for (const [consumer, inst] of servers)
    moveServer(model, b, f, cellWrites, {consumer, inst, old, keep, cn, cellDbKey, what, moving: moving.get(consumer) ?? []})
  if (servers.size > 0) {
    b.bumpProvider(keep, `allocations moved in from ${old.name ?? old.uuid}`)
    b.note(
      `nova-compute on ${cn.host} counts the moved servers in ${cn.hypervisor_hostname}'s usage and pinned CPUs at its next periodic update (or: cloudctl repair usage / repair pinning).`,
    )
  }
  deleteTree(model, b, tree, f.code)
}

/** The servers whose allocations can move to the live provider, and why the others (or the capacity) refuse it. */
function duplicateChecks(
  model: CloudModel,
  old: ResourceProvider,
  keep: ResourceProvider,
  cn: LiveNode,
  moving: Map<string, Allocation[]>,
): {servers: Map<string, Instance>; refusals: string[]} {
  const keepTree = new Set(model.tree(keep).map((p) => p.id))
  const servers = new Map<string, Instance>()
  const refusals: string[] = []
  for (const [consumer, list] of moving) {
    const copies = model.liveInstances(consumer)
    const inst = copies.length === 1 ? copies[0] : undefined
    if (!inst || inst.cell_uuid !== cn.cell_uuid || inst.host !== cn.host || (inst.node !== old.name && inst.node !== cn.hypervisor_hostname)) {
      refusals.push(`${consumer} is not a server of host ${cn.host} on node ${old.name ?? old.uuid} (a migration or another host)`)
      continue
    }
    if (inst.task_state !== null) refusals.push(`${consumer} has task_state ${inst.task_state}`)
    else if ((model.migrationsByInstance.get(consumer) ?? []).some((mg) => mg.deleted === 0 && !MIGRATION_DONE_STATUSES.has(mg.status ?? '')))
      refusals.push(`${consumer} has a migration in progress`)
    else if (list.some((a) => a.resource_provider_id !== old.id)) refusals.push(`${consumer} holds allocations on a child provider`)
    else if ((model.allocationsByConsumer.get(consumer) ?? []).some((a) => keepTree.has(a.resource_provider_id)))
      refusals.push(`${consumer} already holds allocations on ${keep.name ?? keep.uuid}`)
    else servers.set(consumer, inst)
  }
  const adding = new Map<number, number>()
  for (const list of moving.values()) for (const a of list) adding.set(a.resource_class_id, (adding.get(a.resource_class_id) ?? 0) + a.used)
  for (const [rcId, used] of adding) {
    const inv = model.inventory(keep.id, rcId)
    const total = model.usage(keep.id, rcId) + used
    if (!inv) refusals.push(`${keep.name ?? keep.uuid} has no ${model.rc.name(rcId)} inventory`)
    else if (total > capacityOf(inv) + 1e-6)
      refusals.push(`${model.rc.name(rcId)} on ${keep.name ?? keep.uuid} would be ${total}, over its capacity ${capacityOf(inv)}`)
  }
  return {servers, refusals}
}

/** One server of the host: its node (when it names the old one) and its allocations move to the live provider. */
function moveServer(
  model: CloudModel,
  b: PlanBuilder,
  f: Finding,
  cellWrites: Set<DbKey>,
  s: {consumer: string; inst: Instance; old: ResourceProvider; keep: ResourceProvider; cn: LiveNode; cellDbKey: DbKey; what: string; moving: Allocation[]},
): void {
  const {consumer, inst, old, keep, cn, cellDbKey, what, moving} = s
  b.about(`instance ${consumer} on host ${cn.host} (cell ${model.cellLabel(cn.cell_uuid)}): moves from ${old.name ?? old.uuid} to ${keep.name ?? keep.uuid}`)
  if (inst.node !== cn.hypervisor_hostname || (inst.compute_id !== undefined && inst.compute_id !== cn.id)) {
    cellWrites.add(cellDbKey)
    b.add(
      {
        db: cellDbKey,
        table: 'instances',
        op: 'update',
        key: {id: inst.id},
        expect: instanceGuard(inst),
        set: {node: cn.hypervisor_hostname, ...(inst.compute_id === undefined ? {} : {compute_id: cn.id}), updated_at: NOW},
        why: `${f.code}: server ${consumer} runs on host ${cn.host}, whose node is now ${cn.hypervisor_hostname} (was ${inst.node})`,
        code: f.code,
      },
      `node ${inst.node} -> ${cn.hypervisor_hostname}`,
    )
  }
  moveConsumerAllocations(model, b, f.code, {consumer, allocations: moving, toId: keep.id, what})
}
