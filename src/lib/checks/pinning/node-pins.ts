/**
 * pinning: per host NUMA cell, pinned_cpus must equal the pCPUs the live instances on that node pin
 * (cpu_pinning_raw values plus cpuset_reserved). Seed 004: pinned_cpus stayed full after the
 * instances were gone because update_available_resource had stopped, and NUMATopologyFilter
 * returned 0 hosts. This file reads, once per audit, what each node's instances pin.
 */
import type {Finding, FindingCode, FindingSubject, Severity} from '../../domain/finding.js'
import {nodeKey} from '../../domain/model.js'
import {type HostNumaCell, type HostNumaTopology, pinnedHostCpus} from '../../domain/nova-objects.js'
import type {ComputeNode, Instance} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import {DOWN_HOST_NOTE} from '../rows.js'

export const REPAIR = 'cloudctl repair pinning'

export interface NodePins {
  cn: ComputeNode
  topology: HostNumaTopology
  /** Live instances on the node that hold resources. */
  resident: Instance[]
  /** Instances moving to or from this node: their pins on this end are not recorded anywhere we read. */
  moving: Instance[]
  /** pCPUs the moving instances pin: that many leaked pCPUs may be theirs. */
  tolerance: number
  /** Per NUMA cell id, each pinned pCPU and the instances pinning it. */
  byCell: ReadonlyMap<number, Map<number, string[]>>
  /** pCPUs pinned per instance (instances pinning none are left out). */
  pinsByInstance: ReadonlyMap<string, number>
}

const NO_CELLS: ReadonlyMap<number, Map<number, string[]>> = new Map()
const NO_PINS: ReadonlyMap<string, number> = new Map()

/** Live nodes with a readable NUMA topology whose instances' topologies could all be read. */
export function nodePins(ctx: AuditContext): NodePins[] {
  return ctx.once(nodePins, () => {
    const out: NodePins[] = []
    for (const cn of ctx.model.liveComputeNodes) {
      const topo = ctx.hostNumaTopology(cn)
      if (!topo.ok || !topo.value || topo.value.cells.length === 0) continue
      const p = pinsOf(ctx, cn, topo.value)
      if (p) out.push(p)
    }
    return out
  })
}

function pinsOf(ctx: AuditContext, cn: ComputeNode, topology: HostNumaTopology): NodePins | undefined {
  const {model} = ctx
  // As the resource tracker: hidden copies of a cross-cell move keep their pins on their node, and
  // only the node's own cell's migration rows are its.
  const residents = ctx.residentsOf(cn)
  const resident = residents.list
  const key = nodeKey(cn.host, cn.hypervisor_hostname)
  // Indexed loops, no filter/map chains: this runs once per node, mostly before the JIT optimises it.
  const migrations = ctx.inProgressByNode.get(key)
  const moving: Instance[] = []
  if (migrations)
    for (let i = 0; i < migrations.length; i++) {
      const m = migrations[i]
      if (m.cell_uuid !== cn.cell_uuid) continue
      const inst = m.instance_uuid ? ctx.liveRows(m.instance_uuid)?.[0] : undefined
      if (inst !== undefined && model.nodeKeyOfInstance(inst) !== key) moving.push(inst)
    }
  let tolerance = 0
  for (let i = 0; i < moving.length; i++) {
    const t = ctx.instanceNumaTopology(moving[i])
    if (t.ok && t.value) for (let c = 0; c < t.value.cells.length; c++) tolerance += pinnedHostCpus(t.value.cells[c]).length
  }
  // Made on the first pin: most nodes pin nothing, and 10k nodes would hold two empty maps each.
  let byCell: Map<number, Map<number, string[]>> | undefined
  let pinsByInstance: Map<string, number> | undefined
  for (let k = 0; k < resident.length; k++) {
    const t = residents.numa[k]
    // Reported as snapshot.unreadable-blob; comparing without it would accuse the host.
    if (!t.ok) return undefined
    if (!t.value) continue
    let n = 0
    const cells = t.value.cells
    for (let ci = 0; ci < cells.length; ci++) {
      const c = cells[ci]
      const pins = pinnedHostCpus(c)
      // A cell that pins nothing adds no pCPU to compare (most cells of NUMA-placed guests).
      if (pins.length === 0) continue
      n += pins.length
      byCell ??= new Map()
      let m = byCell.get(c.id)
      if (!m) byCell.set(c.id, (m = new Map()))
      const uuid = resident[k].uuid
      for (let pi = 0; pi < pins.length; pi++) {
        const owners = m.get(pins[pi])
        if (owners) owners.push(uuid)
        else m.set(pins[pi], [uuid])
      }
    }
    if (n > 0) (pinsByInstance ??= new Map()).set(resident[k].uuid, n)
  }
  return {cn, topology, resident, moving, tolerance, byCell: byCell ?? NO_CELLS, pinsByInstance: pinsByInstance ?? NO_PINS}
}

