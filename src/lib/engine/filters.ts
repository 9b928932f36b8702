/**
 * Stage 6: host filters, named and behaving as nova's (nova/scheduler/filters/*.py, Zed). Each
 * returns null (pass) or a Reason that says why, with numbers where there are numbers.
 */
import type {Service} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {aggregateMetadata, aggregateNumber, pyFloat, type HostState, type PciPool} from './host-state.js'
import {fitInstanceToHost, type FittedCell} from './numa.js'
import type {PciRequest, RequestSpec} from './request.js'

export interface Reason {
  /** Short label for the "0/N hosts are available" histogram, e.g. "insufficient free pCPUs". */
  label: string
  /** Full sentence for --why / --explain. */
  message: string
  need?: number
  have?: number
}

export interface FilterContext {
  cfg: SchedulerConfig
  /** Snapshot capture time, as "now" for service liveness. */
  now: Date
  /** Scratch output of NUMATopologyFilter for the claim (host key -> fitted cells). */
  numaFits: Map<string, FittedCell[]>
}

/**
 * What a filter's verdict reads beyond the host's own state. capacity/fast.ts evaluates a filter as
 * rarely as this allows:
 * - 'request': only the request (hints, image, zone, project): one verdict per host for every flavor;
 * - 'flavor': the flavor too, never what the simulation placed: one verdict per host and flavor;
 * - 'counters': the counters consumeHost moves (free RAM and disk, vCPUs used, instances, I/O ops),
 *   only ever stricter as instances land: evaluated on the state after k instances;
 * - 'placed': what exactly was placed (NUMA cells, PCI pools, consumed capability values): stepped
 *   one instance at a time;
 * - 'group': the server group's members on the host (anti-affinity's max_server_per_host).
 */
export type FilterInput = 'request' | 'flavor' | 'counters' | 'placed' | 'group'

export interface HostFilter {
  name: string
  /** nova's run_filter_once_per_request: skipped for the 2nd and later instances of a request. */
  runOncePerRequest: boolean
  /** What the verdict reads for this request beyond the host's own state (capacity's fast path asks). */
  reads(spec: RequestSpec): FilterInput
  hostPasses(hs: HostState, spec: RequestSpec, ctx: FilterContext): Reason | null
}

const reject = (label: string, message: string, need?: number, have?: number): Reason => ({label, message, need, have})

// ---------------------------------------------------------------- ComputeFilter

function parseTs(ts: string | null): number | null {
  if (!ts) return null
  const t = Date.parse(ts.includes('T') ? ts : `${ts.replace(' ', 'T')}Z`)
  return Number.isNaN(t) ? null : t
}

export const ComputeFilter: HostFilter = {
  name: 'ComputeFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, _spec, ctx) {
    const svc = hs.service
    if (!svc) return reject('no compute service', `${hs.host} has no nova-compute service row`)
    if (svc.disabled) return reject('disabled', `nova-compute on ${hs.host} is disabled${svc.disabled_reason ? ` (reason: ${svc.disabled_reason})` : ''}`)
    const down = serviceDown(svc, ctx.now, ctx.cfg.service_down_time)
    return down === null ? null : reject('compute service down', `nova-compute on ${hs.host} ${down}`)
  },
}

/** servicegroup's is_up (db driver), whatever the disabled flag: null when up, else why it is down. */
export function serviceDown(svc: Service, now: Date, serviceDownTime: number): string | null {
  if (svc.forced_down) return 'is forced down'
  // last_seen_up, else created_at (updated_at is not consulted)
  const last = parseTs(svc.last_seen_up) ?? parseTs(svc.created_at)
  if (last === null) return 'has never reported'
  const elapsed = (now.getTime() - last) / 1000
  return Math.abs(elapsed) > serviceDownTime ? `last reported ${Math.round(elapsed)}s before the snapshot (service_down_time=${serviceDownTime}s)` : null
}

// ---------------------------------------------------------------- extra_specs_ops

/** Python's float(): nova raises ValueError (the filter errors out); the engine treats it as no match. */
function num(x: string): number {
  const n = pyFloat(x)
  if (n === null) throw new Error(`could not convert string to float: '${x}'`)
  return n
}

