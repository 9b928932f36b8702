/**
 * A small, consistent cloud for the check tests (until test/support/builders.ts lands): hosts with
 * service, compute node, host mapping, provider and inventories; instances with mapping, flavor blob,
 * consumer and allocations; compute node counters recomputed at build() the way the resource tracker
 * does. Tests then break exactly one thing.
 */
import {buildModel, type CloudModel} from '../../src/lib/domain/model.js'
import {
  CELL0_UUID,
  type CellInfo,
  type ComputeNode,
  emptySnapshot,
  type Instance,
  type Migration,
  type ResourceProvider,
  type Snapshot,
} from '../../src/lib/domain/snapshot.js'

let seq = 0
const uuid = (prefix: string) => {
  seq++
  const hex = seq.toString(16).padStart(12, '0')
  return `${prefix.padEnd(8, '0').slice(0, 8)}-0000-4000-8000-${hex}`
}

export interface FlavorSpec {
  name: string
  vcpus: number
  memory_mb: number
  root_gb: number
  ephemeral_gb?: number
  swap?: number
  extra_specs?: Record<string, string>
}

export const SMALL: FlavorSpec = {name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20}

const flavorBlob = (f: FlavorSpec, id: number) =>
  JSON.stringify({
    cur: {
      'nova_object.name': 'Flavor',
      'nova_object.namespace': 'nova',
      'nova_object.version': '1.2',
      'nova_object.data': {id, name: f.name, flavorid: f.name, memory_mb: f.memory_mb, vcpus: f.vcpus, root_gb: f.root_gb, ephemeral_gb: f.ephemeral_gb ?? 0, swap: f.swap ?? 0, extra_specs: f.extra_specs ?? {}},
    },
    old: null,
    new: null,
  })

export function numaCell(id: number, pcpuset: number[], pinned: number[], cpuset: number[] = []) {
  return {
    'nova_object.name': 'NUMACell',
    'nova_object.version': '1.5',
    'nova_object.data': {id, cpuset, pcpuset, memory: 8192, cpu_usage: 0, memory_usage: 0, pinned_cpus: pinned, siblings: [], mempages: []},
  }
}

export function hostNuma(cells: ReturnType<typeof numaCell>[]): string {
  return JSON.stringify({'nova_object.name': 'NUMATopology', 'nova_object.version': '1.2', 'nova_object.data': {cells}})
}

export function instanceNuma(cells: Array<{id: number; pins: Record<number, number>; reserved?: number[]}>): string {
  return JSON.stringify({
    'nova_object.name': 'InstanceNUMATopology',
    'nova_object.version': '1.3',
    'nova_object.data': {
      cells: cells.map((c) => ({
        'nova_object.name': 'InstanceNUMACell',
        'nova_object.version': '1.6',
        'nova_object.data': {
          id: c.id,
          cpuset: [],
          pcpuset: Object.keys(c.pins).map(Number),
          memory: 1024,
          pagesize: null,
          cpu_pinning_raw: Object.fromEntries(Object.entries(c.pins).map(([k, v]) => [String(k), v])),
          cpuset_reserved: c.reserved ?? null,
          cpu_policy: 'dedicated',
          cpu_thread_policy: null,
        },
      })),
    },
  })
}

export class MiniCloud {
  readonly snap: Snapshot = emptySnapshot({kind: 'generated', description: 'mini-cloud'}, '2024-06-01T00:00:00.000Z')
  private ids = {cell: 0, svc: 0, cn: 0, rp: 0, inv: 0, alloc: 0, inst: 0, mig: 0, hm: 0, im: 0, consumer: 0, flavor: 0, agg: 0, pagg: 0}
  readonly cell0: CellInfo
  readonly cell1: CellInfo
  /** Skip recomputing compute node counters at build() (to plant usage faults by hand afterwards). */
  freezeCounters = false
  private project = 1
  private user = 1

  constructor() {
    this.cell0 = this.addCell('cell0', CELL0_UUID)
    this.cell1 = this.addCell('cell1')
    this.snap.placement.projects.push({id: 1, external_id: 'p-1'})
    this.snap.placement.users.push({id: 1, external_id: 'u-1'})
  }

  addCell(name: string, cellUuid = uuid('ce11')): CellInfo {
    const c: CellInfo = {id: ++this.ids.cell, uuid: cellUuid, name, database_connection: null, transport_url: null, disabled: false, is_cell0: cellUuid === CELL0_UUID, status: 'available'}
    this.snap.cells.push(c)
    return c
  }

