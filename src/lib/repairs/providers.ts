/**
 * repair providers: stale resource providers and provider uuid mismatches (seed 004).
 *
 * Stale provider: its leaked allocations go first (the same re-checked removal as `repair leaks`),
 * then, provider by provider from the leaves up, its trait links, aggregate links, inventories and
 * the provider row. Allocations that are not leaks (a live instance still placed there, a move in
 * progress) stop the whole provider: nothing of it is touched.
 *
 * uuid mismatch (a provider carries the compute node's name under another uuid, so nova-compute
 * fails with ResourceProviderCreationFailed), two strategies:
 * - rekey: the provider takes the compute node's uuid (the seed's manual UPDATE). Children,
 *   inventories, allocations, traits and aggregate links refer to the provider by id and follow;
 *   children whose root_provider_id does not point at the root are corrected.
 * - move: a new provider with the compute node's uuid and name gets the old root's inventories,
 *   traits and aggregate links, the live consumers' allocations move to it, and the old tree is
 *   removed as a stale provider is. Refused when live allocations sit on a child provider.
 *
 * Duplicate name (a renamed hypervisor: nova-compute made a node and provider under the new name and
 * deleted the old node as an orphan, but the old provider stayed with the allocations of the servers
 * still recorded on the old node): repaired like a stale provider whose live consumers move. Those
 * servers run on the same host, so each takes the host's one live node (instances.node, which nova's
 * resource tracker, moves and `nova-manage placement audit` match on) and its allocations move to that
 * node's provider; leaks are removed; the old tree is deleted. Refused when the host has several live
 * nodes, a consumer is not such a server (a move in progress, another host), or the live provider
 * lacks the capacity.
 *
 * Every other write is in placement; cell databases are only locked to re-check the compute node rows.
 */
import {filterFindings, runChecks} from '../checks/index.js'
import type {Finding, FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Allocation, ComputeNode, Instance, ResourceProvider} from '../domain/snapshot.js'
import {MIGRATION_DONE_STATUSES} from '../checks/context.js'
import {capacityOf} from '../domain/placement-capacity.js'
import {type RepairScope, allCellDbs, allocationRow, cellDbOf, instanceGuard, liveOnProvider, subjectOf} from './common.js'
import {type LeakFinding, isLeakFinding, planRemoval} from './leaks.js'
import {type DbKey, NOW, PlanBuilder, type RepairPlan, type Row} from './plan.js'

export const PROVIDER_STRATEGIES = ['rekey', 'move'] as const
export type ProviderStrategy = (typeof PROVIDER_STRATEGIES)[number]

export interface ProvidersOptions extends RepairScope {
  /** How to answer provider.uuid-mismatch; without it those findings are reported, not repaired. */
  strategy?: ProviderStrategy
  /** Only the finding of this provider uuid (or provider / host name). */
  provider?: string
  /** At most this many provider findings per plan; the rest waits for a re-run (exit 6). */
  maxCount?: number
  now?: string
}

export function planProviders(model: CloudModel, opts: ProvidersOptions = {}): RepairPlan {
  const b = new PlanBuilder('providers', opts.now, opts.maxCount)
  const findings = runChecks(model, {checks: ['providers', 'leaks']}).findings
  const leakOf = new Map<number, LeakFinding>()
  for (const f of findings)
    if (isLeakFinding(f)) for (const a of f.evidence.allocations) leakOf.set(a.id, f)

  const cellWrites = new Set<DbKey>()
  const ids = newProviderIds(model)
  const wanted = (f: Finding) => !opts.provider || [f.subject.provider_uuid, f.subject.host, f.subject.node].includes(opts.provider)
  // The leaks above stay whole: a provider of the chosen host or cell takes its leaks wherever the audit files them.
  for (const f of filterFindings(model, findings, {cell: opts.cell, host: opts.host})) {
    if (!wanted(f)) continue
    if (f.code === 'provider.stale') b.unit(() => planStale(model, b, f, leakOf))
    else if (f.code === 'provider.duplicate-name') b.unit(() => planDuplicate(model, b, f, leakOf, cellWrites))
    else if (f.code === 'provider.uuid-mismatch') {
      if (!opts.strategy) b.skip(f.code, subjectOf(f), 'choose a strategy: --strategy rekey (the provider takes the compute node uuid) or --strategy move (a new provider, allocations moved, old tree removed)')
      else if (opts.strategy === 'rekey') b.unit(() => planRekey(model, b, f))
      else b.unit(() => planMove(model, b, f, leakOf, ids))
    } else if (f.code === 'provider.undecided') b.skip(f.code, subjectOf(f), 'a cell could not be read: a provider is only stale when every cell says so')
  }
  if (b.findings.length > 0 && cellWrites.size === 0) b.note('Every write is in placement (one transaction); the cell databases are only locked to re-check the compute node rows.')
  // Instance rows first: should placement then fail, a re-run finds the servers on the live node with
  // their allocations still on the old provider, and finishes the move.
  return b.build([...cellWrites, 'placement'])
}