/** nova/scheduler/filters/extra_specs_ops.match */
export function extraSpecMatch(value: string | null, req: string): boolean {
  const words = req.split(/\s+/).filter(Boolean)
  const op = words.shift()
  const ops: Record<string, (x: string, y: string) => boolean> = {
    '=': (x, y) => num(x) >= num(y),
    '<in>': (x, y) => x.includes(y),
    '==': (x, y) => num(x) === num(y),
    '!=': (x, y) => num(x) !== num(y),
    '>=': (x, y) => num(x) >= num(y),
    '<=': (x, y) => num(x) <= num(y),
    's==': (x, y) => x === y,
    's!=': (x, y) => x !== y,
    's<': (x, y) => x < y,
    's<=': (x, y) => x <= y,
    's>': (x, y) => x > y,
    's>=': (x, y) => x >= y,
  }
  if (op !== '<or>' && op !== '<all-in>' && (op === undefined || !ops[op])) return value === req
  if (value === null) return false
  if (op === '<or>') {
    while (words.length > 0) {
      if (words.shift() === value) return true
      if (words.length === 0) break
      words.shift()
    }
    return false
  }
  if (words.length === 0) return false
  if (op === '<all-in>') return words.every((w) => value.includes(w))
  try {
    return (ops[op as string] as (x: string, y: string) => boolean)(value, words[0] as string)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- ComputeCapabilitiesFilter

const FLOAT_ATTRS = new Set(['cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio'])

/** str() of a Python value, for the values capabilities can hold. */
function pyStr(v: unknown, floatLike = false): string {
  if (v === null || v === undefined) return 'None'
  if (typeof v === 'number') return floatLike && Number.isInteger(v) ? `${v}.0` : String(v)
  if (typeof v === 'boolean') return v ? 'True' : 'False'
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : pyStr(x))).join(', ')}]`
  return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `'${k}': ${typeof x === 'string' ? `'${x}'` : pyStr(x)}`).join(', ')}}`
}

/** Attributes HostState takes from the compute node: None until its usage is reported. */
const FROM_COMPUTE_NODE = new Set(['uuid', 'host_ip', 'hypervisor_type', 'hypervisor_version', 'hypervisor_hostname', 'cpu_info', 'supported_instances', 'cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio'])

/** HostState attributes by their nova names. */
function hostAttr(hs: HostState, name: string): unknown {
  if (hs.usageNotReported && FROM_COMPUTE_NODE.has(name)) return undefined
  const map: Record<string, unknown> = {
    host: hs.host,
    nodename: hs.nodename,
    uuid: hs.uuid,
    cell_uuid: hs.cellUuid,
    free_ram_mb: hs.freeRamMb,
    free_disk_mb: hs.freeDiskMb,
    total_usable_ram_mb: hs.totalUsableRamMb,
    total_usable_disk_gb: hs.totalUsableDiskGb,
    disk_mb_used: hs.diskMbUsed,
    vcpus_total: hs.vcpusTotal,
    vcpus_used: hs.vcpusUsed,
    num_instances: hs.numInstances,
    num_io_ops: hs.numIoOps,
    failed_builds: hs.failedBuilds,
    hypervisor_type: hs.hypervisorType,
    hypervisor_version: hs.hypervisorVersion,
    hypervisor_hostname: hs.nodename,
    host_ip: hs.hostIp,
    cpu_info: hs.cpuInfo,
    supported_instances: hs.supportedInstances,
    stats: hs.stats,
    cpu_allocation_ratio: hs.cpuAllocationRatio,
    ram_allocation_ratio: hs.ramAllocationRatio,
    disk_allocation_ratio: hs.diskAllocationRatio,
  }
  return Object.prototype.hasOwnProperty.call(map, name) ? map[name] : undefined
}

/** HostState attributes consumeHost changes, by their nova names. */
const CONSUMED_ATTRS = new Set(['free_ram_mb', 'free_disk_mb', 'vcpus_used', 'num_instances', 'num_io_ops'])

/** Whether the request's extra specs compare a capability that placing an instance changes. */
function capabilitiesReadConsumed(spec: RequestSpec): boolean {
  for (const key of Object.keys(spec.extraSpecs)) {
    const scope = key.split(':')
    if (scope.length === 1 && CONSUMED_ATTRS.has(key)) return true
    if (scope[0] === 'capabilities' && CONSUMED_ATTRS.has(scope[1] ?? '')) return true
  }
  return false
}

const HOST_ATTRS_WITHOUT_VALUE = new Set(['numa_topology', 'pci_stats', 'aggregates', 'instances', 'metrics', 'updated', 'limits', 'service'])

