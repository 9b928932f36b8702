/**
 * Minimal consistent clouds for engine tests, built by hand (one cell, one provider per compute
 * node, inventories as nova's libvirt driver reports them).
 */
import {emptySnapshot, type Snapshot} from '../../src/lib/domain/snapshot.js'

export const CELL = 'c0ffee00-0000-4000-8000-000000000001'
export const CAPTURED = '2024-06-03 05:03:40'

export interface HostSpec {
  name: string
  vcpus?: number
  memoryMb?: number
  diskGb?: number
  /** placement usage */
  used?: {VCPU?: number; MEMORY_MB?: number; DISK_GB?: number; PCPU?: number}
  pcpus?: number
  cpuRatio?: number
  ramRatio?: number
  diskRatio?: number
  reservedMemory?: number
  disabled?: boolean
  traits?: string[]
  aggregates?: string[]
  /** host NUMA topology blob, already serialised */
  numa?: string | null
  stats?: Record<string, string>
  freeRamMb?: number
  lastSeenUp?: string
}

export interface FlavorSpec {
  name: string
  vcpus: number
  memoryMb: number
  rootGb?: number
  ephemeralGb?: number
  swap?: number
  extraSpecs?: Record<string, string>
}

const uuid = (prefix: string, n: number) => `${prefix}-0000-4000-8000-${String(n).padStart(12, '0')}`

export const TRAIT_IDS: Record<string, number> = {COMPUTE_STATUS_DISABLED: 1, HW_CPU_HYPERTHREADING: 2, MISC_SHARES_VIA_AGGREGATE: 3, CUSTOM_GOLD: 4, HW_CPU_X86_AVX2: 5}

export function numaBlob(cells: Array<{id: number; cpuset: number[]; pcpuset: number[]; pinned: number[]; siblings: number[][]; memory?: number}>): string {
  return JSON.stringify({
    'nova_object.name': 'NUMATopology',
    'nova_object.version': '1.2',
    'nova_object.data': {
      cells: cells.map((c) => ({
        'nova_object.name': 'NUMACell',
        'nova_object.version': '1.5',
        'nova_object.data': {
          id: c.id,
          cpuset: c.cpuset,
          pcpuset: c.pcpuset,
          memory: c.memory ?? 32768,
          cpu_usage: 0,
          memory_usage: 0,
          pinned_cpus: c.pinned,
          siblings: c.siblings,
          mempages: [{'nova_object.name': 'NUMAPagesTopology', 'nova_object.version': '1.1', 'nova_object.data': {size_kb: 4, total: ((c.memory ?? 32768) * 1024) / 4, used: 0, reserved: 0}}],
          socket: 0,
        },
      })),
    },
  })
}

