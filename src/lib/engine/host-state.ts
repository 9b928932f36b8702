/**
 * Stage 5: HostState per compute node (nova/scheduler/host_manager.py HostState), built once per
 * model and copied on write when a simulated claim consumes from it.
 */
import type {CloudModel} from '../domain/model.js'
import {parseUnwrapped, type HostNumaTopology} from '../domain/nova-objects.js'
import type {Aggregate, ComputeNode, Service} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'

export interface PciPool {
  vendor_id: string | null
  product_id: string | null
  numa_node: number | null
  count: number
  tags: Record<string, string>
}

export interface HostState {
  /** host + node key (model.nodeKey) */
  key: string
  host: string
  nodename: string
  cellUuid: string
  uuid: string
  cn: ComputeNode
  service: Service | undefined
  freeRamMb: number
  freeDiskMb: number
  totalUsableRamMb: number
  totalUsableDiskGb: number
  diskMbUsed: number
  vcpusTotal: number
  vcpusUsed: number
  numInstances: number
  numIoOps: number
  failedBuilds: number
  cpuAllocationRatio: number
  ramAllocationRatio: number
  diskAllocationRatio: number
  numa: HostNumaTopology | null
  numaError: string | null
  pciPools: PciPool[]
  aggregates: Aggregate[]
  /** Instance uuids on the host (HostState.instances keys). */
  instances: Set<string>
  stats: Record<string, string>
  supportedInstances: string[][]
  hypervisorType: string
  hypervisorVersion: number
  hostIp: string | null
  cpuInfo: string
  /** free_disk_gb was NULL: nova skips _update_from_compute_node and leaves zeros. */
  usageNotReported: boolean
}

function ratioOf(v: number | null, conf: number | null, initial: number): number {
  if (v !== null && v !== 0) return v
  return conf ? conf : initial
}

function pciPoolsOf(text: string | null): PciPool[] {
  const p = parseUnwrapped(text, 'pci_stats')
  if (!p.ok || p.value === null || p.value === undefined) return []
  const v = p.value as {objects?: unknown[]} | unknown[]
  const list = Array.isArray(v) ? v : Array.isArray(v.objects) ? v.objects : []
  return list.map((raw) => {
    const r = (raw ?? {}) as Record<string, unknown>
    const tags: Record<string, string> = {}
    if (r.tags && typeof r.tags === 'object') for (const [k, x] of Object.entries(r.tags as Record<string, unknown>)) tags[k] = String(x)
    return {
      vendor_id: typeof r.vendor_id === 'string' ? r.vendor_id : null,
      product_id: typeof r.product_id === 'string' ? r.product_id : null,
      numa_node: typeof r.numa_node === 'number' ? r.numa_node : null,
      count: typeof r.count === 'number' ? r.count : 0,
      tags,
    }
  })
}

function supportedInstancesOf(text: string | null): string[][] {
  const p = parseUnwrapped(text, 'supported_instances')
  if (!p.ok || !Array.isArray(p.value)) return []
  return (p.value as unknown[]).filter(Array.isArray).map((row) => (row as unknown[]).map((x) => String(x)))
}

/** host -> aggregates (nova_api), in aggregate id order as HostManager caches them. */
function aggregatesByHost(model: CloudModel): Map<string, Aggregate[]> {
  const out = new Map<string, Aggregate[]>()
  for (const a of [...model.snapshot.nova_api.aggregates].sort((x, y) => x.id - y.id)) {
    for (const h of a.hosts) {
      const l = out.get(h)
      if (l) l.push(a)
      else out.set(h, [a])
    }
  }
  return out
}

function instancesByHost(model: CloudModel): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const inst of model.snapshot.nova.instances) {
    if (inst.deleted !== 0 || inst.host === null) continue
    const l = out.get(inst.host)
    if (l) l.push(inst.uuid)
    else out.set(inst.host, [inst.uuid])
  }
  return out
}

export interface HostStateBase {
  /** compute node uuid -> compute nodes in database order (cells in snapshot order, then id). */
  byUuid: Map<string, ComputeNode[]>
  /** key -> state */
  states: Map<string, HostState>
  aggregatesByHost: Map<string, Aggregate[]>
  instancesByHost: Map<string, string[]>
}

const baseCache = new WeakMap<CloudModel, Map<string, HostStateBase>>()

function configKey(cfg: SchedulerConfig): string {
  return `${cfg.cpu_allocation_ratio}/${cfg.ram_allocation_ratio}/${cfg.disk_allocation_ratio}/${cfg.initial_cpu_allocation_ratio}/${cfg.initial_ram_allocation_ratio}/${cfg.initial_disk_allocation_ratio}`
}