function capability(hs: HostState, scope: string[]): {value: unknown; floatLike: boolean} | null {
  let cap: unknown = hs
  let floatLike = false
  for (const part of scope) {
    if (typeof cap === 'string') {
      try {
        cap = JSON.parse(cap)
      } catch {
        return null
      }
    }
    if (cap === hs) {
      const v = hostAttr(hs, part)
      floatLike = FLOAT_ATTRS.has(part)
      cap = v === undefined || v === null ? (hs.stats[part] ?? null) : v
    } else if (cap && typeof cap === 'object' && !Array.isArray(cap)) {
      cap = (cap as Record<string, unknown>)[part] ?? null
    } else return null
    if (cap === null || cap === undefined) return null
  }
  return {value: cap, floatLike}
}

export const ComputeCapabilitiesFilter: HostFilter = {
  name: 'ComputeCapabilitiesFilter',
  runOncePerRequest: true,
  reads: (spec) => (capabilitiesReadConsumed(spec) ? 'placed' : 'flavor'),
  hostPasses(hs, spec, ctx) {
    let specs = Object.entries(spec.extraSpecs)
    const bits = spec.extraSpecs['hw:maxphysaddr_bits']
    // nova 31 turns hw:maxphysaddr_bits into a capability check on cpu_info (placed last)
    if (ctx.cfg.release !== 'zed' && bits !== undefined) specs = [...specs.filter(([k]) => k !== 'hw:maxphysaddr_bits'), ['capabilities:cpu_info:maxphysaddr:bits', `>= ${bits}`]]
    for (const [key, req] of specs) {
      let scope = key.split(':')
      if (scope.length === 1) {
        const has = hostAttr(hs, key) !== undefined || HOST_ATTRS_WITHOUT_VALUE.has(key) || key in hs.stats
        if (!has) continue
      } else {
        if (scope[0] !== 'capabilities') continue
        scope = scope.slice(1)
      }
      const cap = capability(hs, scope)
      if (cap === null) return reject(`capability ${scope.join(':')} missing`, `host has no capability ${scope.join(':')} (extra spec ${key}=${req})`)
      const text = pyStr(cap.value, cap.floatLike)
      if (!extraSpecMatch(text, req)) return reject(`extra spec ${key} not matched`, `extra spec ${key}="${req}" does not match host value "${text}"`)
    }
    return null
  },
}

// ---------------------------------------------------------------- ImagePropertiesFilter

function canonArch(a: string | undefined | null): string | null {
  if (!a) return null
  const s = a.toLowerCase()
  // fields.Architecture.canonicalize: only these aliases (and the Xen 32-bit names) are mapped.
  if (['i386', 'i486', 'i586', 'x86_32', 'x86_32p'].includes(s)) return 'i686'
  if (s === 'amd64') return 'x86_64'
  return s
}
function canonHv(h: string | undefined | null): string | null {
  if (!h) return null
  const s = h.toLowerCase()
  return s === 'xapi' ? 'xen' : s
}
function canonVmMode(m: string | undefined | null): string | null {
  if (!m) return null
  const s = m.toLowerCase()
  if (s === 'pv') return 'xen'
  if (s === 'hv' || s === 'baremetal') return 'hvm'
  return s
}

/** nova's versionutils.convert_version_to_str: 6001002 -> "6.1.2". */
function versionToStr(v: number): string {
  const parts: number[] = []
  let x = v
  while (x !== 0) {
    parts.unshift(x % 1000)
    x = Math.floor(x / 1000)
  }
  return parts.join('.')
}

function versionSatisfies(have: string, predicate: string): boolean {
  const cmp = (a: string, b: string) => {
    const pa = a.split('.').map(Number)
    const pb = b.split('.').map(Number)
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const d = (pa[i] ?? 0) - (pb[i] ?? 0)
      if (d !== 0) return d
    }
    return 0
  }
  return predicate.split(',').every((clause) => {
    const m = /^\s*(>=|<=|==|!=|>|<)\s*([\d.]+)\s*$/.exec(clause)
    if (!m) return false
    const d = cmp(have, m[2] as string)
    switch (m[1]) {
      case '>=':
        return d >= 0
      case '<=':
        return d <= 0
      case '==':
        return d === 0
      case '!=':
        return d !== 0
      case '>':
        return d > 0
      default:
        return d < 0
    }
  })
}

