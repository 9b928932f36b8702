/**
 * Builder family: services and compute nodes. A compute host (nova-compute service, compute node,
 * host mapping, root provider with the libvirt driver's inventories and traits, host NUMA cells), an
 * ironic node, the columns the resource tracker writes, and a host's deletion or re-creation.
 */
import type {ComputeNode, HostMapping, Inventory, Service} from '../../../src/lib/domain/snapshot.js'
import {cpuInfo, formatTs, type HostNumaCellState, hostNumaTopologyBlob, PCI_STATS_EMPTY, pyDumps, SUPPORTED_INSTANCES} from './blobs.js'
import {floatStored} from '../../../src/lib/domain/placement-capacity.js'
import {parseCpuSet} from './resources.js'
import type {HostRec, HostSpec, IronicNodeSpec} from './specs.js'
import {NovaApiFamily} from './nova-api.js'

export abstract class ComputeFamily extends NovaApiFamily {
  protected defaultNuma(vcpus: number, memoryMb: number, dedicated: number[]): HostNumaCellState[] {
    const nCells = vcpus >= 4 ? 2 : 1
    const per = Math.ceil(vcpus / nCells)
    const ded = new Set(dedicated)
    const cells: HostNumaCellState[] = []
    for (let c = 0; c < nCells; c++) {
      const cpus: number[] = []
      for (let i = c * per; i < Math.min(vcpus, (c + 1) * per); i++) cpus.push(i)
      // siblings: pairs of consecutive CPUs, as a 2-thread core reports
      const siblings: number[][] = []
      for (let i = 0; i + 1 < cpus.length; i += 2) siblings.push([cpus[i], cpus[i + 1]])
      cells.push({
        id: c,
        cpuset: cpus.filter((x) => !ded.has(x)),
        pcpuset: cpus.filter((x) => ded.has(x)),
        memory: Math.floor(memoryMb / nCells),
        siblings,
        pinned: new Set(),
        cpuUsage: 0,
        memoryUsage: 0,
      })
    }
    return cells
  }

