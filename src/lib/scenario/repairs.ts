/**
 * `--apply-repairs`: the snapshot as it would be after cloudctl's planned repairs of leaked
 * allocations and stuck pins, so that capacity shows what they cost. Reads the audit findings
 * (src/lib/checks): the allocation rows a leak finding names (evidence.allocations[].id) go, and each
 * NUMA cell a pinning.leaked finding lists gets the pinned_cpus its live instances pin
 * (evidence.cells[].expected_pinned). Pure: the input snapshot is not touched.
 */
import type {Finding} from '../domain/finding.js'
import {ResourceClassRegistry} from '../domain/resource-classes.js'
import type {Snapshot} from '../domain/snapshot.js'
import {copySnapshot, rewriteHostNumaCells} from './transforms.js'

export const LEAK_CODES = new Set([
  'allocation.consumer-deleted',
  'allocation.consumer-unknown',
  'allocation.migration-finished',
  'allocation.evacuation-leftover',
  'allocation.wrong-provider',
])

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

export function applyPlannedRepairs(snapshot: Snapshot, findings: Finding[]): RepairEffect {
  const s = copySnapshot(snapshot)
  const rcs = new ResourceClassRegistry(s.placement.resource_classes)
  const drop = new Set<number>()
  const consumers = new Set<string>()
  for (const f of findings) {
    if (!LEAK_CODES.has(f.code)) continue
    const rows = (f.evidence.allocations ?? []) as Array<{id?: unknown}>
    for (const r of rows) if (typeof r.id === 'number') drop.add(r.id)
    if (f.subject.consumer_uuid) consumers.add(f.subject.consumer_uuid)
  }
  const freed: Record<string, number> = {}
  const perProvider = new Map<number, Record<string, number>>()
  const kept = []
  for (const a of s.placement.allocations) {
    if (!drop.has(a.id)) {
      kept.push(a)
      continue
    }
    const rc = rcs.name(a.resource_class_id)
    freed[rc] = (freed[rc] ?? 0) + a.used
    const m = perProvider.get(a.resource_provider_id) ?? {}
    m[rc] = (m[rc] ?? 0) + a.used
    perProvider.set(a.resource_provider_id, m)
  }
  const liveNodes = new Set(s.nova.compute_nodes.filter((cn) => cn.deleted === 0 && cn.uuid).map((cn) => cn.uuid as string))
  const rpById = new Map(s.placement.resource_providers.map((rp) => [rp.id, rp]))
  const freedByProvider: RepairEffect['freedByProvider'] = [...perProvider.entries()].map(([id, resources]) => {
    const rp = rpById.get(id)
    const root = rp ? rpById.get(rp.root_provider_id ?? rp.id) : undefined
    return {provider: rp?.uuid ?? `#${id}`, name: rp?.name ?? null, schedulable: root !== undefined && liveNodes.has(root.uuid), resources}
  })
  const removed = s.placement.allocations.length - kept.length
  s.placement.allocations = kept

  // Per compute node, cell id -> the pinned_cpus its live instances pin.
  const pinFixes = new Map<string, Map<number, {expected: number[]; leaked: number[]}>>()
  for (const f of findings) {
    if (f.code !== 'pinning.leaked') continue
    const cnRef = f.evidence.compute_node as {id?: number; cell_uuid?: string} | undefined
    if (!cnRef || typeof cnRef.id !== 'number') continue
    // One finding per node listing its cells (evidence.cells), or one per cell (subject.numa_cell).
    const cells = Array.isArray(f.evidence.cells)
      ? (f.evidence.cells as Array<{numa_cell?: unknown; expected_pinned?: unknown; leaked?: unknown}>)
      : [{numa_cell: f.subject.numa_cell, expected_pinned: f.evidence.expected_pinned, leaked: f.evidence.leaked}]
    const key = `${cnRef.cell_uuid}/${cnRef.id}`
    const m = pinFixes.get(key) ?? new Map<number, {expected: number[]; leaked: number[]}>()
    for (const c of cells) {
      if (typeof c.numa_cell !== 'number' || !Array.isArray(c.expected_pinned)) continue
      m.set(c.numa_cell, {expected: c.expected_pinned as number[], leaked: Array.isArray(c.leaked) ? (c.leaked as number[]) : []})
    }
    pinFixes.set(key, m)
  }
  const pins: RepairEffect['pins'] = []
  if (pinFixes.size > 0) {
    s.nova.compute_nodes = s.nova.compute_nodes.map((cn) => {
      const fix = pinFixes.get(`${cn.cell_uuid}/${cn.id}`)
      if (!fix || !cn.numa_topology) return cn
      const text = rewriteHostNumaCells(cn.numa_topology, (cell) => {
        const want = fix.get(cell.id as number)
        if (!want) return
        cell.pinned_cpus = [...want.expected].sort((a, b) => a - b)
        pins.push({host: cn.host ?? '', node: cn.hypervisor_hostname ?? '', numa_cell: cell.id as number, released: want.leaked})
      })
      return {...cn, numa_topology: text}
    })
  }
  const changes: string[] = []
  if (removed > 0) {
    const stale = freedByProvider.filter((p) => !p.schedulable)
    changes.push(
      `removed ${removed} leaked allocation(s) of ${consumers.size} consumer(s): ${Object.entries(freed).map(([rc, n]) => `${rc} ${n}`).join(', ')}` +
        (stale.length > 0 ? ` (on ${stale.map((p) => p.name ?? p.provider).join(', ')}: no live compute node, nothing schedulable comes back there)` : ''),
    )
  }
  if (pins.length > 0) changes.push(`rewrote pinned_cpus of ${pins.length} NUMA cell(s) from the live instances: ${pins.reduce((n, p) => n + p.released.length, 0)} pCPU(s) released`)
  if (changes.length === 0) changes.push('no leaked allocation or stuck pin to repair')
  return {snapshot: s, changes, removedAllocations: removed, consumers: consumers.size, freed, freedByProvider, pins}
}