export const ImagePropertiesFilter: HostFilter = {
  name: 'ImagePropertiesFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec, ctx) {
    const p = spec.image.properties
    const wanted = [canonArch(p.hw_architecture ?? ctx.cfg.image_properties_default_architecture), canonHv(p.img_hv_type), canonVmMode(p.hw_vm_mode)]
    if (!wanted.some(Boolean)) return null
    const text = `architecture=${wanted[0] ?? '*'} hv_type=${wanted[1] ?? '*'} vm_mode=${wanted[2] ?? '*'}`
    if (hs.supportedInstances.length === 0) return reject('image properties not supported', `image asks ${text} but the compute node advertises no supported_instances`)
    const version = p.img_hv_requested_version
    // nova 31 also compares hw_maxphysaddr_bits with cpu_info's maxphysaddr bits
    const bits = ctx.cfg.release === 'zed' ? undefined : p.hw_maxphysaddr_bits
    for (const entry of hs.supportedInstances) {
      if (!wanted.every((w) => !w || entry.includes(w))) continue
      if (!version || !hs.hypervisorVersion || versionSatisfies(versionToStr(hs.hypervisorVersion), version)) {
        if (!bits) return null
        const info: unknown = hs.cpuInfo
        // A real HostState's cpu_info is the compute node's JSON text, on which nova 31 calls .get()
        if (typeof info === 'string') return reject('image properties not supported', `image asks hw_maxphysaddr_bits=${bits}: nova ${ctx.cfg.release}'s ImagePropertiesFilter raises AttributeError on ${hs.host}'s cpu_info (a JSON string), which fails the request`)
        const have = (info as {maxphysaddr?: {bits?: number}} | null)?.maxphysaddr?.bits
        if (!have || have >= Number(bits)) return null
      }
    }
    return reject('image properties not supported', `image asks ${text}${version ? ` hypervisor version ${version}` : ''}; host supports ${JSON.stringify(hs.supportedInstances)} (hypervisor_version ${hs.hypervisorVersion})`)
  },
}

// ---------------------------------------------------------------- server groups

export const ServerGroupAntiAffinityFilter: HostFilter = {
  name: 'ServerGroupAntiAffinityFilter',
  runOncePerRequest: false,
  reads: (spec) => (spec.group?.policy === 'anti-affinity' ? 'group' : 'flavor'),
  hostPasses(hs, spec) {
    const g = spec.group
    if (!g || g.policy !== 'anti-affinity') return null
    // A move may land back on the host the instance is on (same-host cold migration): nova lets it.
    if (spec.instanceUuid && hs.instances.has(spec.instanceUuid)) return null
    let on = 0
    for (const u of hs.instances) if (g.members.has(u)) on++
    const max = g.rules.max_server_per_host ?? 1
    if (on < max) return null
    return reject(`anti-affinity group ${g.name ?? g.uuid}`, `${on} member(s) of anti-affinity group ${g.name ?? g.uuid} already on ${hs.host} (max_server_per_host=${max})`, max, on)
  },
}

export const ServerGroupAffinityFilter: HostFilter = {
  name: 'ServerGroupAffinityFilter',
  runOncePerRequest: false,
  reads: () => 'flavor',
  hostPasses(hs, spec) {
    const g = spec.group
    if (!g || g.policy !== 'affinity') return null
    if (g.hosts.length === 0 || g.hosts.includes(hs.host)) return null
    return reject(`affinity group ${g.name ?? g.uuid} on other hosts`, `affinity group ${g.name ?? g.uuid} lives on ${g.hosts.join(', ')}, not ${hs.host}`)
  },
}

// ---------------------------------------------------------------- NUMATopologyFilter