export function buildCloud(hosts: HostSpec[], flavors: FlavorSpec[], opts: {aggregates?: Array<{name: string; metadata?: Record<string, string>}>} = {}): Snapshot {
  const s = emptySnapshot({kind: 'generated', description: 'engine test cloud'}, '2024-06-03T05:03:40Z')
  s.cells.push({id: 1, uuid: CELL, name: 'cell1', database_connection: null, transport_url: null, disabled: false, is_cell0: false, status: 'available'})
  s.placement.traits = Object.entries(TRAIT_IDS).map(([name, id]) => ({id, name}))
  const aggNames = opts.aggregates ?? []
  s.placement.placement_aggregates = aggNames.map((a, i) => ({id: i + 1, uuid: uuid('a99a0000', i + 1)}))
  s.nova_api.aggregates = aggNames.map((a, i) => ({id: i + 1, uuid: uuid('a99a0000', i + 1), name: a.name, hosts: [], metadata: a.metadata ?? {}}))
  let invId = 1
  let allocId = 1
  hosts.forEach((h, i) => {
    const n = i + 1
    const cnUuid = uuid('c0000000', n)
    const vcpus = h.vcpus ?? 16
    const mem = h.memoryMb ?? 65536
    const disk = h.diskGb ?? 1000
    s.nova.services.push({cell_uuid: CELL, id: n, uuid: uuid('5e000000', n), host: h.name, binary: 'nova-compute', topic: 'compute', report_count: 10, disabled: Boolean(h.disabled), disabled_reason: h.disabled ? 'maintenance' : null, forced_down: false, last_seen_up: h.lastSeenUp ?? CAPTURED, version: 61, deleted: 0, deleted_at: null, created_at: CAPTURED, updated_at: CAPTURED})
    s.nova.compute_nodes.push({
      cell_uuid: CELL, id: n, uuid: cnUuid, service_id: n, host: h.name, hypervisor_hostname: h.name, hypervisor_type: 'QEMU', hypervisor_version: 6002000, host_ip: `10.0.0.${n}`,
      vcpus, memory_mb: mem, local_gb: disk, vcpus_used: h.used?.VCPU ?? 0, memory_mb_used: h.used?.MEMORY_MB ?? 0, local_gb_used: h.used?.DISK_GB ?? 0,
      free_ram_mb: h.freeRamMb ?? mem - (h.used?.MEMORY_MB ?? 0), free_disk_gb: disk - (h.used?.DISK_GB ?? 0), disk_available_least: null, current_workload: 0, running_vms: 0,
      cpu_allocation_ratio: h.cpuRatio ?? 16, ram_allocation_ratio: h.ramRatio ?? 1.5, disk_allocation_ratio: h.diskRatio ?? 1,
      cpu_info: JSON.stringify({arch: 'x86_64', features: ['avx2', 'sse4.2']}), supported_instances: JSON.stringify([['x86_64', 'qemu', 'hvm'], ['i686', 'qemu', 'hvm']]),
      pci_stats: null, stats: JSON.stringify(h.stats ?? {}), numa_topology: h.numa ?? null, mapped: 1, deleted: 0, deleted_at: null, created_at: CAPTURED, updated_at: CAPTURED,
    })
    s.nova_api.host_mappings.push({id: n, cell_id: 1, host: h.name})
    s.placement.resource_providers.push({id: n, uuid: cnUuid, name: h.name, generation: 1, root_provider_id: n, parent_provider_id: null})
    const inv = (rc: number, total: number, reserved: number, ratio: number) => s.placement.inventories.push({id: invId++, resource_provider_id: n, resource_class_id: rc, total, reserved, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: ratio})
    if (vcpus > 0) inv(0, vcpus, 0, Math.fround(h.cpuRatio ?? 16))
    inv(1, mem, h.reservedMemory ?? 0, Math.fround(h.ramRatio ?? 1.5))
    inv(2, disk, 0, Math.fround(h.diskRatio ?? 1))
    if (h.pcpus) inv(14, h.pcpus, 0, 1)
    for (const [rc, id] of [['VCPU', 0], ['MEMORY_MB', 1], ['DISK_GB', 2], ['PCPU', 14]] as const) {
      const used = h.used?.[rc]
      if (used) s.placement.allocations.push({id: allocId++, resource_provider_id: n, consumer_id: uuid('11110000', n), resource_class_id: id, used})
    }
    const traits = [...(h.traits ?? []), ...(h.disabled ? ['COMPUTE_STATUS_DISABLED'] : [])]
    for (const t of traits) s.placement.resource_provider_traits.push({resource_provider_id: n, trait_id: TRAIT_IDS[t] as number})
    for (const a of h.aggregates ?? []) {
      const ai = aggNames.findIndex((x) => x.name === a)
      s.placement.resource_provider_aggregates.push({resource_provider_id: n, aggregate_id: ai + 1})
      s.nova_api.aggregates[ai]?.hosts.push(h.name)
    }
  })
  flavors.forEach((f, i) => {
    s.nova_api.flavors.push({id: i + 1, flavorid: f.name, name: f.name, memory_mb: f.memoryMb, vcpus: f.vcpus, swap: f.swap ?? 0, root_gb: f.rootGb ?? 10, ephemeral_gb: f.ephemeralGb ?? 0, rxtx_factor: 1, vcpu_weight: 0, disabled: false, is_public: true, description: null, extra_specs: f.extraSpecs ?? {}})
  })
  return s
}

/** The seed-004 cloud: pinned hosts whose pinned_cpus stayed full after their instances were deleted. */
export function seed004Cloud(): Snapshot {
  const full = numaBlob([
    {id: 0, cpuset: [0, 1, 2, 3], pcpuset: [4, 5, 6, 7], pinned: [4, 5, 6, 7], siblings: [[4, 5], [6, 7]]},
    {id: 1, cpuset: [8, 9, 10, 11], pcpuset: [12, 13, 14, 15], pinned: [12, 13, 14, 15], siblings: [[12, 13], [14, 15]]},
  ])
  const hosts: HostSpec[] = [1, 2, 3].map((i) => ({name: `pinned-${i}`, vcpus: 8, pcpus: 8, numa: full}))
  return buildCloud(hosts, [
    {name: 'm1.pinned', vcpus: 2, memoryMb: 2048, rootGb: 20, extraSpecs: {'hw:cpu_policy': 'dedicated'}},
    {name: 'm1.small', vcpus: 1, memoryMb: 2048, rootGb: 20},
  ])
}
