/**
 * The provider-tree steps `repair providers` shares between its planners: the guards on a tree, the
 * removal of its leaked allocations, and its deletion leaves first.
 */
import type {CloudModel} from '../domain/model.js'
import type {Allocation, Inventory, ResourceProvider} from '../domain/snapshot.js'
import {allCellDbs, allocationRow, liveOnProvider, lockConsumerAllocations} from './common.js'
import {type LeakFinding, planRemoval} from './leaks.js'
import {NOW, type PlanBuilder, type Row} from './plan.js'

type Placement = CloudModel['snapshot']['placement']

/** The provider rows of a tree as observed, for the early lock on each (placement bumps generations there). */
export const providerGuard = (p: ResourceProvider): Row => ({
  id: p.id,
  uuid: p.uuid,
  name: p.name,
  generation: p.generation,
  root_provider_id: p.root_provider_id,
  parent_provider_id: p.parent_provider_id,
})

/**
 * A server's allocations moving to another provider of the same host: the consumer's allocations
 * locked exactly as observed, each moving row updated from its observed values, the consumer bumped.
 */
export function moveConsumerAllocations(
  model: CloudModel,
  b: PlanBuilder,
  code: string,
  move: {consumer: string; allocations: readonly Allocation[]; toId: number; what: string},
): void {
  const {consumer, toId, what} = move
  lockConsumerAllocations(model, b, consumer, `${code}: the allocations of ${consumer} are exactly those observed`)
  for (const a of move.allocations)
    b.add(
      {
        db: 'placement',
        table: 'allocations',
        op: 'update',
        key: {id: a.id},
        expect: allocationRow(a),
        set: {resource_provider_id: toId, updated_at: NOW},
        why: `${code}: ${model.rc.name(a.resource_class_id)}=${a.used} of ${consumer} moves to ${what}`,
        code,
      },
      `${model.rc.name(a.resource_class_id)}=${a.used}`,
    )
  const c = model.consumersByUuid.get(consumer)
  if (c) b.bumpConsumer(c, `allocations moved to ${what}`)
}

export const treeAllocations = (model: CloudModel, tree: ResourceProvider[]): Allocation[] => tree.flatMap((p) => model.allocationsByProvider.get(p.id) ?? [])

/** Compute node rows with this uuid, per cell, exactly as observed (the absence of a live one is the premise). */
export function computeNodeChecks(model: CloudModel, b: PlanBuilder, uuid: string, code: string, why: string): void {
  for (const {db, uuid: cellUuid} of allCellDbs(model, b)) {
    const rows = (model.computeNodesByUuid.get(uuid) ?? []).filter((cn) => cn.cell_uuid === cellUuid).sort((x, y) => x.id - y.id)
    b.add({db, table: 'compute_nodes', op: 'check', where: {uuid}, rows: rows.map((cn) => ({id: cn.id, deleted: cn.deleted})), why: `${code}: ${why}`})
  }
}