export const NUMATopologyFilter: HostFilter = {
  name: 'NUMATopologyFilter',
  runOncePerRequest: false,
  reads: (spec) => (spec.numaTopology ? 'placed' : 'flavor'),
  hostPasses(hs, spec, ctx) {
    const p = spec.image.properties
    const policies = [spec.extraSpecs['hw:cpu_policy'], p.hw_cpu_policy]
    const threads = [spec.extraSpecs['hw:cpu_thread_policy'], p.hw_cpu_thread_policy]
    if (hs.numa && policies.includes('dedicated') && threads.includes('require') && !hs.numa.cells.some((c) => c.siblings.some((s) => s.length > 1))) {
      return reject('no hyperthreads for cpu_thread_policy=require', `${hs.host} has no hyperthread siblings but cpu_thread_policy=require`)
    }
    const req = spec.numaTopology
    if (!req) return null
    if (!hs.numa) {
      return reject('no host NUMA topology', hs.numaError ? `compute node numa_topology is unreadable (${hs.numaError})` : `${hs.host} reports no NUMA topology but the instance asks for one`)
    }
    const pciCountByCell = hs.pciPools.length > 0 ? countByCell(hs.pciPools) : undefined
    const fit = fitInstanceToHost(hs.numa, req, {
      limits: {cpu: hs.cpuAllocationRatio, ram: hs.ramAllocationRatio},
      packing: ctx.cfg.packing_host_numa_cells_allocation_strategy,
      pciCountByCell,
      pciRequested: spec.pciRequests.length > 0,
      release: ctx.cfg.release,
    })
    if (!fit.ok) {
      const need = req.cells.reduce((n, c) => n + c.pcpuset.length, 0) + (req.emulatorThreadsIsolated ? 1 : 0)
      const pinned = req.cells.some((c) => c.cpuPolicy === 'dedicated' || c.cpuPolicy === 'mixed')
      if (pinned) {
        const bestFree = Math.max(0, ...hs.numa.cells.map((c) => c.pcpuset.filter((x) => !c.pinned_cpus.includes(x)).length))
        return reject('insufficient free pCPUs in a NUMA cell', `instance does not fit: ${fit.reason}`, need, bestFree)
      }
      return reject('NUMA topology does not fit', `instance does not fit: ${fit.reason}`)
    }
    ctx.numaFits.set(hs.key, fit.cells)
    return null
  },
}

function countByCell(pools: PciPool[]): Map<number, number> {
  const m = new Map<number, number>()
  for (const p of pools) if (p.numa_node !== null) m.set(p.numa_node, (m.get(p.numa_node) ?? 0) + p.count)
  return m
}

// ---------------------------------------------------------------- aggregates, AZ, tenants

export const AvailabilityZoneFilter: HostFilter = {
  name: 'AvailabilityZoneFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec, ctx) {
    const az = spec.availabilityZone
    if (!az) return null
    const md = aggregateMetadata(hs, 'availability_zone').get('availability_zone')
    if (md) return md.has(az) ? null : reject(`not in AZ ${az}`, `${hs.host} is in AZ ${[...md].join(',')}, not ${az}`)
    return az === ctx.cfg.default_availability_zone ? null : reject(`not in AZ ${az}`, `${hs.host} is in the default AZ ${ctx.cfg.default_availability_zone}, not ${az}`)
  },
}

export const AggregateInstanceExtraSpecsFilter: HostFilter = {
  name: 'AggregateInstanceExtraSpecsFilter',
  runOncePerRequest: true,
  reads: () => 'flavor',
  hostPasses(hs, spec) {
    const specs = Object.entries(spec.extraSpecs)
    if (specs.length === 0) return null
    const md = aggregateMetadata(hs)
    for (const [key, req] of specs) {
      const i = key.indexOf(':')
      let k = key
      if (i >= 0) {
        if (key.slice(0, i) !== 'aggregate_instance_extra_specs') continue
        k = key.slice(i + 1)
      }
      const vals = md.get(k)
      if (!vals || vals.size === 0) return reject(`aggregate metadata ${k} missing`, `no aggregate of ${hs.host} sets ${k} (extra spec ${key}=${req})`)
      if (![...vals].some((v) => extraSpecMatch(v, req))) return reject(`aggregate metadata ${k} not matched`, `aggregate metadata ${k}=${[...vals].join(',')} does not match "${req}"`)
    }
    return null
  },
}

export const AggregateMultiTenancyIsolation: HostFilter = {
  name: 'AggregateMultiTenancyIsolation',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec, ctx) {
    // Zed reads the filter_tenant_id key only; nova 31 every key starting with it (filter_tenant_id_gr1 ...)
    const zed = ctx.cfg.release === 'zed'
    const md = aggregateMetadata(hs, zed ? 'filter_tenant_id' : undefined)
    if (md.size === 0) return null
    const ids = zed ? md.get('filter_tenant_id') : new Set([...md].flatMap(([k, v]) => (k.startsWith('filter_tenant_id') ? [...v] : [])))
    if (ids && ids.size > 0 && !ids.has(spec.projectId)) return reject('aggregate reserved for other projects', `${hs.host} is reserved for project(s) ${[...ids].join(',')}, not ${spec.projectId}`)
    return null
  },
}