/**
 * Ids for the providers `--strategy move` creates: past the highest id seen, one per provider of the
 * plan. The id is written explicitly because the plan's later steps (inventories, allocations) refer
 * to it; a provider another process created since makes the insert fail and the run abort (exit 5).
 */
function newProviderIds(model: CloudModel): () => number {
  let last = model.snapshot.placement.resource_providers.reduce((x, r) => Math.max(x, r.id), 0)
  return () => ++last
}

/** The provider rows of a tree as observed, for the early lock on each (placement bumps generations there). */
const providerGuard = (p: ResourceProvider): Row => ({id: p.id, uuid: p.uuid, name: p.name, generation: p.generation, root_provider_id: p.root_provider_id, parent_provider_id: p.parent_provider_id})

const treeAllocations = (model: CloudModel, tree: ResourceProvider[]): Allocation[] => tree.flatMap((p) => model.allocationsByProvider.get(p.id) ?? [])

/** Compute node rows with this uuid, per cell, exactly as observed (the absence of a live one is the premise). */
function computeNodeChecks(model: CloudModel, b: PlanBuilder, uuid: string, code: string, why: string): void {
  for (const {db, uuid: cellUuid} of allCellDbs(model, b)) {
    const rows = (model.computeNodesByUuid.get(uuid) ?? []).filter((cn) => cn.cell_uuid === cellUuid).sort((x, y) => x.id - y.id)
    b.add({db, table: 'compute_nodes', op: 'check', where: {uuid}, rows: rows.map((cn) => ({id: cn.id, deleted: cn.deleted})), why: `${code}: ${why}`})
  }
}

/** Removes the allocations on a tree that a leak finding names (re-checked as `repair leaks` does); the others stay. */
function removeLeaked(model: CloudModel, b: PlanBuilder, allocs: Allocation[], leakOf: Map<number, LeakFinding>, deleted: ReadonlySet<number>): void {
  const byConsumer = new Map<string, {ids: Set<number>; findings: LeakFinding[]}>()
  for (const a of allocs) {
    const f = leakOf.get(a.id)
    if (!f) continue
    let r = byConsumer.get(a.consumer_id)
    if (!r) byConsumer.set(a.consumer_id, (r = {ids: new Set(), findings: []}))
    r.ids.add(a.id)
    if (!r.findings.includes(f)) r.findings.push(f)
  }
  for (const [consumer, r] of byConsumer) planRemoval(model, b, consumer, r.ids, r.findings, deleted)
}

