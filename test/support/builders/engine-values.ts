/**
 * The builder family for the engine's own inputs: HostState / RequestSpec / host NUMA cell values
 * for unit tests of single filters, weighers and the NUMA fitter. These are what the engine derives
 * from a snapshot; writing them directly lets a test vary one field (free RAM, one pinned pCPU)
 * without a cloud whose every other row would have to agree.
 */
import type {HostNumaCell, HostNumaTopology} from '../../../src/lib/domain/nova-objects.js'
import type {Aggregate, ComputeNode, Flavor, Service} from '../../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig, type SchedulerConfig} from '../../../src/lib/engine/config.js'
import type {FilterContext} from '../../../src/lib/engine/filters.js'
import type {HostState} from '../../../src/lib/engine/host-state.js'
import type {RequestSpec} from '../../../src/lib/engine/request-spec.js'

export const NOW = new Date('2024-06-03T05:03:40Z')
export const NOW_DB = '2024-06-03 05:03:40'

export function service(over: Partial<Service> = {}): Service {
  return {
    cell_uuid: 'cell',
    id: 1,
    uuid: 'svc',
    host: 'h1',
    binary: 'nova-compute',
    topic: 'compute',
    report_count: 1,
    disabled: false,
    disabled_reason: null,
    forced_down: false,
    last_seen_up: NOW_DB,
    version: 61,
    deleted: 0,
    deleted_at: null,
    created_at: '2024-01-01 00:00:00',
    updated_at: NOW_DB,
    ...over,
  }
}

let aggId = 0
export function aggregate(metadata: Record<string, string>, name = `agg${++aggId}`): Aggregate {
  return {id: ++aggId, uuid: `agg-uuid-${aggId}`, name, hosts: [], metadata}
}

export function hostState(over: Partial<HostState> = {}): HostState {
  const host = over.host ?? 'h1'
  const hs: HostState = {
    key: `${host}\u0000${over.nodename ?? host}`,
    host,
    nodename: host,
    cellUuid: 'cell',
    uuid: `uuid-${host}`,
    cn: {} as ComputeNode,
    service: service({host}),
    freeRamMb: 32768,
    freeDiskMb: 500 * 1024,
    totalUsableRamMb: 65536,
    totalUsableDiskGb: 1000,
    diskMbUsed: 500 * 1024,
    vcpusTotal: 16,
    vcpusUsed: 0,
    numInstances: 0,
    numIoOps: 0,
    failedBuilds: 0,
    cpuAllocationRatio: 16,
    ramAllocationRatio: 1.5,
    diskAllocationRatio: 1,
    numa: null,
    numaError: null,
    pciPools: [],
    aggregates: [],
    instances: new Set(),
    stats: {},
    supportedInstances: [['x86_64', 'kvm', 'hvm']],
    hypervisorType: 'QEMU',
    hypervisorVersion: 6002000,
    hostIp: '10.0.0.1',
    cpuInfo: JSON.stringify({arch: 'x86_64', vendor: 'Intel', features: ['avx2']}),
    usageNotReported: false,
    ...over,
  }
  return hs
}

export function flavor(over: Partial<Flavor> = {}): Flavor {
  return {
    id: 1,
    flavorid: 'f1',
    name: 'm1.test',
    memory_mb: 2048,
    vcpus: 2,
    swap: 0,
    root_gb: 20,
    ephemeral_gb: 0,
    rxtx_factor: 1,
    vcpu_weight: 0,
    disabled: false,
    is_public: true,
    description: null,
    extra_specs: {},
    ...over,
  }
}

export function requestSpec(over: Partial<RequestSpec> = {}): RequestSpec {
  const f = over.flavor ?? flavor({extra_specs: over.extraSpecs ?? {}})
  return {
    flavor: f,
    extraSpecs: f.extra_specs,
    image: {id: null, diskFormat: null, properties: {}},
    ignoreHosts: [],
    forceHosts: [],
    forceNodes: [],
    projectId: 'p1',
    userId: 'u1',
    availabilityZone: null,
    numInstances: 1,
    hints: {},
    group: null,
    isBfv: false,
    requestedDestination: null,
    vcpus: f.vcpus,
    memoryMb: f.memory_mb,
    rootGb: f.root_gb ?? 0,
    ephemeralGb: f.ephemeral_gb ?? 0,
    swap: f.swap,
    numaTopology: null,
    pciRequests: [],
    requiredAggregates: [],
    forbiddenAggregates: new Set(),
    rootRequired: new Set(),
    rootForbidden: new Set(),
    ...over,
  }
}

export function filterContext(cfg: Partial<SchedulerConfig> = {}, now = NOW): FilterContext {
  return {cfg: {...defaultSchedulerConfig(), ...cfg}, now, numaFits: new Map()}
}

/** A host NUMA cell; `pinned` are taken pCPUs, memory in MiB, 4 KiB pages unless `pages` says otherwise. */
export function numaCell(c: {
  id: number
  cpuset?: readonly number[]
  pcpuset?: readonly number[]
  pinned?: readonly number[]
  siblings?: ReadonlyArray<readonly number[]>
  memory?: number
  memoryUsage?: number
  cpuUsage?: number
  pages?: ReadonlyArray<{size_kb: number; total: number; used?: number; reserved?: number}>
}): HostNumaCell {
  const memory = c.memory ?? 16384
  const pages = c.pages ?? [{size_kb: 4, total: (memory * 1024) / 4}]
  return {
    id: c.id,
    cpuset: [...(c.cpuset ?? [])],
    pcpuset: [...(c.pcpuset ?? [])],
    memory,
    cpu_usage: c.cpuUsage ?? 0,
    memory_usage: c.memoryUsage ?? 0,
    pinned_cpus: [...(c.pinned ?? [])],
    siblings: (c.siblings ?? []).map((x) => [...x]),
    mempages: pages.map((p) => ({size_kb: p.size_kb, total: p.total, used: p.used ?? 0, reserved: p.reserved ?? 0})),
    socket: 0,
    version: '1.5',
  }
}

export function topology(...cells: HostNumaCell[]): HostNumaTopology {
  return {version: '1.2', cells}
}
