/**
 * `--apply-repairs`: the snapshot as it would be after cloudctl's repairs of leaked allocations
 * (`repair leaks`) and stuck pins (`repair pinning --force`), so that capacity shows what they cost.
 * The plans are the ones those commands print, and their effect is applyPlan's (src/lib/repairs/apply.ts):
 * an allocation a repair leaves alone (a live instance still placed on a stale provider) stays here
 * too. What is reported (freed resources, released pCPUs) is read from the difference the plans make.
 * Pure: the input snapshot is not touched.
 */
import {buildModel} from '../domain/model.js'
import {parseHostNumaTopology} from '../domain/nova-objects.js'
import {ResourceClassRegistry} from '../domain/resource-classes.js'
import type {Allocation, ComputeNode, Snapshot} from '../domain/snapshot.js'
import {applyPlan} from '../repairs/apply.js'
import {planPinning} from '../repairs/host-state.js'
import {planLeaks} from '../repairs/leaks.js'

export interface RepairEffect {
  snapshot: Snapshot
  changes: string[]
  removedAllocations: number
  consumers: number
  /** Resource class -> amount freed in placement. */
  freed: Record<string, number>
  /**
   * The same per provider; `schedulable` is false when no live compute node owns the provider tree
   * (a deleted host's stale provider): freeing it returns nothing the scheduler can use.
   */
  freedByProvider: Array<{provider: string; name: string | null; schedulable: boolean; resources: Record<string, number>}>
  /** NUMA cells whose pinned_cpus were rewritten, with the pCPUs released. */
  pins: Array<{host: string; node: string; numa_cell: number; released: number[]}>
}

export function applyPlannedRepairs(snapshot: Snapshot, now?: string): RepairEffect {
  const model = buildModel(snapshot)
  // The plans' clock is the capture's: the same snapshot gives the same result.
  const at = now ?? snapshot.captured_at
  // Pinning as with --force: what the stuck pins cost does not depend on whether nova-compute is up.
  const plans = [planLeaks(model, {now: at}), planPinning(model, {force: true, now: at})]
  const s = plans.reduce((acc, plan) => applyPlan(acc, plan), snapshot)

  const kept = new Set(s.placement.allocations.map((a) => a.id))
  const removed = snapshot.placement.allocations.filter((a) => !kept.has(a.id))
  const {freed, freedByProvider} = freedBy(s, removed)
  const consumers = new Set(removed.map((a) => a.consumer_id)).size
  const pins = releasedPins(snapshot.nova.compute_nodes, s.nova.compute_nodes)

  const changes: string[] = []
  if (removed.length > 0) {
    const stale = freedByProvider.filter((p) => !p.schedulable)
    changes.push(
      `removed ${removed.length} leaked allocation(s) of ${consumers} consumer(s): ${Object.entries(freed)
        .map(([rc, n]) => `${rc} ${n}`)
        .join(', ')}` +
        (stale.length > 0 ? ` (on ${stale.map((p) => p.name ?? p.provider).join(', ')}: no live compute node, nothing schedulable comes back there)` : ''),
    )
  }
  if (pins.length > 0)
    changes.push(
      `rewrote pinned_cpus of ${pins.length} NUMA cell(s) from the live instances: ${pins.reduce((n, p) => n + p.released.length, 0)} pCPU(s) released`,
    )
  if (changes.length === 0) changes.push('no leaked allocation or stuck pin to repair')
  return {snapshot: s, changes, removedAllocations: removed.length, consumers, freed, freedByProvider, pins}
}

function freedBy(s: Snapshot, removed: Allocation[]): Pick<RepairEffect, 'freed' | 'freedByProvider'> {
  const rcs = new ResourceClassRegistry(s.placement.resource_classes)
  const freed: Record<string, number> = {}
  const perProvider = new Map<number, Record<string, number>>()
  for (const a of removed) {
    const rc = rcs.name(a.resource_class_id)
    freed[rc] = (freed[rc] ?? 0) + a.used
    const m = perProvider.get(a.resource_provider_id) ?? {}
    m[rc] = (m[rc] ?? 0) + a.used
    perProvider.set(a.resource_provider_id, m)
  }
  const liveNodes = new Set(s.nova.compute_nodes.filter((cn) => cn.deleted === 0 && cn.uuid).map((cn) => cn.uuid as string))
  const rpById = new Map(s.placement.resource_providers.map((rp) => [rp.id, rp]))
  const freedByProvider = [...perProvider.entries()].map(([id, resources]) => {
    const rp = rpById.get(id)
    const root = rp ? rpById.get(rp.root_provider_id ?? rp.id) : undefined
    return {provider: rp?.uuid ?? `#${id}`, name: rp?.name ?? null, schedulable: root !== undefined && liveNodes.has(root.uuid), resources}
  })
  return {freed, freedByProvider}
}

/** Per NUMA cell whose pinned_cpus a repair rewrote: the pCPUs pinned before and not after. */
function releasedPins(before: ComputeNode[], after: ComputeNode[]): RepairEffect['pins'] {
  const old = new Map(before.map((cn) => [`${cn.cell_uuid}/${cn.id}`, cn]))
  const pins: RepairEffect['pins'] = []
  for (const cn of after) {
    const was = old.get(`${cn.cell_uuid}/${cn.id}`)
    if (!was || was.numa_topology === cn.numa_topology) continue
    const a = parseHostNumaTopology(was.numa_topology)
    const b = parseHostNumaTopology(cn.numa_topology)
    if (!a.ok || !b.ok || !a.value || !b.value) continue
    for (const cell of b.value.cells) {
      const prev = a.value.cells.find((c) => c.id === cell.id)
      if (!prev) continue
      const now = new Set(cell.pinned_cpus)
      const released = prev.pinned_cpus.filter((p) => !now.has(p)).sort((x, y) => x - y)
      if (released.length > 0 || prev.pinned_cpus.length !== cell.pinned_cpus.length)
        pins.push({host: cn.host ?? '', node: cn.hypervisor_hostname ?? '', numa_cell: cell.id, released})
    }
  }
  return pins
}
