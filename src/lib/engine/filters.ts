/**
 * Stage 6: host filters, named and behaving as nova's (nova/scheduler/filters/*.py, Zed). Each
 * returns null (pass) or a Reason that says why, with numbers where there are numbers. The filters
 * that match extra specs and image properties are in spec-filters.ts; FILTERS registers them all.
 */
import type {Service} from '../domain/snapshot.js'
import {aggregateMetadata, aggregateNumber, type PciPool} from './host-state.js'
import {type HostFilter, reject} from './host-filter.js'
import {fitInstanceToHost} from './numa.js'
import type {PciRequest} from './request-spec.js'
import {AggregateInstanceExtraSpecsFilter, ComputeCapabilitiesFilter, ImagePropertiesFilter} from './spec-filters.js'

// The engine and the tests know the filters as one module.
export {type FilterContext, type FilterInput, type HostFilter, type Reason} from './host-filter.js'
export {extraSpecMatch} from './spec-filters.js'

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
    return reject(
      `anti-affinity group ${g.name ?? g.uuid}`,
      `${on} member(s) of anti-affinity group ${g.name ?? g.uuid} already on ${hs.host} (max_server_per_host=${max})`,
      max,
      on,
    )
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
      return reject(
        'no host NUMA topology',
        hs.numaError ? `compute node numa_topology is unreadable (${hs.numaError})` : `${hs.host} reports no NUMA topology but the instance asks for one`,
      )
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
    return az === ctx.cfg.default_availability_zone
      ? null
      : reject(`not in AZ ${az}`, `${hs.host} is in the default AZ ${ctx.cfg.default_availability_zone}, not ${az}`)
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
    if (ids && ids.size > 0 && !ids.has(spec.projectId))
      return reject('aggregate reserved for other projects', `${hs.host} is reserved for project(s) ${[...ids].join(',')}, not ${spec.projectId}`)
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
    return usable >= spec.memoryMb
      ? null
      : reject('insufficient RAM', `needs ${spec.memoryMb} MB, ${usable} MB usable (ram_allocation_ratio ${hs.ramAllocationRatio})`, spec.memoryMb, usable)
  },
}

export const CoreFilter: HostFilter = {
  name: 'CoreFilter',
  runOncePerRequest: false,
  reads: () => 'counters',
  hostPasses(hs, spec) {
    if (!hs.vcpusTotal) return null
    if (spec.vcpus > hs.vcpusTotal)
      return reject('insufficient vCPUs', `needs ${spec.vcpus} vCPUs, host has ${hs.vcpusTotal} (cannot overcommit against itself)`, spec.vcpus, hs.vcpusTotal)
    const free = hs.vcpusTotal * hs.cpuAllocationRatio - hs.vcpusUsed
    return free >= spec.vcpus
      ? null
      : reject('insufficient vCPUs', `needs ${spec.vcpus} vCPUs, ${free} free (cpu_allocation_ratio ${hs.cpuAllocationRatio})`, spec.vcpus, free)
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