/** Trait links, aggregate links, inventories, then the provider: for each provider of the tree, leaves first. */
function deleteTree(model: CloudModel, b: PlanBuilder, tree: ResourceProvider[], code: string): void {
  const p = model.snapshot.placement
  for (const rp of [...tree].reverse()) {
    const what = `provider ${rp.name ?? rp.uuid}`
    b.about(`${rp.parent_provider_id === null ? 'resource provider' : 'child provider'} ${rp.name ?? rp.uuid}${rp.name ? ` (${rp.uuid})` : ''}`)
    const traits = p.resource_provider_traits.filter((t) => t.resource_provider_id === rp.id).sort((x, y) => x.trait_id - y.trait_id)
    const aggs = p.resource_provider_aggregates.filter((a) => a.resource_provider_id === rp.id).sort((x, y) => x.aggregate_id - y.aggregate_id)
    const invs = [...(model.inventoriesByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
    const children = [...(model.childrenByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
    b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {id: rp.id}, rows: [providerGuard(rp)], why: `${code}: ${what} unchanged (generation ${rp.generation})`})
    b.add({db: 'placement', table: 'resource_provider_traits', op: 'check', where: {resource_provider_id: rp.id}, rows: traits.map((t) => ({trait_id: t.trait_id})), why: `${code}: the traits of ${what} are those observed`})
    b.add({db: 'placement', table: 'resource_provider_aggregates', op: 'check', where: {resource_provider_id: rp.id}, rows: aggs.map((a) => ({aggregate_id: a.aggregate_id})), why: `${code}: the aggregates of ${what} are those observed`})
    b.add({db: 'placement', table: 'inventories', op: 'check', where: {resource_provider_id: rp.id}, rows: invs.map((i) => ({id: i.id, resource_class_id: i.resource_class_id})), why: `${code}: the inventories of ${what} are those observed`})
    b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {parent_provider_id: rp.id}, rows: children.map((c) => ({id: c.id})), why: `${code}: no new child under ${what}`})
    const allocs = [...(model.allocationsByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
    b.add({db: 'placement', table: 'allocations', op: 'check', where: {resource_provider_id: rp.id}, rows: allocs.map((a) => ({id: a.id})), why: `${code}: no allocation on ${what} besides those removed or moved`})
    for (const t of traits)
      b.add({db: 'placement', table: 'resource_provider_traits', op: 'delete', key: {resource_provider_id: rp.id, trait_id: t.trait_id}, expect: {}, why: `${code}: trait ${model.traitNamesById.get(t.trait_id) ?? t.trait_id} of ${what}`, code}, model.traitNamesById.get(t.trait_id) ?? String(t.trait_id))
    for (const a of aggs)
      b.add({db: 'placement', table: 'resource_provider_aggregates', op: 'delete', key: {resource_provider_id: rp.id, aggregate_id: a.aggregate_id}, expect: {}, why: `${code}: aggregate ${model.placementAggregateUuidById.get(a.aggregate_id) ?? a.aggregate_id} link of ${what}`, code}, model.placementAggregateUuidById.get(a.aggregate_id) ?? String(a.aggregate_id))
    for (const i of invs)
      b.add({db: 'placement', table: 'inventories', op: 'delete', key: {id: i.id}, expect: {resource_provider_id: rp.id, resource_class_id: i.resource_class_id, total: i.total, reserved: i.reserved}, why: `${code}: ${model.rc.name(i.resource_class_id)} inventory of ${what}`, code}, model.rc.name(i.resource_class_id))
    const {id: _id, ...observed} = providerGuard(rp)
    if (rp.root_provider_id === rp.id) {
      // A root refers to itself; InnoDB refuses to delete a row its own foreign key points at. Placement
      // clears root_provider_id first, in the same transaction; so do we.
      b.add({db: 'placement', table: 'resource_providers', op: 'update', key: {id: rp.id}, expect: {...observed}, set: {root_provider_id: null}, why: `${code}: clear the self-reference of ${what} before deleting it, as placement does`, code}, 'root_provider_id cleared first, as placement does')
      observed.root_provider_id = null
    }
    b.add({db: 'placement', table: 'resource_providers', op: 'delete', key: {id: rp.id}, expect: observed, why: `${code}: ${what}${rp.parent_provider_id === null ? '' : ' (child, before its parent)'}`, code})
  }
}

/**
 * The leak findings that hold for this tree: an allocation of a live instance placed on the host the
 * provider stands for is its home, not a leak, even if an audit calls it wrong-provider.
 */
function leaksOnTree(model: CloudModel, root: ResourceProvider, allocs: Allocation[], leakOf: Map<number, LeakFinding>): Map<number, LeakFinding> {
  const out = new Map<number, LeakFinding>()
  for (const a of allocs) {
    const f = leakOf.get(a.id)
    if (f && !liveOnProvider(model, a.consumer_id, root)) out.set(a.id, f)
  }
  return out
}

function planStale(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.stale'>, leakOf: Map<number, LeakFinding>): void {
  const subject = subjectOf(f)
  const ev = f.evidence
  const root = model.providersById.get(ev.provider.id)
  if (!root) return void b.skip(f.code, subject, 'the provider is gone from the snapshot: re-audit')
  if (ev.cause === 'service-deleted')
    return void b.skip(f.code, subject, 'its compute node row is still live (only the service is deleted): finish `openstack compute service delete`, or restart nova-compute on the host; removing the provider would leave the node without one')
  if (!model.allCellsAvailable) return void b.skip(f.code, subject, 'a cell could not be read: the compute node may live there')
  const tree = model.tree(root)
  const allocs = treeAllocations(model, tree)
  leakOf = leaksOnTree(model, root, allocs, leakOf)
  const live = allocs.filter((a) => !leakOf.has(a.id))
  if (live.length > 0) {
    const consumers = [...new Set(live.map((a) => a.consumer_id))]
    return void b.skip(f.code, subject, `refused: consumer(s) ${consumers.join(', ')} hold allocations on it that are not leaks (a live instance placed there or a move in progress); evacuate or delete them first`)
  }
  b.finding(f.code, subject, f.message)
  computeNodeChecks(model, b, root.uuid, f.code, `no live compute node has uuid ${root.uuid}`)
  removeLeaked(model, b, allocs, leakOf, new Set(tree.map((p) => p.id)))
  deleteTree(model, b, tree, f.code)
}

interface MismatchContext {
  cn: ComputeNode
  root: ResourceProvider
  tree: ResourceProvider[]
  subject: string
}

function mismatchContext(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.uuid-mismatch'>): MismatchContext | undefined {
  const subject = subjectOf(f)
  const ev = f.evidence
  if (ev.providers.length !== 1) return void b.skip(f.code, subject, `${ev.providers.length} providers carry the name: decide by hand which one stands for the node`)
  const root = model.providersById.get(ev.providers[0].id)
  const cn = model.liveComputeNodes.find((x) => x.cell_uuid === ev.compute_node.cell_uuid && x.id === ev.compute_node.id)
  if (!root || !cn || !cn.uuid) return void b.skip(f.code, subject, 'provider or compute node row missing: re-audit')
  const db = cellDbOf(model, b, cn.cell_uuid)
  b.add({db, table: 'compute_nodes', op: 'check', where: {id: cn.id}, rows: [{uuid: cn.uuid, hypervisor_hostname: cn.hypervisor_hostname, host: cn.host, deleted: 0}], why: `${f.code}: compute node ${cn.hypervisor_hostname} still live with uuid ${cn.uuid}`})
  b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {uuid: cn.uuid}, rows: [], why: `${f.code}: still no provider with uuid ${cn.uuid}`})
  return {cn, root, tree: model.tree(root), subject}
}