  addHost(cellName: string, spec: HostSpec): HostRec {
    const cell = this.cell(cellName)
    if (cell.is_cell0) throw new Error('cell0 has no computes')
    const node = spec.hypervisor_hostname ?? spec.host
    if (this.hostsByNode.has(node)) throw new Error(`node ${node} exists`)
    let numa: HostNumaCellState[]
    if (spec.numa) {
      numa = spec.numa.cells.map((c, i) => ({
        id: i,
        cpuset: [...c.cpuset],
        pcpuset: [...(c.pcpuset ?? [])],
        memory: c.memory,
        siblings: (c.siblings ?? []).map((s) => [...s]),
        pinned: new Set(),
        cpuUsage: 0,
        memoryUsage: 0,
        ...(c.mempages ? {mempages: c.mempages.map((p) => ({...p}))} : {}),
      }))
    } else {
      numa = this.defaultNuma(spec.vcpus, spec.memory_mb, spec.cpu_dedicated_set ? parseCpuSet(spec.cpu_dedicated_set) : [])
    }
    const shared = numa.reduce((n, c) => n + c.cpuset.length, 0)
    const dedicated = numa.reduce((n, c) => n + c.pcpuset.length, 0)
    if (spec.numa && shared + dedicated !== spec.vcpus) throw new Error(`host ${spec.host}: vcpus ${spec.vcpus} != NUMA cpus ${shared + dedicated}`)
    const reservedMem = spec.reserved_host_memory_mb ?? 512
    const created = spec.created_at ?? formatTs(this.nowMs - 400 * 86400_000)
    const lastSeen = spec.down ? this.ago(3600) : this.ago(10)
    const service: Service = {
      cell_uuid: cell.uuid,
      id: ++this.seq.service,
      uuid: this.rng.uuid(),
      host: spec.host,
      binary: 'nova-compute',
      topic: 'compute',
      report_count: 345600 + this.seq.service,
      disabled: spec.disabled ?? false,
      disabled_reason: spec.disabled ? (spec.disabled_reason ?? 'maintenance') : null,
      forced_down: spec.forced_down ?? false,
      last_seen_up: lastSeen,
      version: 61,
      deleted: 0,
      deleted_at: null,
      created_at: created,
      updated_at: lastSeen,
    }
    const uuid = spec.uuid ?? this.rng.uuid()
    const cpuRatio = spec.cpu_allocation_ratio ?? 16
    const ramRatio = spec.ram_allocation_ratio ?? 1.5
    const diskRatio = spec.disk_allocation_ratio ?? 1
    const cn: ComputeNode = {
      cell_uuid: cell.uuid,
      id: ++this.seq.cn,
      uuid,
      // nova's resource tracker never sets it (nullable since ComputeNode 1.13): nodes match services by host.
      service_id: null,
      host: spec.host,
      hypervisor_hostname: node,
      hypervisor_type: 'QEMU',
      hypervisor_version: 6002000,
      host_ip: spec.host_ip ?? `10.1.${(this.seq.cn >> 8) & 255}.${this.seq.cn & 255}`,
      vcpus: shared,
      memory_mb: spec.memory_mb,
      local_gb: spec.local_gb,
      vcpus_used: 0,
      memory_mb_used: reservedMem,
      local_gb_used: 0,
      free_ram_mb: spec.memory_mb - reservedMem,
      free_disk_gb: spec.local_gb,
      disk_available_least: spec.local_gb,
      current_workload: 0,
      running_vms: 0,
      cpu_allocation_ratio: floatStored(cpuRatio),
      ram_allocation_ratio: floatStored(ramRatio),
      disk_allocation_ratio: floatStored(diskRatio),
      cpu_info: cpuInfo(numa.length, spec.vcpus, numa.some((c) => c.siblings.length > 0) ? 2 : 1),
      supported_instances: SUPPORTED_INSTANCES,
      pci_stats: PCI_STATS_EMPTY,
      stats: null,
      numa_topology: null,
      mapped: 1,
      deleted: 0,
      deleted_at: null,
      created_at: created,
      updated_at: lastSeen,
    }
    const rp = this.newProvider(uuid, node, null)
    const invs: Record<string, Partial<Inventory> & {total: number}> = {}
    if (shared > 0) invs.VCPU = {total: shared, allocation_ratio: cpuRatio}
    if (dedicated > 0) invs.PCPU = {total: dedicated, allocation_ratio: 1}
    invs.MEMORY_MB = {total: spec.memory_mb, reserved: reservedMem, allocation_ratio: ramRatio}
    if (!spec.shared_storage && spec.local_gb > 0) invs.DISK_GB = {total: spec.local_gb, reserved: spec.reserved_host_disk_gb ?? 0, allocation_ratio: diskRatio}
    this.setInventories(rp, invs)
    const traits = [...this.defaultTraits, ...(spec.traits ?? [])]
    if (spec.disabled) traits.push('COMPUTE_STATUS_DISABLED')
    this.setTraits(rp, traits)
    const rec: HostRec = {
      cell,
      host: spec.host,
      node,
      az: null,
      ironic: false,
      service,
      cn,
      rp,
      numa,
      reservedMemoryMb: reservedMem,
      reservedDiskGb: spec.reserved_host_disk_gb ?? 0,
      vcpusUsed: 0,
      memoryUsed: 0,
      diskUsed: 0,
      swapMbUsed: 0,
      stats: new Map(),
      threads: 2,
    }
    this.registerHost(rec)
    if (spec.az) this.joinAz(rec, spec.az)
    for (const a of spec.aggregates ?? []) this.addHostToAggregate(a, spec.host)
    return rec
  }

  protected registerHost(rec: HostRec): void {
    this.services.push(rec.service)
    this.computeNodes.push(rec.cn)
    this.hosts.push(rec)
    this.hostsByNode.set(rec.node, rec)
    const list = this.hostsByHost.get(rec.host)
    if (list) list.push(rec)
    else this.hostsByHost.set(rec.host, [rec])
    if (!this.hostMappingByHost.has(rec.host)) {
      const hm: HostMapping = {id: ++this.seq.hm, cell_id: rec.cell.id, host: rec.host}
      this.hostMappings.push(hm)
      this.hostMappingByHost.set(rec.host, hm)
    }
  }

