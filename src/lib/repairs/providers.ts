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
 *
 * The strategies live in provider-mismatch.ts, the duplicate-name repair in provider-duplicate.ts, the
 * tree steps they share in provider-tree.ts.
 */
import {filterFindings, runChecks} from '../checks/index.js'
import type {Finding, FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {type RepairScope, subjectOf} from './common.js'
import {type LeakFinding, isLeakFinding} from './leaks.js'
import {type DbKey, PlanBuilder, type RepairPlan} from './plan.js'
import {planDuplicate} from './provider-duplicate.js'
import {planMove, planRekey} from './provider-mismatch.js'
import {computeNodeChecks, deleteTree, leaksOnTree, removeLeaked, treeAllocations} from './provider-tree.js'

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
  for (const f of findings) if (isLeakFinding(f)) for (const a of f.evidence.allocations) leakOf.set(a.id, f)

  const cellWrites = new Set<DbKey>()
  const ids = newProviderIds(model)
  const wanted = (f: Finding) => !opts.provider || [f.subject.provider_uuid, f.subject.host, f.subject.node].includes(opts.provider)
  // The leaks above stay whole: a provider of the chosen host or cell takes its leaks wherever the audit files them.
  for (const f of filterFindings(model, findings, {cell: opts.cell, host: opts.host})) {
    if (!wanted(f)) continue
    if (f.code === 'provider.stale') b.unit(() => planStale(model, b, f, leakOf))
    else if (f.code === 'provider.duplicate-name') b.unit(() => planDuplicate(model, b, f, leakOf, cellWrites))
    else if (f.code === 'provider.uuid-mismatch') {
      if (!opts.strategy)
        b.skip(
          f.code,
          subjectOf(f),
          'choose a strategy: --strategy rekey (the provider takes the compute node uuid) or --strategy move (a new provider, allocations moved, old tree removed)',
        )
      else if (opts.strategy === 'rekey') b.unit(() => planRekey(model, b, f))
      else b.unit(() => planMove(model, b, f, leakOf, ids))
    } else if (f.code === 'provider.undecided') b.skip(f.code, subjectOf(f), 'a cell could not be read: a provider is only stale when every cell says so')
  }
  if (b.findings.length > 0 && cellWrites.size === 0)
    b.note('Every write is in placement (one transaction); the cell databases are only locked to re-check the compute node rows.')
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

function planStale(model: CloudModel, b: PlanBuilder, f: FindingOf<'provider.stale'>, leakOf: Map<number, LeakFinding>): void {
  const subject = subjectOf(f)
  const ev = f.evidence
  const root = model.providersById.get(ev.provider.id)
  if (!root) return void b.skip(f.code, subject, 'the provider is gone from the snapshot: re-audit')
  if (ev.cause === 'service-deleted')
    return void b.skip(
      f.code,
      subject,
      'its compute node row is still live (only the service is deleted): finish `openstack compute service delete`, or restart nova-compute on the host; removing the provider would leave the node without one',
    )
  if (!model.allCellsAvailable) return void b.skip(f.code, subject, 'a cell could not be read: the compute node may live there')
  const tree = model.tree(root)
  const allocs = treeAllocations(model, tree)
  leakOf = leaksOnTree(model, root, allocs, leakOf)
  const live = allocs.filter((a) => !leakOf.has(a.id))
  if (live.length > 0) {
    const consumers = [...new Set(live.map((a) => a.consumer_id))]
    return void b.skip(
      f.code,
      subject,
      `refused: consumer(s) ${consumers.join(', ')} hold allocations on it that are not leaks (a live instance placed there or a move in progress); evacuate or delete them first`,
    )
  }
  b.finding(f.code, subject, f.message)
  computeNodeChecks(model, b, root.uuid, f.code, `no live compute node has uuid ${root.uuid}`)
  removeLeaked(model, b, allocs, leakOf, new Set(tree.map((p) => p.id)))
  deleteTree(model, b, tree, f.code)
}