function restartNote(b: PlanBuilder, cn: ComputeNode): void {
  b.note(`Restart nova-compute on ${cn.host} after applying: its resource tracker caches the provider tree by uuid and only re-reads it on start.`)
}

function planRekey(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.uuid-mismatch'>): void {
  const m = mismatchContext(model, b, f)
  if (!m) return
  const {cn, root, tree} = m
  b.finding(f.code, m.subject, f.message)
  b.about(`resource provider ${root.name ?? root.uuid} of compute node ${cn.hypervisor_hostname} (cell ${model.cellLabel(cn.cell_uuid)})`)
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'update',
    key: {id: root.id},
    expect: {uuid: root.uuid, name: root.name, generation: root.generation, parent_provider_id: null},
    set: {uuid: cn.uuid as string, ...(root.root_provider_id === root.id ? {} : {root_provider_id: root.id}), updated_at: NOW},
    why: `${f.code} (rekey): provider ${root.name} takes the uuid of compute node ${cn.hypervisor_hostname} (${root.uuid} -> ${cn.uuid}); children, inventories and allocations follow by id`,
    code: f.code,
  }, `uuid ${root.uuid} -> ${cn.uuid}`)
  for (const child of tree.slice(1)) {
    if (child.root_provider_id === root.id) {
      b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {id: child.id}, rows: [{root_provider_id: root.id, parent_provider_id: child.parent_provider_id}], why: `${f.code}: child ${child.name ?? child.uuid} still under ${root.name}`})
      continue
    }
    b.add({db: 'placement', table: 'resource_providers', op: 'update', key: {id: child.id}, expect: {root_provider_id: child.root_provider_id, parent_provider_id: child.parent_provider_id, generation: child.generation}, set: {root_provider_id: root.id, updated_at: NOW}, why: `${f.code}: child ${child.name ?? child.uuid} points at its root ${root.id}`, code: f.code})
  }
  b.bumpProvider(root, 're-keyed to the compute node uuid')
  restartNote(b, cn)
}