export const IsolatedHostsFilter: HostFilter = {
  name: 'IsolatedHostsFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec, ctx) {
    const {isolated_hosts: hosts, isolated_images: images, restrict_isolated_hosts_to_isolated_images: restrict} = ctx.cfg
    const hostIsolated = hosts.includes(hs.host)
    if (images.length === 0) return !restrict || !hostIsolated ? null : reject('isolated host', `${hs.host} is an isolated host`)
    const imageIsolated = spec.image.id !== null && images.includes(spec.image.id)
    const ok = restrict ? imageIsolated === hostIsolated : !imageIsolated || hostIsolated
    return ok ? null : reject('isolated host/image mismatch', `host isolated=${hostIsolated}, image isolated=${imageIsolated}`)
  },
}

export const SameHostFilter: HostFilter = {
  name: 'SameHostFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec) {
    const want = spec.hints.same_host
    if (!want || want.length === 0) return null
    return want.some((u) => hs.instances.has(u)) ? null : reject('not the same host as hinted instances', `none of ${want.join(', ')} runs on ${hs.host}`)
  },
}

export const DifferentHostFilter: HostFilter = {
  name: 'DifferentHostFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec) {
    const avoid = spec.hints.different_host
    if (!avoid || avoid.length === 0) return null
    const hit = avoid.filter((u) => hs.instances.has(u))
    return hit.length === 0 ? null : reject('runs a different_host instance', `${hit.join(', ')} runs on ${hs.host}`)
  },
}

// ---------------------------------------------------------------- counters

function ioOps(name: string, perAggregate: boolean): HostFilter {
  return {
    name,
    runOncePerRequest: false,
    reads: () => 'counters',
    hostPasses(hs, _spec, ctx) {
      const max = perAggregate ? aggregateNumber(hs, 'max_io_ops_per_host', ctx.cfg.max_io_ops_per_host, 'int').value : ctx.cfg.max_io_ops_per_host
      return hs.numIoOps < max ? null : reject('too many I/O operations', `${hs.numIoOps} I/O-heavy operations, max_io_ops_per_host=${max}`, max, hs.numIoOps)
    },
  }
}

function numInstances(name: string, perAggregate: boolean): HostFilter {
  return {
    name,
    runOncePerRequest: false,
    reads: () => 'counters',
    hostPasses(hs, _spec, ctx) {
      const max = perAggregate ? aggregateNumber(hs, 'max_instances_per_host', ctx.cfg.max_instances_per_host, 'int').value : ctx.cfg.max_instances_per_host
      return hs.numInstances < max ? null : reject('too many instances', `${hs.numInstances} instances, max_instances_per_host=${max}`, max, hs.numInstances)
    },
  }
}

// ---------------------------------------------------------------- PCI

function poolMatches(pool: PciPool, spec: PciRequest['spec']): boolean {
  if (spec.vendor_id && pool.vendor_id !== spec.vendor_id) return false
  if (spec.product_id && pool.product_id !== spec.product_id) return false
  if (spec.device_type && pool.tags.dev_type !== spec.device_type) return false
  return true
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|t|true|on|y|yes)$/i.test(v.trim())

/**
 * PciDeviceStats._filter_pools without NUMA cells (what PciPassthroughFilter asks): pools matching
 * the alias, then PF, vDPA and remote-managed pools dropped unless the request asks for them.
 */
function usablePools(pools: PciPool[], spec: PciRequest['spec']): PciPool[] {
  return pools.filter((p) => {
    if (!poolMatches(p, spec)) return false
    if (p.tags.dev_type === 'type-PF' && spec.device_type !== 'type-PF') return false
    if (p.tags.dev_type === 'vdpa' && spec.device_type !== 'vdpa') return false
    if (truthy(p.tags.remote_managed)) return false
    return true
  })
}

/** PciDeviceStats.support_requests without NUMA affinity: every request's count from usable pools. */
export function pciSupports(pools: PciPool[], requests: PciRequest[]): {ok: true; pools: PciPool[]} | {ok: false; need: number; have: number; alias: string} {
  const work = pools.map((p) => ({...p}))
  for (const r of requests) {
    const matching = usablePools(work, r.spec)
    const have = matching.reduce((n, p) => n + p.count, 0)
    if (have < r.count) return {ok: false, need: r.count, have, alias: r.alias}
    let left = r.count
    for (const p of matching) {
      const take = Math.min(left, p.count)
      p.count -= take
      left -= take
      if (left === 0) break
    }
  }
  return {ok: true, pools: work}
}