/** Removes the allocations on a tree that a leak finding names (re-checked as `repair leaks` does); the others stay. */
export function removeLeaked(model: CloudModel, b: PlanBuilder, allocs: Allocation[], leakOf: Map<number, LeakFinding>, deleted: ReadonlySet<number>): void {
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
export function deleteTree(model: CloudModel, b: PlanBuilder, tree: ResourceProvider[], code: string): void {
  for (const rp of [...tree].reverse()) deleteProvider(model, b, rp, code)
}

function deleteProvider(model: CloudModel, b: PlanBuilder, rp: ResourceProvider, code: string): void {
  const p = model.snapshot.placement
  const what = `provider ${rp.name ?? rp.uuid}`
  b.about(`${rp.parent_provider_id === null ? 'resource provider' : 'child provider'} ${rp.name ?? rp.uuid}${rp.name ? ` (${rp.uuid})` : ''}`)
  const traits = p.resource_provider_traits.filter((t) => t.resource_provider_id === rp.id).sort((x, y) => x.trait_id - y.trait_id)
  const aggs = p.resource_provider_aggregates.filter((a) => a.resource_provider_id === rp.id).sort((x, y) => x.aggregate_id - y.aggregate_id)
  const invs = [...(model.inventoriesByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
  guardProvider(model, b, rp, code, {traits, aggs, invs})
  for (const t of traits)
    b.add(
      {
        db: 'placement',
        table: 'resource_provider_traits',
        op: 'delete',
        key: {resource_provider_id: rp.id, trait_id: t.trait_id},
        expect: {},
        why: `${code}: trait ${model.traitNamesById.get(t.trait_id) ?? t.trait_id} of ${what}`,
        code,
      },
      model.traitNamesById.get(t.trait_id) ?? String(t.trait_id),
    )
  for (const a of aggs)
    b.add(
      {
        db: 'placement',
        table: 'resource_provider_aggregates',
        op: 'delete',
        key: {resource_provider_id: rp.id, aggregate_id: a.aggregate_id},
        expect: {},
        why: `${code}: aggregate ${model.placementAggregateUuidById.get(a.aggregate_id) ?? a.aggregate_id} link of ${what}`,
        code,
      },
      model.placementAggregateUuidById.get(a.aggregate_id) ?? String(a.aggregate_id),
    )
  for (const i of invs)
    b.add(
      {
        db: 'placement',
        table: 'inventories',
        op: 'delete',
        key: {id: i.id},
        expect: {resource_provider_id: rp.id, resource_class_id: i.resource_class_id, total: i.total, reserved: i.reserved},
        why: `${code}: ${model.rc.name(i.resource_class_id)} inventory of ${what}`,
        code,
      },
      model.rc.name(i.resource_class_id),
    )
  deleteProviderRow(b, rp, code, what)
}

/** The provider and what hangs on it exactly as observed, locked before anything of it is deleted. */
function guardProvider(
  model: CloudModel,
  b: PlanBuilder,
  rp: ResourceProvider,
  code: string,
  rows: {traits: Placement['resource_provider_traits']; aggs: Placement['resource_provider_aggregates']; invs: Inventory[]},
): void {
  const {traits, aggs, invs} = rows
  const what = `provider ${rp.name ?? rp.uuid}`
  const children = [...(model.childrenByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'check',
    where: {id: rp.id},
    rows: [providerGuard(rp)],
    why: `${code}: ${what} unchanged (generation ${rp.generation})`,
  })
  b.add({
    db: 'placement',
    table: 'resource_provider_traits',
    op: 'check',
    where: {resource_provider_id: rp.id},
    rows: traits.map((t) => ({trait_id: t.trait_id})),
    why: `${code}: the traits of ${what} are those observed`,
  })
  b.add({
    db: 'placement',
    table: 'resource_provider_aggregates',
    op: 'check',
    where: {resource_provider_id: rp.id},
    rows: aggs.map((a) => ({aggregate_id: a.aggregate_id})),
    why: `${code}: the aggregates of ${what} are those observed`,
  })
  b.add({
    db: 'placement',
    table: 'inventories',
    op: 'check',
    where: {resource_provider_id: rp.id},
    rows: invs.map((i) => ({id: i.id, resource_class_id: i.resource_class_id})),
    why: `${code}: the inventories of ${what} are those observed`,
  })
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'check',
    where: {parent_provider_id: rp.id},
    rows: children.map((c) => ({id: c.id})),
    why: `${code}: no new child under ${what}`,
  })
  const allocs = [...(model.allocationsByProvider.get(rp.id) ?? [])].sort((x, y) => x.id - y.id)
  b.add({
    db: 'placement',
    table: 'allocations',
    op: 'check',
    where: {resource_provider_id: rp.id},
    rows: allocs.map((a) => ({id: a.id})),
    why: `${code}: no allocation on ${what} besides those removed or moved`,
  })
}

function deleteProviderRow(b: PlanBuilder, rp: ResourceProvider, code: string, what: string): void {
  const {id: _id, ...observed} = providerGuard(rp)
  if (rp.root_provider_id === rp.id) {
    // A root refers to itself; InnoDB refuses to delete a row its own foreign key points at. Placement
    // clears root_provider_id first, in the same transaction; so do we.
    b.add(
      {
        db: 'placement',
        table: 'resource_providers',
        op: 'update',
        key: {id: rp.id},
        expect: {...observed},
        set: {root_provider_id: null},
        why: `${code}: clear the self-reference of ${what} before deleting it, as placement does`,
        code,
      },
      'root_provider_id cleared first, as placement does',
    )
    observed.root_provider_id = null
  }
  b.add({
    db: 'placement',
    table: 'resource_providers',
    op: 'delete',
    key: {id: rp.id},
    expect: observed,
    why: `${code}: ${what}${rp.parent_provider_id === null ? '' : ' (child, before its parent)'}`,
    code,
  })
}

/**
 * The leak findings that hold for this tree: an allocation of a live instance placed on the host the
 * provider stands for is its home, not a leak, even if an audit calls it wrong-provider.
 */
export function leaksOnTree(model: CloudModel, root: ResourceProvider, allocs: Allocation[], leakOf: Map<number, LeakFinding>): Map<number, LeakFinding> {
  const out = new Map<number, LeakFinding>()
  for (const a of allocs) {
    const f = leakOf.get(a.id)
    if (f && !liveOnProvider(model, a.consumer_id, root)) out.set(a.id, f)
  }
  return out
}
