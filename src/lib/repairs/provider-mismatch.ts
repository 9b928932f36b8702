/**
 * repair providers, provider.uuid-mismatch: the two strategies (the header of providers.ts describes
 * them). rekey gives the provider the compute node's uuid; move builds a new provider under that uuid,
 * moves the live consumers to it and removes the old tree.
 */
import type {FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Allocation, ComputeNode, ResourceProvider} from '../domain/snapshot.js'
import {cellDbOf, subjectOf} from './common.js'
import type {LeakFinding} from './leaks.js'
import {NOW, type PlanBuilder} from './plan.js'
import {deleteTree, leaksOnTree, moveConsumerAllocations, removeLeaked, treeAllocations} from './provider-tree.js'

interface MismatchContext {
  cn: ComputeNode
  root: ResourceProvider
  tree: ResourceProvider[]
  subject: string
}

function mismatchContext(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.uuid-mismatch'>): MismatchContext | undefined {
  const subject = subjectOf(f)
  const ev = f.evidence
  if (ev.providers.length !== 1)
    return void b.skip(f.code, subject, `${ev.providers.length} providers carry the name: decide by hand which one stands for the node`)
  const root = model.providersById.get(ev.providers[0].id)
  const cn = model.liveComputeNodes.find((x) => x.cell_uuid === ev.compute_node.cell_uuid && x.id === ev.compute_node.id)
  if (!root || !cn || !cn.uuid) return void b.skip(f.code, subject, 'provider or compute node row missing: re-audit')
  const db = cellDbOf(model, b, cn.cell_uuid)
  b.add({
    db,
    table: 'compute_nodes',
    op: 'check',
    where: {id: cn.id},
    rows: [{uuid: cn.uuid, hypervisor_hostname: cn.hypervisor_hostname, host: cn.host, deleted: 0}],
    why: `${f.code}: compute node ${cn.hypervisor_hostname} still live with uuid ${cn.uuid}`,
  })
  b.add({db: 'placement', table: 'resource_providers', op: 'check', where: {uuid: cn.uuid}, rows: [], why: `${f.code}: still no provider with uuid ${cn.uuid}`})
  return {cn, root, tree: model.tree(root), subject}
}

function restartNote(b: PlanBuilder, cn: ComputeNode): void {
  b.note(`Restart nova-compute on ${cn.host} after applying: its resource tracker caches the provider tree by uuid and only re-reads it on start.`)
}

export function planRekey(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.uuid-mismatch'>): void {
  const m = mismatchContext(model, b, f)
  if (!m) return
  const {cn, root, tree} = m
  b.finding(f.code, m.subject, f.message)
  b.about(`resource provider ${root.name ?? root.uuid} of compute node ${cn.hypervisor_hostname} (cell ${model.cellLabel(cn.cell_uuid)})`)
  b.add(
    {
      db: 'placement',
      table: 'resource_providers',
      op: 'update',
      key: {id: root.id},
      expect: {uuid: root.uuid, name: root.name, generation: root.generation, parent_provider_id: null},
      set: {uuid: cn.uuid as string, ...(root.root_provider_id === root.id ? {} : {root_provider_id: root.id}), updated_at: NOW},
      why: `${f.code} (rekey): provider ${root.name} takes the uuid of compute node ${cn.hypervisor_hostname} (${root.uuid} -> ${cn.uuid}); children, inventories and allocations follow by id`,
      code: f.code,
    },
    `uuid ${root.uuid} -> ${cn.uuid}`,
  )
  for (const child of tree.slice(1)) {
    if (child.root_provider_id === root.id) {
      b.add({
        db: 'placement',
        table: 'resource_providers',
        op: 'check',
        where: {id: child.id},
        rows: [{root_provider_id: root.id, parent_provider_id: child.parent_provider_id}],
        why: `${f.code}: child ${child.name ?? child.uuid} still under ${root.name}`,
      })
      continue
    }
    b.add({
      db: 'placement',
      table: 'resource_providers',
      op: 'update',
      key: {id: child.id},
      expect: {root_provider_id: child.root_provider_id, parent_provider_id: child.parent_provider_id, generation: child.generation},
      set: {root_provider_id: root.id, updated_at: NOW},
      why: `${f.code}: child ${child.name ?? child.uuid} points at its root ${root.id}`,
      code: f.code,
    })
  }
  b.bumpProvider(root, 're-keyed to the compute node uuid')
  restartNote(b, cn)
}