function planMove(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.uuid-mismatch'>, leakOf: Map<number, LeakFinding>, nextId: () => number): void {
  const m = mismatchContext(model, b, f)
  if (!m) return
  const {cn, root, tree, subject} = m
  const allocs = treeAllocations(model, tree)
  leakOf = leaksOnTree(model, root, allocs, leakOf)
  const onChildren = allocs.filter((a) => a.resource_provider_id !== root.id && !leakOf.has(a.id))
  if (onChildren.length > 0)
    return void b.skip(f.code, subject, `live allocations on child providers (${[...new Set(onChildren.map((a) => a.consumer_id))].join(', ')}): use --strategy rekey, which keeps the tree`)
  b.finding(f.code, subject, f.message)
  const p = model.snapshot.placement
  const newId = nextId()
  const what = `provider ${cn.hypervisor_hostname} (${cn.uuid})`
  const newProvider = `new resource provider ${cn.uuid} of compute node ${cn.hypervisor_hostname} (cell ${model.cellLabel(cn.cell_uuid)}), with the old provider's inventories, traits and aggregate links`
  b.about(newProvider)
  // Created nameless (the name is unique and the old root holds it until it is deleted below) and
  // without its self-reference (set at the end, as placement sets root_provider_id after the insert).
  b.add({db: 'placement', table: 'resource_providers', op: 'insert', unique: {uuid: cn.uuid as string}, values: {created_at: NOW, updated_at: null, id: newId, uuid: cn.uuid as string, name: null, generation: 1, root_provider_id: null, parent_provider_id: null}, why: `${f.code} (move): create ${what} for compute node ${cn.hypervisor_hostname}`, code: f.code})
  for (const i of [...(model.inventoriesByProvider.get(root.id) ?? [])].sort((x, y) => x.id - y.id))
    b.add({db: 'placement', table: 'inventories', op: 'insert', unique: {resource_provider_id: newId, resource_class_id: i.resource_class_id}, values: {created_at: NOW, updated_at: null, resource_provider_id: newId, resource_class_id: i.resource_class_id, total: i.total, reserved: i.reserved, min_unit: i.min_unit, max_unit: i.max_unit, step_size: i.step_size, allocation_ratio: i.allocation_ratio}, why: `${f.code}: ${model.rc.name(i.resource_class_id)} inventory of the old provider, copied`, code: f.code}, model.rc.name(i.resource_class_id))
  for (const t of p.resource_provider_traits.filter((x) => x.resource_provider_id === root.id).sort((x, y) => x.trait_id - y.trait_id))
    b.add({db: 'placement', table: 'resource_provider_traits', op: 'insert', unique: {resource_provider_id: newId, trait_id: t.trait_id}, values: {created_at: NOW, updated_at: null, trait_id: t.trait_id, resource_provider_id: newId}, why: `${f.code}: trait ${model.traitNamesById.get(t.trait_id) ?? t.trait_id}, copied`, code: f.code}, model.traitNamesById.get(t.trait_id) ?? String(t.trait_id))
  for (const a of p.resource_provider_aggregates.filter((x) => x.resource_provider_id === root.id).sort((x, y) => x.aggregate_id - y.aggregate_id))
    b.add({db: 'placement', table: 'resource_provider_aggregates', op: 'insert', unique: {resource_provider_id: newId, aggregate_id: a.aggregate_id}, values: {created_at: NOW, updated_at: null, resource_provider_id: newId, aggregate_id: a.aggregate_id}, why: `${f.code}: aggregate link, copied`, code: f.code}, model.placementAggregateUuidById.get(a.aggregate_id) ?? String(a.aggregate_id))

  const treeIds = new Set(tree.map((x) => x.id))
  removeLeaked(model, b, allocs, leakOf, treeIds)
  const moved = new Map<string, Allocation[]>()
  for (const a of allocs) {
    if (leakOf.has(a.id)) continue
    const list = moved.get(a.consumer_id)
    if (list) list.push(a)
    else moved.set(a.consumer_id, [a])
  }
  for (const [consumer, list] of moved) {
    const all = [...(model.allocationsByConsumer.get(consumer) ?? [])].sort((x, y) => x.id - y.id)
    b.about(`instance ${consumer} on ${cn.hypervisor_hostname}: its allocations move to the new provider`)
    b.add({db: 'placement', table: 'allocations', op: 'check', where: {consumer_id: consumer}, rows: all.map(allocationRow), why: `${f.code}: the allocations of ${consumer} are exactly those observed`})
    for (const a of list)
      b.add({db: 'placement', table: 'allocations', op: 'update', key: {id: a.id}, expect: allocationRow(a), set: {resource_provider_id: newId, updated_at: NOW}, why: `${f.code}: ${model.rc.name(a.resource_class_id)}=${a.used} of ${consumer} moves to ${what}`, code: f.code}, `${model.rc.name(a.resource_class_id)}=${a.used}`)
    const c = model.consumersByUuid.get(consumer)
    if (c) b.bumpConsumer(c, `allocations moved to ${what}`)
  }
  deleteTree(model, b, tree, f.code)
  b.about(newProvider)
  b.add({db: 'placement', table: 'resource_providers', op: 'update', key: {id: newId}, expect: {uuid: cn.uuid as string, name: null, root_provider_id: null}, set: {name: cn.hypervisor_hostname, root_provider_id: newId}, why: `${f.code}: ${what} takes the name the old provider held and becomes its own root`, code: f.code}, `takes the name ${cn.hypervisor_hostname} once the old provider is gone`)
  restartNote(b, cn)
}