export interface CellPins {
  cellId: number
  hc: HostNumaCell | undefined
  /** pCPU -> instances pinning it in this cell. */
  expected: Map<number, string[]>
  pinned: Set<number>
}

/**
 * The NUMA cells to compare, in id order: the host's and those instances pin. Empty when nothing is
 * pinned on the host and no instance pins here: no per-cell finding can arise.
 */
export function cellPins(p: NodePins): CellPins[] {
  let cells = cellPinsOf.get(p)
  if (!cells) cellPinsOf.set(p, (cells = compareCells(p)))
  return cells
}

/** cellPins per node, made once for the five pinning units that read them. */
const cellPinsOf = new WeakMap<NodePins, CellPins[]>()

function compareCells(p: NodePins): CellPins[] {
  if (p.byCell.size === 0 && !p.topology.cells.some((c) => c.pinned_cpus.length > 0)) return []
  const hostCells = new Map<number, HostNumaCell>(p.topology.cells.map((c) => [c.id, c]))
  const cellIds = [...new Set([...hostCells.keys(), ...p.byCell.keys()])].sort((a, b) => a - b)
  return cellIds.map((cellId) => {
    const hc = hostCells.get(cellId)
    return {cellId, hc, expected: p.byCell.get(cellId) ?? new Map<number, string[]>(), pinned: new Set(hc?.pinned_cpus ?? [])}
  })
}

export const cellLabel = (p: NodePins, cellId: number): string => `${p.cn.hypervisor_hostname ?? p.cn.host} NUMA cell ${cellId}`

export const ownersOf = (c: CellPins, cpus: number[]) => Object.fromEntries(cpus.map((pcpu) => [pcpu, c.expected.get(pcpu) ?? []]))

/** The instance a finding is about, when exactly one instance owns the pCPUs in question. */
export function soleOwner(owners: string[]): string | undefined {
  const set = new Set(owners)
  return set.size === 1 ? [...set][0] : undefined
}

/**
 * A pinning finding on one node. `rowOnly`: the finding is about pinned_cpus alone, which on a dead
 * host is only stale (info, with the note), not wrong.
 */
export function pinningFinding(
  ctx: AuditContext,
  p: NodePins,
  f: {
    code: Exclude<Extract<FindingCode, `pinning.${string}`>, 'pinning.undecided'>
    severity: Severity
    cellId?: number
    message: string
    evidence: Record<string, unknown>
    instance?: string
    rowOnly?: boolean
  },
): Finding {
  const {cn} = p
  const rp = ctx.providerOf(cn)
  // pinned_cpus is the resource tracker's own bookkeeping: on a dead host it is only stale. Asked
  // here, where a finding is worded, not for each of the 10k nodes of a clean cloud (a service
  // lookup and four date parses each).
  const stale = f.rowOnly === true && ctx.rowIsStale(cn)
  const subject: FindingSubject = {
    ...ctx.nodeSubject(cn),
    ...(rp ? {provider_uuid: rp.uuid} : {}),
    ...(f.cellId === undefined ? {} : {numa_cell: f.cellId}),
    ...(f.instance ? {instance_uuid: f.instance} : {}),
  }
  return {
    check: 'pinning',
    code: f.code,
    severity: stale ? 'info' : f.severity,
    subject,
    message: stale ? `${f.message} (${DOWN_HOST_NOTE}.)` : f.message,
    evidence: {...nodeEvidence(cn), ...f.evidence, ...(stale ? {service_down: true} : {})},
    repair: REPAIR,
  }
}

export const nodeEvidence = (cn: ComputeNode) => ({compute_node: {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid, updated_at: cn.updated_at}})