export const PciPassthroughFilter: HostFilter = {
  name: 'PciPassthroughFilter',
  runOncePerRequest: false,
  reads: (spec) => (spec.pciRequests.length > 0 ? 'placed' : 'flavor'),
  hostPasses(hs, spec) {
    if (spec.pciRequests.length === 0) return null
    const r = pciSupports(hs.pciPools, spec.pciRequests)
    return r.ok ? null : reject(`insufficient PCI devices (${r.alias})`, `needs ${r.need} device(s) of alias ${r.alias}, ${r.have} free`, r.need, r.have)
  },
}

// ---------------------------------------------------------------- pre-placement resource filters

export const RamFilter: HostFilter = {
  name: 'RamFilter',
  runOncePerRequest: false,
  reads: () => 'counters',
  hostPasses(hs, spec) {
    const limit = hs.totalUsableRamMb * hs.ramAllocationRatio
    const usable = limit - (hs.totalUsableRamMb - hs.freeRamMb)
    return usable >= spec.memoryMb ? null : reject('insufficient RAM', `needs ${spec.memoryMb} MB, ${usable} MB usable (ram_allocation_ratio ${hs.ramAllocationRatio})`, spec.memoryMb, usable)
  },
}

export const CoreFilter: HostFilter = {
  name: 'CoreFilter',
  runOncePerRequest: false,
  reads: () => 'counters',
  hostPasses(hs, spec) {
    if (!hs.vcpusTotal) return null
    if (spec.vcpus > hs.vcpusTotal) return reject('insufficient vCPUs', `needs ${spec.vcpus} vCPUs, host has ${hs.vcpusTotal} (cannot overcommit against itself)`, spec.vcpus, hs.vcpusTotal)
    const free = hs.vcpusTotal * hs.cpuAllocationRatio - hs.vcpusUsed
    return free >= spec.vcpus ? null : reject('insufficient vCPUs', `needs ${spec.vcpus} vCPUs, ${free} free (cpu_allocation_ratio ${hs.cpuAllocationRatio})`, spec.vcpus, free)
  },
}

export const DiskFilter: HostFilter = {
  name: 'DiskFilter',
  runOncePerRequest: false,
  reads: () => 'counters',
  hostPasses(hs, spec) {
    const requested = 1024 * ((spec.isBfv ? 0 : spec.rootGb) + spec.ephemeralGb) + spec.swap
    const total = hs.totalUsableDiskGb * 1024
    const usable = total * hs.diskAllocationRatio - (total - hs.freeDiskMb)
    return usable >= requested ? null : reject('insufficient disk', `needs ${requested} MB disk, ${usable} MB usable`, requested, usable)
  },
}

export const FILTERS: Record<string, HostFilter> = Object.fromEntries(
  [
    ComputeFilter,
    ComputeCapabilitiesFilter,
    ImagePropertiesFilter,
    ServerGroupAntiAffinityFilter,
    ServerGroupAffinityFilter,
    NUMATopologyFilter,
    AvailabilityZoneFilter,
    AggregateInstanceExtraSpecsFilter,
    AggregateMultiTenancyIsolation,
    IsolatedHostsFilter,
    SameHostFilter,
    DifferentHostFilter,
    ioOps('IoOpsFilter', false),
    ioOps('AggregateIoOpsFilter', true),
    numInstances('NumInstancesFilter', false),
    numInstances('AggregateNumInstancesFilter', true),
    PciPassthroughFilter,
    RamFilter,
    CoreFilter,
    DiskFilter,
  ].map((f) => [f.name, f]),
)

/** Resolve names ("nova.scheduler.filters.compute_filter.ComputeFilter" or "ComputeFilter"). */
export function resolveFilters(names: string[]): {filters: HostFilter[]; unknown: string[]} {
  const filters: HostFilter[] = []
  const unknown: string[] = []
  for (const raw of names) {
    const name = raw.split('.').pop() as string
    const f = FILTERS[name]
    if (f) filters.push(f)
    else unknown.push(raw)
  }
  return {filters, unknown}
}