  host(name: string, opts: {cell?: CellInfo; vcpus?: number; memory_mb?: number; local_gb?: number; numa?: string; pcpus?: number} = {}): {cn: ComputeNode; rp: ResourceProvider} {
    const cell = opts.cell ?? this.cell1
    const svcId = ++this.ids.svc
    this.snap.nova.services.push({
      cell_uuid: cell.uuid, id: svcId, uuid: uuid('5e1c'), host: name, binary: 'nova-compute', topic: 'compute', report_count: 1, disabled: false, disabled_reason: null,
      forced_down: false, last_seen_up: null, version: 61, deleted: 0, deleted_at: null, created_at: null, updated_at: null,
    })
    const cnUuid = uuid('c0de')
    const cn: ComputeNode = {
      cell_uuid: cell.uuid, id: ++this.ids.cn, uuid: cnUuid, service_id: svcId, host: name, hypervisor_hostname: name, hypervisor_type: 'QEMU', hypervisor_version: 6002000,
      host_ip: null, vcpus: opts.vcpus ?? 16, memory_mb: opts.memory_mb ?? 65536, local_gb: opts.local_gb ?? 500, vcpus_used: 0, memory_mb_used: 512, local_gb_used: 0,
      free_ram_mb: null, free_disk_gb: null, disk_available_least: null, current_workload: 0, running_vms: 0, cpu_allocation_ratio: 4, ram_allocation_ratio: 1, disk_allocation_ratio: 1,
      cpu_info: '{}', supported_instances: null, pci_stats: null, stats: '{}', numa_topology: opts.numa ?? null, mapped: 1, deleted: 0, deleted_at: null, created_at: null, updated_at: null,
    }
    this.snap.nova.compute_nodes.push(cn)
    this.snap.nova_api.host_mappings.push({id: ++this.ids.hm, cell_id: cell.id, host: name})
    const rpId = ++this.ids.rp
    const rp: ResourceProvider = {id: rpId, uuid: cnUuid, name, generation: 1, root_provider_id: rpId, parent_provider_id: null}
    this.snap.placement.resource_providers.push(rp)
    const inv = (rc: number, total: number, reserved: number, ratio: number) =>
      this.snap.placement.inventories.push({id: ++this.ids.inv, resource_provider_id: rpId, resource_class_id: rc, total, reserved, min_unit: 1, max_unit: total, step_size: 1, allocation_ratio: ratio})
    inv(0, cn.vcpus, 0, 4)
    inv(1, cn.memory_mb, 512, 1)
    inv(2, cn.local_gb, 0, 1)
    if (opts.pcpus) inv(14, opts.pcpus, 0, 1)
    return {cn, rp}
  }

  flavor(f: FlavorSpec): number {
    const id = ++this.ids.flavor
    this.snap.nova_api.flavors.push({
      id, flavorid: f.name, name: f.name, memory_mb: f.memory_mb, vcpus: f.vcpus, swap: f.swap ?? 0, root_gb: f.root_gb, ephemeral_gb: f.ephemeral_gb ?? 0, rxtx_factor: 1,
      vcpu_weight: 0, disabled: false, is_public: true, description: null, extra_specs: f.extra_specs ?? {},
    })
    return id
  }

  /** A live instance on a host, with mapping, consumer and the allocations its flavor asks for. */
  instance(host: {cn: ComputeNode; rp: ResourceProvider}, f: FlavorSpec = SMALL, opts: {uuid?: string; numa?: string; allocations?: Record<number, number>; bfv?: boolean} = {}): Instance {
    const flavorId = this.snap.nova_api.flavors.find((x) => x.name === f.name)?.id ?? this.flavor(f)
    const u = opts.uuid ?? uuid('1257')
    const cell = this.snap.cells.find((c) => c.uuid === host.cn.cell_uuid) as CellInfo
    const inst: Instance = {
      cell_uuid: cell.uuid, id: ++this.ids.inst, uuid: u, host: host.cn.host, node: host.cn.hypervisor_hostname, vm_state: 'active', task_state: null, power_state: 1,
      project_id: 'p-1', user_id: 'u-1', instance_type_id: flavorId, vcpus: f.vcpus, memory_mb: f.memory_mb, root_gb: f.root_gb, ephemeral_gb: f.ephemeral_gb ?? 0,
      availability_zone: 'nova', display_name: `vm-${this.ids.inst}`, image_ref: opts.bfv ? '' : 'img-1', os_type: null, architecture: null, launched_at: null, terminated_at: null,
      created_at: '2024-05-01 00:00:00', updated_at: null, deleted: 0, deleted_at: null, hidden: false,
      extra: {numa_topology: opts.numa ?? null, pci_requests: null, flavor: flavorBlob(f, flavorId)},
    }
    this.snap.nova.instances.push(inst)
    this.snap.nova_api.instance_mappings.push({id: ++this.ids.im, instance_uuid: u, cell_id: cell.id, project_id: 'p-1', user_id: 'u-1', queued_for_delete: false, created_at: null})
    this.consumer(u)
    const dedicated = f.extra_specs?.['hw:cpu_policy'] === 'dedicated'
    const allocs = opts.allocations ?? {
      [dedicated ? 14 : 0]: f.vcpus + (dedicated && f.extra_specs?.['hw:emulator_threads_policy'] === 'isolate' ? 1 : 0),
      1: f.memory_mb,
      2: (opts.bfv ? 0 : f.root_gb) + (f.ephemeral_gb ?? 0) + Math.ceil((f.swap ?? 0) / 1024),
    }
    for (const [rc, used] of Object.entries(allocs)) if (used > 0) this.allocate(host.rp, u, Number(rc), used)
    return inst
  }

