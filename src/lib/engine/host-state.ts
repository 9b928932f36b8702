/**
 * Stage 5: HostState per compute node (nova/scheduler/host_manager.py HostState), built once per
 * model and copied on write when a simulated claim consumes from it.
 */
import type {CloudModel} from '../domain/model.js'
import {flatPlainValue, isFlatPlainObject} from '../domain/json-scan.js'
import {parseUnwrapped, type HostNumaTopology} from '../domain/nova-objects.js'
import type {Aggregate, ComputeNode, Service} from '../domain/snapshot.js'
import {TextMemo} from '../util/text-memo.js'
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
  /**
   * The image properties of each instance on the host (Instance.image_meta, for 2025.1's
   * ImagePropertiesWeigher); absent when the source does not carry them (snapshots do not).
   */
  instanceImageProps?: Array<Record<string, string>>
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

/** The aggregates of a host in no aggregate (shared, never modified). */
export const NO_AGGREGATES: Aggregate[] = []

/**
 * host -> aggregates (nova_api), in aggregate id order as HostManager caches them. Hosts in the same
 * aggregates share one array, so per-aggregate answers (metadata, multipliers) are computed once.
 */
function aggregatesByHost(model: CloudModel): Map<string, Aggregate[]> {
  const out = new Map<string, Aggregate[]>()
  for (const a of [...model.snapshot.nova_api.aggregates].sort((x, y) => x.id - y.id)) {
    for (const h of a.hosts) {
      const l = out.get(h)
      if (l) {
        if (!l.includes(a)) l.push(a)
      } else out.set(h, [a])
    }
  }
  const interned = new Map<string, Aggregate[]>()
  for (const [h, l] of out) {
    const key = l.map((a) => a.id).join(',')
    const same = interned.get(key)
    if (same) out.set(h, same)
    else interned.set(key, l)
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
  /** compute node uuid -> its position in byUuid's iteration order (to visit a subset in that order). */
  uuidOrder: Map<string, number>
  /** key -> state */
  states: Map<string, HostState>
  aggregatesByHost: Map<string, Aggregate[]>
  instancesByHost: Map<string, string[]>
  /**
   * supported_instances and pci_stats parsed once per distinct text: hosts of one model report the
   * same ones. The parsed values are shared between states and never modified (pciSupports copies
   * the pools it takes from).
   */
  supportedInstances: TextMemo<string[][]>
  pciPools: TextMemo<PciPool[]>
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
  if (!base) {
    base = {
      byUuid: new Map(),
      uuidOrder: new Map(),
      states: new Map(),
      aggregatesByHost: aggregatesByHost(model),
      instancesByHost: instancesByHost(model),
      supportedInstances: new TextMemo(),
      pciPools: new TextMemo(),
    }
    perCfg.set(k, base)
  }
  if (base.byUuid.size === 0) {
    const cellOrder = new Map(model.snapshot.cells.map((c, i) => [c.uuid, i]))
    const nodes = [...model.liveComputeNodes].sort((a, b) => (cellOrder.get(a.cell_uuid) ?? 0) - (cellOrder.get(b.cell_uuid) ?? 0) || a.id - b.id)
    for (const cn of nodes) {
      if (!cn.uuid) continue
      const l = base.byUuid.get(cn.uuid)
      if (l) l.push(cn)
      else {
        base.uuidOrder.set(cn.uuid, base.byUuid.size)
        base.byUuid.set(cn.uuid, [cn])
      }
    }
  }
  return base
}

/** The nova-compute service of a compute node's host, as HostManager looks it up (by host name). */
export function computeServiceFor(model: CloudModel, cn: ComputeNode): Service | undefined {
  const svc = model.serviceOf(cn)
  return svc && svc.deleted === 0 ? svc : undefined
}

export function buildHostState(model: CloudModel, cn: ComputeNode, cfg: SchedulerConfig, base: HostStateBase): HostState {
  const key = `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`
  const cached = base.states.get(key)
  if (cached && cached.cn === cn) return cached
  // The record is built only if a filter asks for it (ComputeCapabilitiesFilter's extra specs): the
  // counters HostState reads from it come straight from nova's flat text.
  const flat = cn.stats !== null && isFlatPlainObject(cn.stats)
  const statsOf = (): Record<string, string> => {
    const stats = model.stats(cn)
    return stats.ok ? stats.value : {}
  }
  const count = (key: string): number => Number.parseInt((flat ? flatPlainValue(cn.stats as string, key) : statsOf()[key]) ?? '0', 10) || 0
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
    freeRamMb: notReported ? 0 : (cn.free_ram_mb ?? 0),
    freeDiskMb: notReported ? 0 : freeGb * 1024,
    totalUsableRamMb: notReported ? 0 : cn.memory_mb,
    totalUsableDiskGb: notReported ? 0 : cn.local_gb,
    diskMbUsed: notReported ? 0 : cn.local_gb_used * 1024,
    vcpusTotal: notReported ? 0 : cn.vcpus,
    vcpusUsed: notReported ? 0 : cn.vcpus_used,
    numInstances: notReported ? 0 : count('num_instances'),
    numIoOps: notReported ? 0 : count('io_workload'),
    failedBuilds: notReported ? 0 : count('failed_builds'),
    cpuAllocationRatio: ratioOf(cn.cpu_allocation_ratio, cfg.cpu_allocation_ratio, cfg.initial_cpu_allocation_ratio),
    ramAllocationRatio: ratioOf(cn.ram_allocation_ratio, cfg.ram_allocation_ratio, cfg.initial_ram_allocation_ratio),
    diskAllocationRatio: ratioOf(cn.disk_allocation_ratio, cfg.disk_allocation_ratio, cfg.initial_disk_allocation_ratio),
    // Parsed on first use: only NUMATopologyFilter (a request with a NUMA topology) and the claim
    // after it read the cells, and a real compute's topology is kilobytes of JSON per host.
    get numa(): HostNumaTopology | null {
      const numa = model.hostNumaTopology(cn)
      return notReported ? null : numa.ok ? numa.value : null
    },
    get numaError(): string | null {
      const numa = model.hostNumaTopology(cn)
      return numa.ok ? null : numa.error
    },
    pciPools: notReported || cn.pci_stats === null ? [] : base.pciPools.get(cn.pci_stats, pciPoolsOf),
    aggregates: base.aggregatesByHost.get(cn.host ?? '') ?? NO_AGGREGATES,
    instances,
    // HostState keeps its defaults (None / {}) for everything read from an unreported compute node
    get stats(): Record<string, string> {
      return notReported ? {} : statsOf()
    },
    supportedInstances: notReported || cn.supported_instances === null ? [] : base.supportedInstances.get(cn.supported_instances, supportedInstancesOf),
    hypervisorType: cn.hypervisor_type,
    hypervisorVersion: cn.hypervisor_version,
    hostIp: cn.host_ip,
    cpuInfo: cn.cpu_info,
    usageNotReported: notReported,
  }
  base.states.set(key, hs)
  return hs
}