export function hostStateBase(model: CloudModel, cfg: SchedulerConfig): HostStateBase {
  let perCfg = baseCache.get(model)
  if (!perCfg) baseCache.set(model, (perCfg = new Map()))
  const k = configKey(cfg)
  let base = perCfg.get(k)
  if (!base) perCfg.set(k, (base = {byUuid: new Map(), states: new Map(), aggregatesByHost: aggregatesByHost(model), instancesByHost: instancesByHost(model)}))
  if (base.byUuid.size === 0) {
    const cellOrder = new Map(model.snapshot.cells.map((c, i) => [c.uuid, i]))
    const nodes = [...model.liveComputeNodes].sort((a, b) => (cellOrder.get(a.cell_uuid) ?? 0) - (cellOrder.get(b.cell_uuid) ?? 0) || a.id - b.id)
    for (const cn of nodes) {
      if (!cn.uuid) continue
      const l = base.byUuid.get(cn.uuid)
      if (l) l.push(cn)
      else base.byUuid.set(cn.uuid, [cn])
    }
  }
  return base
}

/** The nova-compute service of a compute node's host, as HostManager looks it up (by host name). */
export function computeServiceFor(model: CloudModel, cn: ComputeNode): Service | undefined {
  if (!cn.host) return undefined
  return (model.liveServicesByHost.get(cn.host) ?? []).find((s) => s.binary === 'nova-compute' && s.cell_uuid === cn.cell_uuid)
}

export function buildHostState(model: CloudModel, cn: ComputeNode, cfg: SchedulerConfig, base: HostStateBase): HostState {
  const key = `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`
  const cached = base.states.get(key)
  if (cached && cached.cn === cn) return cached
  const stats = model.stats(cn)
  const statsValue = stats.ok ? stats.value : {}
  const numa = model.hostNumaTopology(cn)
  const notReported = cn.free_disk_gb === null
  let freeGb = cn.free_disk_gb ?? 0
  if (cn.disk_available_least !== null && !notReported) freeGb = Math.min(cn.disk_available_least, freeGb)
  // HostManager lists instances by host name (InstanceList.get_by_host), not by node.
  const instances = new Set(base.instancesByHost.get(cn.host ?? '') ?? [])
  const hs: HostState = {
    key,
    host: cn.host ?? '',
    nodename: cn.hypervisor_hostname ?? '',
    cellUuid: cn.cell_uuid,
    uuid: cn.uuid ?? '',
    cn,
    service: computeServiceFor(model, cn),
    freeRamMb: notReported ? 0 : cn.free_ram_mb ?? 0,
    freeDiskMb: notReported ? 0 : freeGb * 1024,
    totalUsableRamMb: notReported ? 0 : cn.memory_mb,
    totalUsableDiskGb: notReported ? 0 : cn.local_gb,
    diskMbUsed: notReported ? 0 : cn.local_gb_used * 1024,
    vcpusTotal: notReported ? 0 : cn.vcpus,
    vcpusUsed: notReported ? 0 : cn.vcpus_used,
    numInstances: notReported ? 0 : Number.parseInt(statsValue.num_instances ?? '0', 10) || 0,
    numIoOps: notReported ? 0 : Number.parseInt(statsValue.io_workload ?? '0', 10) || 0,
    failedBuilds: Number.parseInt(statsValue.failed_builds ?? '0', 10) || 0,
    cpuAllocationRatio: ratioOf(cn.cpu_allocation_ratio, cfg.cpu_allocation_ratio, cfg.initial_cpu_allocation_ratio),
    ramAllocationRatio: ratioOf(cn.ram_allocation_ratio, cfg.ram_allocation_ratio, cfg.initial_ram_allocation_ratio),
    diskAllocationRatio: ratioOf(cn.disk_allocation_ratio, cfg.disk_allocation_ratio, cfg.initial_disk_allocation_ratio),
    numa: notReported ? null : numa.ok ? numa.value : null,
    numaError: numa.ok ? null : numa.error,
    pciPools: notReported ? [] : pciPoolsOf(cn.pci_stats),
    aggregates: base.aggregatesByHost.get(cn.host ?? '') ?? [],
    instances,
    stats: statsValue,
    supportedInstances: supportedInstancesOf(cn.supported_instances),
    hypervisorType: cn.hypervisor_type,
    hypervisorVersion: cn.hypervisor_version,
    hostIp: cn.host_ip,
    cpuInfo: cn.cpu_info,
    usageNotReported: notReported,
  }
  base.states.set(key, hs)
  return hs
}

/** Aggregate metadata of a host: key -> set of values (comma-split), as filters/utils.py builds it. */
export function aggregateMetadata(hs: HostState, key?: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const a of hs.aggregates) {
    if (key !== undefined && !(key in a.metadata)) continue
    for (const [k, v] of Object.entries(a.metadata)) {
      const s = out.get(k) ?? new Set<string>()
      for (const x of v.split(',')) s.add(x.trim())
      out.set(k, s)
    }
  }
  return out
}

/** utils.get_weight_multiplier / validate_num_values: the minimum of the aggregates' values. */
export function aggregateNumber(hs: HostState, key: string, fallback: number): {value: number; fromAggregate: boolean} {
  const vals = aggregateMetadata(hs, key).get(key)
  if (!vals || vals.size === 0) return {value: fallback, fromAggregate: false}
  const nums = [...vals].map(Number)
  if (nums.some((n) => !Number.isFinite(n))) return {value: fallback, fromAggregate: false}
  return {value: Math.min(...nums), fromAggregate: true}
}