  consumer(u: string): void {
    this.snap.placement.consumers.push({id: ++this.ids.consumer, uuid: u, project_id: this.project, user_id: this.user, generation: 1, consumer_type_id: null})
  }

  allocate(rp: ResourceProvider, consumer: string, rc: number, used: number): number {
    const id = ++this.ids.alloc
    this.snap.placement.allocations.push({id, resource_provider_id: rp.id, consumer_id: consumer, resource_class_id: rc, used})
    return id
  }

  migration(inst: Instance, from: ComputeNode, to: ComputeNode, status: string, type: Migration['migration_type'] = 'migration'): Migration {
    const m: Migration = {
      cell_uuid: inst.cell_uuid, id: ++this.ids.mig, uuid: uuid('a16a'), instance_uuid: inst.uuid, source_compute: from.host, dest_compute: to.host, dest_host: null,
      source_node: from.hypervisor_hostname, dest_node: to.hypervisor_hostname, status, migration_type: type, old_instance_type_id: inst.instance_type_id,
      new_instance_type_id: inst.instance_type_id, hidden: false, cross_cell_move: false, deleted: 0, created_at: null, updated_at: null,
    }
    this.snap.nova.migrations.push(m)
    return m
  }

  aggregate(name: string, hosts: Array<{cn: ComputeNode; rp: ResourceProvider}>, metadata: Record<string, string> = {}): string {
    const aggUuid = uuid('a66e')
    this.snap.nova_api.aggregates.push({id: ++this.ids.agg, uuid: aggUuid, name, hosts: hosts.map((h) => h.cn.host as string), metadata})
    const paggId = ++this.ids.pagg
    this.snap.placement.placement_aggregates.push({id: paggId, uuid: aggUuid})
    for (const h of hosts) this.snap.placement.resource_provider_aggregates.push({resource_provider_id: h.rp.id, aggregate_id: paggId})
    return aggUuid
  }

  /** Recompute compute node counters from live instances, as update_available_resource would. */
  build(): CloudModel {
    if (!this.freezeCounters) {
      for (const cn of this.snap.nova.compute_nodes) {
        const insts = this.snap.nova.instances.filter((i) => i.deleted === 0 && !i.hidden && i.host === cn.host && i.node === cn.hypervisor_hostname)
        cn.vcpus_used = insts.reduce((s, i) => s + (i.vcpus ?? 0), 0)
        cn.memory_mb_used = 512 + insts.reduce((s, i) => s + (i.memory_mb ?? 0), 0)
        const swapOf = (i: Instance) => this.snap.nova_api.flavors.find((f) => f.id === i.instance_type_id)?.swap ?? 0
        // nova's ComputeNode fields are integers: the float sum (swap / 1024) is truncated
        const disk = insts.reduce((s, i) => s + (i.image_ref ? (i.root_gb ?? 0) : 0) + (i.ephemeral_gb ?? 0) + swapOf(i) / 1024, 0)
        cn.local_gb_used = Math.trunc(disk)
        cn.free_ram_mb = cn.memory_mb - cn.memory_mb_used
        cn.free_disk_gb = Math.trunc(cn.local_gb - disk)
        cn.running_vms = insts.length
      }
    }
    return buildModel(this.snap)
  }
}

export {uuid as testUuid}