export function planMove(
  model: CloudModel,
  b: PlanBuilder,
  f: FindingOf<'provider.uuid-mismatch'>,
  leakOf: Map<number, LeakFinding>,
  nextId: () => number,
): void {
  const m = mismatchContext(model, b, f)
  if (!m) return
  const {cn, root, tree, subject} = m
  const allocs = treeAllocations(model, tree)
  leakOf = leaksOnTree(model, root, allocs, leakOf)
  const onChildren = allocs.filter((a) => a.resource_provider_id !== root.id && !leakOf.has(a.id))
  if (onChildren.length > 0)
    return void b.skip(
      f.code,
      subject,
      `live allocations on child providers (${[...new Set(onChildren.map((a) => a.consumer_id))].join(', ')}): use --strategy rekey, which keeps the tree`,
    )
  b.finding(f.code, subject, f.message)
  const newId = nextId()
  const what = `provider ${cn.hypervisor_hostname} (${cn.uuid})`
  const newProvider = `new resource provider ${cn.uuid} of compute node ${cn.hypervisor_hostname} (cell ${model.cellLabel(cn.cell_uuid)}), with the old provider's inventories, traits and aggregate links`
  b.about(newProvider)
  createMoveTarget(model, b, f, {root, cn, newId, what})
  const treeIds = new Set(tree.map((x) => x.id))
  removeLeaked(model, b, allocs, leakOf, treeIds)
  moveConsumers(model, b, f, allocs, leakOf, {cn, newId, what})
  deleteTree(model, b, tree, f.code)
  b.about(newProvider)
  b.add(
    {
      db: 'placement',
      table: 'resource_providers',
      op: 'update',
      key: {id: newId},
      expect: {uuid: cn.uuid as string, name: null, root_provider_id: null},
      set: {name: cn.hypervisor_hostname, root_provider_id: newId},
      why: `${f.code}: ${what} takes the name the old provider held and becomes its own root`,
      code: f.code,
    },
    `takes the name ${cn.hypervisor_hostname} once the old provider is gone`,
  )
  restartNote(b, cn)
}

/** The new provider, nameless and not yet its own root, with the old root's inventories, traits and aggregate links. */
function createMoveTarget(
  model: CloudModel,
  b: PlanBuilder,
  f: FindingOf<'provider.uuid-mismatch'>,
  target: {root: ResourceProvider; cn: ComputeNode; newId: number; what: string},
): void {
  const {root, cn, newId, what} = target
  const p = model.snapshot.placement
  // Created nameless (the name is unique and the old root holds it until planMove deletes that) and
  // without its self-reference (set at the end, as placement sets root_provider_id after the insert).
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'insert',
    unique: {uuid: cn.uuid as string},
    values: {
      created_at: NOW,
      updated_at: null,
      id: newId,
      uuid: cn.uuid as string,
      name: null,
      generation: 1,
      root_provider_id: null,
      parent_provider_id: null,
    },
    why: `${f.code} (move): create ${what} for compute node ${cn.hypervisor_hostname}`,
    code: f.code,
  })
  for (const i of [...(model.inventoriesByProvider.get(root.id) ?? [])].sort((x, y) => x.id - y.id))
    b.add(
      {
        db: 'placement',
        table: 'inventories',
        op: 'insert',
        unique: {resource_provider_id: newId, resource_class_id: i.resource_class_id},
        values: {
          created_at: NOW,
          updated_at: null,
          resource_provider_id: newId,
          resource_class_id: i.resource_class_id,
          total: i.total,
          reserved: i.reserved,
          min_unit: i.min_unit,
          max_unit: i.max_unit,
          step_size: i.step_size,
          allocation_ratio: i.allocation_ratio,
        },
        why: `${f.code}: ${model.rc.name(i.resource_class_id)} inventory of the old provider, copied`,
        code: f.code,
      },
      model.rc.name(i.resource_class_id),
    )
  for (const t of p.resource_provider_traits.filter((x) => x.resource_provider_id === root.id).sort((x, y) => x.trait_id - y.trait_id))
    b.add(
      {
        db: 'placement',
        table: 'resource_provider_traits',
        op: 'insert',
        unique: {resource_provider_id: newId, trait_id: t.trait_id},
        values: {created_at: NOW, updated_at: null, trait_id: t.trait_id, resource_provider_id: newId},
        why: `${f.code}: trait ${model.traitNamesById.get(t.trait_id) ?? t.trait_id}, copied`,
        code: f.code,
      },
      model.traitNamesById.get(t.trait_id) ?? String(t.trait_id),
    )
  for (const a of p.resource_provider_aggregates.filter((x) => x.resource_provider_id === root.id).sort((x, y) => x.aggregate_id - y.aggregate_id))
    b.add(
      {
        db: 'placement',
        table: 'resource_provider_aggregates',
        op: 'insert',
        unique: {resource_provider_id: newId, aggregate_id: a.aggregate_id},
        values: {created_at: NOW, updated_at: null, resource_provider_id: newId, aggregate_id: a.aggregate_id},
        why: `${f.code}: aggregate link, copied`,
        code: f.code,
      },
      model.placementAggregateUuidById.get(a.aggregate_id) ?? String(a.aggregate_id),
    )
}

/** The live consumers' allocations on the old root move to the new provider; leaks were removed before. */
function moveConsumers(
  model: CloudModel,
  b: PlanBuilder,
  f: FindingOf<'provider.uuid-mismatch'>,
  allocs: Allocation[],
  leakOf: Map<number, LeakFinding>,
  target: {cn: ComputeNode; newId: number; what: string},
): void {
  const {cn, newId, what} = target
  const moved = new Map<string, Allocation[]>()
  for (const a of allocs) {
    if (leakOf.has(a.id)) continue
    const list = moved.get(a.consumer_id)
    if (list) list.push(a)
    else moved.set(a.consumer_id, [a])
  }
  for (const [consumer, list] of moved) {
    b.about(`instance ${consumer} on ${cn.hypervisor_hostname}: its allocations move to the new provider`)
    moveConsumerAllocations(model, b, f.code, {consumer, allocations: list, toId: newId, what})
  }
}