  /** An ironic node: its own compute node and root provider (name = node uuid), one unit of CUSTOM_<rc>. */
  addIronicNode(cellName: string, spec: IronicNodeSpec): HostRec {
    const cell = this.cell(cellName)
    const host = spec.host ?? 'ironic-compute-1'
    const uuid = spec.uuid ?? this.rng.uuid()
    let service = this.hostsByHost.get(host)?.[0]?.service
    const newService = !service
    if (!service) {
      service = {
        cell_uuid: cell.uuid,
        id: ++this.seq.service,
        uuid: this.rng.uuid(),
        host,
        binary: 'nova-compute',
        topic: 'compute',
        report_count: 345600,
        disabled: false,
        disabled_reason: null,
        forced_down: false,
        last_seen_up: this.ago(10),
        version: 61,
        deleted: 0,
        deleted_at: null,
        created_at: this.ago(400 * 86400),
        updated_at: this.ago(10),
      }
    }
    const rcName = spec.resource_class.startsWith('CUSTOM_') ? spec.resource_class : `CUSTOM_${spec.resource_class}`
    const cn: ComputeNode = {
      cell_uuid: cell.uuid,
      id: ++this.seq.cn,
      uuid,
      // nova's resource tracker never sets it (nullable since ComputeNode 1.13): nodes match services by host.
      service_id: null,
      host,
      hypervisor_hostname: uuid,
      hypervisor_type: 'ironic',
      hypervisor_version: 1,
      host_ip: `10.2.0.${this.seq.cn & 255}`,
      vcpus: spec.cpus,
      memory_mb: spec.memory_mb,
      local_gb: spec.local_gb,
      vcpus_used: 0,
      memory_mb_used: 0,
      local_gb_used: 0,
      free_ram_mb: spec.memory_mb,
      free_disk_gb: spec.local_gb,
      disk_available_least: spec.local_gb,
      current_workload: 0,
      running_vms: 0,
      cpu_allocation_ratio: floatStored(1),
      ram_allocation_ratio: floatStored(1),
      disk_allocation_ratio: floatStored(1),
      cpu_info: '',
      supported_instances: pyDumps([['x86_64', 'baremetal', 'hvm']]),
      pci_stats: PCI_STATS_EMPTY,
      stats: null,
      numa_topology: null,
      mapped: 1,
      deleted: 0,
      deleted_at: null,
      created_at: this.ago(200 * 86400),
      updated_at: this.ago(10),
    }
    const rp = this.newProvider(uuid, uuid, null)
    this.setInventories(rp, {[rcName]: {total: 1, max_unit: 1}})
    const rec: HostRec = {
      cell,
      host,
      node: uuid,
      az: null,
      ironic: true,
      service,
      cn,
      rp,
      numa: null,
      reservedMemoryMb: 0,
      reservedDiskGb: 0,
      vcpusUsed: 0,
      memoryUsed: 0,
      diskUsed: 0,
      swapMbUsed: 0,
      stats: new Map(),
      threads: 1,
    }
    if (newService) this.services.push(service)
    this.computeNodes.push(cn)
    this.hosts.push(rec)
    this.hostsByNode.set(uuid, rec)
    const list = this.hostsByHost.get(host)
    if (list) list.push(rec)
    else this.hostsByHost.set(host, [rec])
    if (!this.hostMappingByHost.has(host)) {
      const hm: HostMapping = {id: ++this.seq.hm, cell_id: cell.id, host}
      this.hostMappings.push(hm)
      this.hostMappingByHost.set(host, hm)
    }
    if (spec.az) this.joinAz(rec, spec.az)
    return rec
  }

  /** Host NUMA cells as the tracker holds them (pinned_cpus are written from these at build()). */
  numaOf(hostOrNode: string): HostNumaCellState[] {
    const n = this.hostRec(hostOrNode).numa
    if (!n) throw new Error(`${hostOrNode} has no NUMA topology`)
    return n
  }