// Filters and weighers ask the same host's aggregates the same questions for every instance of a
// request; the answers are cached per aggregates array (shared by all states of a host, immutable).
const metadataCache = new WeakMap<Aggregate[], Map<string, Map<string, Set<string>>>>()

/**
 * Aggregate metadata of a host: key -> set of values (comma-split), as filters/utils.py builds it.
 * The result is shared: callers must not modify it.
 */
export function aggregateMetadata(hs: HostState, key?: string): Map<string, Set<string>> {
  let perKey = metadataCache.get(hs.aggregates)
  if (!perKey) metadataCache.set(hs.aggregates, (perKey = new Map()))
  const k = key === undefined ? '\u0000all' : key
  let out = perKey.get(k)
  if (!out) perKey.set(k, (out = computeAggregateMetadata(hs, key)))
  return out
}

function computeAggregateMetadata(hs: HostState, key?: string): Map<string, Set<string>> {
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

/** Python's int(str): surrounding whitespace, a sign, digits with single underscores between them. */
export function pyInt(text: string): number | null {
  const t = text.trim()
  return /^[+-]?\d+(_\d+)*$/.test(t) ? Number(t.replace(/_/g, '')) : null
}

const DIGITS = '\\d+(?:_\\d+)*'
const PY_FLOAT = new RegExp(`^[+-]?(?:${DIGITS}(?:\\.(?:${DIGITS})?)?|\\.${DIGITS})(?:[eE][+-]?${DIGITS})?$`)

/** Python's float(str), for the forms an operator may type (decimal, exponent, inf, nan). */
export function pyFloat(text: string): number | null {
  const t = text.trim()
  if (PY_FLOAT.test(t)) return Number(t.replace(/_/g, ''))
  const m = /^([+-]?)(inf|infinity|nan)$/i.exec(t)
  if (!m) return null
  if ((m[2] as string).toLowerCase() === 'nan') return Number.NaN
  return m[1] === '-' ? -Infinity : Infinity
}

const numberCache = new WeakMap<Aggregate[], Map<string, number | null>>()

/**
 * utils.aggregate_values_from_key + validate_num_values (get_weight_multiplier, AggregateIoOpsFilter,
 * AggregateNumInstancesFilter): the raw values of `key` (not comma-split) of the host's aggregates,
 * cast with Python's float() or int(), the minimum wins; no value, or one that does not cast
 * (nova logs a warning), gives the configured fallback.
 */
export function aggregateNumber(hs: HostState, key: string, fallback: number, cast: 'float' | 'int' = 'float'): {value: number; fromAggregate: boolean} {
  let perKey = numberCache.get(hs.aggregates)
  if (!perKey) numberCache.set(hs.aggregates, (perKey = new Map()))
  const k = cast === 'float' ? key : `int\u0000${key}`
  let v = perKey.get(k)
  if (v === undefined) {
    const raw = new Set<string>()
    for (const a of hs.aggregates) if (Object.hasOwn(a.metadata, key)) raw.add(a.metadata[key] as string)
    v = null
    if (raw.size > 0) {
      const nums = [...raw].map((x) => (cast === 'int' ? pyInt(x) : pyFloat(x)))
      // Python's min() over floats with a NaN depends on its position; a NaN multiplier is nonsense anyway.
      if (nums.every((n): n is number => n !== null)) v = nums.reduce((m, n) => (n < m ? n : m))
    }
    perKey.set(k, v)
  }
  return v === null ? {value: fallback, fromAggregate: false} : {value: v, fromAggregate: true}
}