function planDuplicate(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.duplicate-name'>, leakOf: Map<number, LeakFinding>, cellWrites: Set<DbKey>): void {
  const subject = subjectOf(f)
  if (!model.allCellsAvailable) return void b.skip(f.code, subject, 'a cell could not be read: the servers on the old provider may live there')
  const ev = f.evidence
  const live = ev.providers.filter((p) => !p.stale && p.compute_node)
  if (live.length !== 1) return void b.skip(f.code, subject, `${live.length} providers of the host have a live compute node: decide by hand which one the servers run on`)
  const keep = model.providersById.get(live[0].id)
  const ref = live[0].compute_node
  const cn = ref ? model.liveComputeNodes.find((x) => x.cell_uuid === ref.cell_uuid && x.id === ref.id) : undefined
  if (!keep || !cn || cn.uuid !== keep.uuid || cn.host === null || cn.hypervisor_hostname === null) return void b.skip(f.code, subject, 'provider or compute node row missing: re-audit')
  const nodesOfHost = model.liveComputeNodes.filter((x) => x.host === cn.host)
  if (nodesOfHost.length !== 1) return void b.skip(f.code, subject, `host ${cn.host} has ${nodesOfHost.length} live compute nodes: which one a server runs on is not known`)
  for (const e of ev.providers.filter((p) => p.stale)) {
    const old = model.providersById.get(e.id)
    if (!old) {
      b.skip(f.code, subject, 'the provider is gone from the snapshot: re-audit')
      continue
    }
    planDuplicateProvider(model, b, f, leakOf, cellWrites, {old, keep, cn: cn as ComputeNode & {host: string; hypervisor_hostname: string}})
  }
}