  /** Write the per-host columns and blobs the resource tracker would have written. */
  finalizeHost(h: HostRec): void {
    const cn = h.cn
    if (h.ironic) {
      const deployed = (h.stats.get('num_instances') ?? 0) > 0
      cn.vcpus_used = deployed ? cn.vcpus : 0
      cn.memory_mb_used = deployed ? cn.memory_mb : 0
      cn.local_gb_used = deployed ? cn.local_gb : 0
      // nova's ironic driver (IronicDriver.update_provider_tree) reserves the node's unit while an
      // instance is on it ([workarounds]skip_reserve_in_use_ironic_nodes defaults to off).
      for (const inv of h.rp.inventories.values()) inv.reserved = deployed ? inv.total : 0
    } else {
      cn.vcpus_used = h.vcpusUsed
      cn.memory_mb_used = h.reservedMemoryMb + h.memoryUsed
      cn.local_gb_used = Math.trunc(h.reservedDiskGb + h.diskUsed + h.swapMbUsed / 1024)
    }
    cn.free_ram_mb = cn.memory_mb - cn.memory_mb_used
    cn.free_disk_gb = cn.local_gb - cn.local_gb_used
    cn.disk_available_least = cn.free_disk_gb
    cn.running_vms = h.stats.get('num_instances') ?? 0
    cn.current_workload = h.stats.get('io_workload') ?? 0
    const stats: Record<string, string> = {failed_builds: '0'}
    for (const [k, v] of h.stats) if (v !== 0 || k === 'num_instances' || k === 'io_workload') stats[k] = String(v)
    if (!('num_instances' in stats)) stats.num_instances = '0'
    if (!('io_workload' in stats)) stats.io_workload = '0'
    cn.stats = pyDumps(stats)
    cn.numa_topology = h.numa ? (this.shapes ? this.shapes.hostNuma(h.numa) : hostNumaTopologyBlob(h.numa)) : null
  }

  /**
   * `openstack compute service delete`: the service and its compute nodes are soft-deleted. Nova also
   * deletes the host mapping and the providers; `keepProvider` / `keepHostMapping` leave them behind
   * (placement refused because allocations remained; an older nova).
   */
  deleteComputeService(host: string, opts: {keepProvider?: boolean; keepHostMapping?: boolean; at?: string} = {}): HostRec[] {
    const recs = this.hostsByHost.get(host)
    if (!recs) throw new Error(`no host ${host}`)
    const at = opts.at ?? this.ago(7200)
    for (const h of recs) {
      this.finalizeHost(h) // the tracker's last write before the rows died
      h.service.deleted = h.service.id
      h.service.deleted_at = at
      h.cn.deleted = h.cn.id
      h.cn.deleted_at = at
      if (!opts.keepProvider && this.providers.has(h.rp.row.uuid)) {
        for (const child of h.rp.children) this.removeProvider(child.row.uuid)
        this.removeProvider(h.rp.row.uuid)
      }
    }
    if (!opts.keepHostMapping) {
      const hm = this.hostMappingByHost.get(host)
      if (hm) {
        this.hostMappings.splice(this.hostMappings.indexOf(hm), 1)
        this.hostMappingByHost.delete(host)
      }
    }
    return recs
  }

  /**
   * The compute node row is recreated under a new uuid (seed 004: the host's name changed to its
   * FQDN, the old row was deleted and nova-compute restarted): the old row is soft-deleted, the new
   * one has a fresh uuid and no provider, because the old provider still holds the name.
   */
  recreateComputeNode(node: string, opts: {uuid?: string} = {}): {old: ComputeNode; current: ComputeNode} {
    const h = this.hostRec(node)
    this.finalizeHost(h)
    const old = h.cn
    const current: ComputeNode = {...old, id: ++this.seq.cn, uuid: opts.uuid ?? this.rng.uuid(), created_at: this.ago(3600), updated_at: this.ago(10)}
    old.deleted = old.id
    old.deleted_at = this.ago(3700)
    h.cn = current
    this.computeNodes.push(current)
    return {old, current}
  }
}