function planDuplicateProvider(
  model: CloudModel,
  b: PlanBuilder,
  f: Finding,
  leakOf: Map<number, LeakFinding>,
  cellWrites: Set<DbKey>,
  m: {old: ResourceProvider; keep: ResourceProvider; cn: ComputeNode & {host: string; hypervisor_hostname: string}},
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
    else if (total > capacityOf(inv) + 1e-6) refusals.push(`${model.rc.name(rcId)} on ${keep.name ?? keep.uuid} would be ${total}, over its capacity ${capacityOf(inv)}`)
  }
  if (refusals.length > 0) return void b.skip(f.code, subject, `refused: ${refusals.join('; ')}`)

  b.finding(f.code, subject, f.message)
  const what = `provider ${keep.name ?? keep.uuid}`
  computeNodeChecks(model, b, old.uuid, f.code, `no live compute node has uuid ${old.uuid}`)
  const cellDbKey = cellDbOf(model, b, cn.cell_uuid)
  b.add({db: cellDbKey, table: 'compute_nodes', op: 'check', where: {host: cn.host, deleted: 0}, rows: [{id: cn.id, uuid: cn.uuid, hypervisor_hostname: cn.hypervisor_hostname}], why: `${f.code}: ${cn.hypervisor_hostname} is still the one live node of host ${cn.host}`})
  b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {id: keep.id}, rows: [providerGuard(keep)], why: `${f.code}: ${what} unchanged (generation ${keep.generation})`})
  removeLeaked(model, b, allocs, leakOf, new Set(tree.map((p) => p.id)))
  for (const [consumer, inst] of servers) {
    b.about(`instance ${consumer} on host ${cn.host} (cell ${model.cellLabel(cn.cell_uuid)}): moves from ${old.name ?? old.uuid} to ${keep.name ?? keep.uuid}`)
    if (inst.node !== cn.hypervisor_hostname || (inst.compute_id !== undefined && inst.compute_id !== cn.id)) {
      cellWrites.add(cellDbKey)
      b.add({db: cellDbKey, table: 'instances', op: 'update', key: {id: inst.id}, expect: instanceGuard(inst), set: {node: cn.hypervisor_hostname, ...(inst.compute_id === undefined ? {} : {compute_id: cn.id}), updated_at: NOW}, why: `${f.code}: server ${consumer} runs on host ${cn.host}, whose node is now ${cn.hypervisor_hostname} (was ${inst.node})`, code: f.code}, `node ${inst.node} -> ${cn.hypervisor_hostname}`)
    }
    const all = [...(model.allocationsByConsumer.get(consumer) ?? [])].sort((x, y) => x.id - y.id)
    b.add({db: 'placement', table: 'allocations', op: 'check', where: {consumer_id: consumer}, rows: all.map(allocationRow), why: `${f.code}: the allocations of ${consumer} are exactly those observed`})
    for (const a of moving.get(consumer) ?? [])
      b.add({db: 'placement', table: 'allocations', op: 'update', key: {id: a.id}, expect: allocationRow(a), set: {resource_provider_id: keep.id, updated_at: NOW}, why: `${f.code}: ${model.rc.name(a.resource_class_id)}=${a.used} of ${consumer} moves to ${what}`, code: f.code}, `${model.rc.name(a.resource_class_id)}=${a.used}`)
    const c = model.consumersByUuid.get(consumer)
    if (c) b.bumpConsumer(c, `allocations moved to ${what}`)
  }
  if (servers.size > 0) {
    b.bumpProvider(keep, `allocations moved in from ${old.name ?? old.uuid}`)
    b.note(`nova-compute on ${cn.host} counts the moved servers in ${cn.hypervisor_hostname}'s usage and pinned CPUs at its next periodic update (or: cloudctl repair usage / repair pinning).`)
  }
  deleteTree(model, b, tree, f.code)
}
