/**
 * Builder family: instances. A boot as a successful one leaves the databases (instance row and
 * instance_extra, instance mapping, request spec, consumer and allocations), the resource tracker's
 * accounting of it (usage columns, stats, NUMA cells and pins), and its deletion, whole or partial.
 */
import type {Flavor, Instance, InstanceMapping} from '../../../src/lib/domain/snapshot.js'
import {formatTs, type HostNumaCellState, type InstanceNumaCellSpec, requestSpecBlob} from './blobs.js'
import {type HostRec, type InstanceRec, type InstanceSpec, CONSUMER_TYPE_INSTANCE, IO_TASK_STATES, NOT_ON_HOST} from './specs.js'
import {ComputeFamily} from './computes.js'

export abstract class InstanceFamily extends ComputeFamily {
  protected statBump(h: HostRec, key: string, by: number): void {
    h.stats.set(key, (h.stats.get(key) ?? 0) + by)
  }

  /** The resource tracker's instance accounting (Stats.update_stats_for_instance + _update_usage). */
  protected trackInstance(h: HostRec, inst: Instance, sign: 1 | -1): void {
    this.statBump(h, 'num_instances', sign)
    this.statBump(h, `num_task_${inst.task_state ?? 'None'}`, sign)
    this.statBump(h, `num_vm_${inst.vm_state ?? 'None'}`, sign)
    this.statBump(h, `num_os_type_${inst.os_type ?? 'None'}`, sign)
    this.statBump(h, `num_proj_${inst.project_id ?? 'None'}`, sign)
    if (inst.vm_state === 'building' || IO_TASK_STATES.has(inst.task_state ?? '')) this.statBump(h, 'io_workload', sign)
  }

  protected trackUsage(h: HostRec, f: Flavor, sign: 1 | -1, bootFromVolume = false): void {
    h.vcpusUsed += sign * f.vcpus
    h.memoryUsed += sign * f.memory_mb
    h.diskUsed += sign * ((bootFromVolume ? 0 : (f.root_gb ?? 0)) + (f.ephemeral_gb ?? 0))
    h.swapMbUsed += sign * f.swap
  }

  /** Choose pCPUs and NUMA cells for an instance on a host (nova's hardware.numa_fit_instance_to_host, simplified: first fit). */
  protected fitNuma(h: HostRec, inst: InstanceRec, explicitPins: number[] | undefined, force: boolean): InstanceNumaCellSpec[] | null {
    const f = inst.flavor
    const res = inst.res
    const wantsNuma = res.cpuPolicy !== 'shared' || f.extra_specs['hw:numa_nodes'] !== undefined
    if (!wantsNuma) return null
    if (!h.numa) throw new Error(`${h.node} has no NUMA topology`)
    const dedicated = new Set(res.dedicated)
    const sharedVcpus: number[] = []
    for (let v = 0; v < f.vcpus; v++) if (!dedicated.has(v)) sharedVcpus.push(v)
    const needPins = res.dedicated.length + (res.isolateEmulator ? 1 : 0)
    let cell: HostNumaCellState | undefined
    let chosen: number[] = []
    if (explicitPins) {
      if (explicitPins.length !== needPins) throw new Error(`instance needs ${needPins} pCPUs, ${explicitPins.length} given`)
      cell = h.numa.find((c) => explicitPins.every((p) => c.pcpuset.includes(p) || c.cpuset.includes(p))) ?? h.numa[0]
      chosen = [...explicitPins]
      if (!force && this.strict && chosen.some((p) => !cell?.pcpuset.includes(p) || cell.pinned.has(p)))
        throw new Error(`${h.node}: pCPUs ${chosen} not free in the dedicated set`)
    } else {
      for (const c of h.numa) {
        const free = c.pcpuset.filter((p) => !c.pinned.has(p))
        const memFree = c.memory - c.memoryUsage
        if (free.length >= needPins && (force || memFree >= f.memory_mb)) {
          cell = c
          chosen = free.slice(0, needPins)
          break
        }
      }
      if (!cell) {
        if (!force && this.strict) throw new Error(`${h.node}: no NUMA cell with ${needPins} free dedicated pCPUs (NUMATopologyFilter would reject it)`)
        cell = h.numa[0]
        chosen = cell.pcpuset.slice(0, needPins)
      }
    }
    const pagesize = this.claimPages(cell, inst)
    const pinning = new Map<number, number>()
    res.dedicated.forEach((v, i) => pinning.set(v, chosen[i]))
    const reserved = res.isolateEmulator ? [chosen[chosen.length - 1]] : null
    for (const p of chosen) cell.pinned.add(p)
    cell.cpuUsage += sharedVcpus.length
    cell.memoryUsage += f.memory_mb
    if (chosen.length > 0) inst.pins.set(cell.id, chosen)
    inst.numaUsage.set(cell.id, [sharedVcpus.length, f.memory_mb])
    // after fitting, nova numbers the instance cell with the id of the host cell it landed on
    return [
      {
        id: cell.id,
        cpuset: sharedVcpus,
        pcpuset: [...res.dedicated],
        cpuset_reserved: reserved,
        memory: f.memory_mb,
        cpu_pinning: res.dedicated.length > 0 ? pinning : null,
        cpu_policy: res.cpuPolicy === 'shared' ? null : res.cpuPolicy,
        cpu_thread_policy: f.extra_specs['hw:cpu_thread_policy'] ?? null,
        ...(cell.mempages ? {pagesize} : {}),
      },
    ]
  }

  /**
   * A host cell that reports its page pools (real shapes): the guest's memory comes from the
   * smallest pages, or with hw:mem_page_size=large from the largest pool with room; nova counts
   * them as used. Returns the page size a large-page guest records, else null.
   */
  protected claimPages(cell: HostNumaCellState, inst: InstanceRec): number | null {
    if (!cell.mempages || cell.mempages.length === 0) return null
    const kb = inst.flavor.memory_mb * 1024
    const large = inst.flavor.extra_specs['hw:mem_page_size'] === 'large'
    const free = (p: {total: number; used: number; reserved: number}) => p.total - p.used - p.reserved
    const pool = large ? [...cell.mempages].reverse().find((p) => p.size_kb > 4 && free(p) * p.size_kb >= kb) : cell.mempages[0]
    if (!pool) throw new Error(`no huge pages left for ${inst.row.uuid} on NUMA cell ${cell.id}`)
    const n = Math.ceil(kb / pool.size_kb)
    pool.used += n
    ;(inst.pages ??= new Map()).set(cell.id, [pool.size_kb, n])
    return large ? pool.size_kb : null
  }

  /**
   * Boot an instance on a host the way a successful boot leaves the databases: instance row,
   * instance_extra, instance mapping, request spec, consumer and allocations, tracker usage and pins.
   */
  addInstance(hostOrNode: string, flavorName: string, spec: InstanceSpec = {}): InstanceRec {
    const h = this.hostRec(hostOrNode, spec.node)
    const f = this.flavor(flavorName)
    const bfv = spec.boot_from_volume ?? false
    const res = this.resourcesOf(f, bfv)
    const uuid = spec.uuid ?? this.rng.uuid()
    if (this.instances.has(uuid)) throw new Error(`instance ${uuid} exists`)
    const project = spec.project ?? this.defaultProject
    const user = spec.user ?? this.defaultUser
    const force = spec.force ?? false
    const allocs = this.resolve(h, res.resources, force)
    const vmState = spec.vm_state ?? 'active'
    const created = spec.created_at ?? formatTs(this.nowMs - (3600 + (this.seq.inst % 500) * 86400) * 1000)
    const id = ++this.seq.inst
    const row: Instance = {
      cell_uuid: h.cell.uuid,
      id,
      uuid,
      host: h.host,
      node: h.node,
      vm_state: vmState,
      task_state: spec.task_state ?? null,
      power_state: spec.power_state ?? (vmState === 'active' ? 1 : vmState === 'stopped' ? 4 : 0),
      project_id: project,
      user_id: user,
      instance_type_id: f.id,
      vcpus: f.vcpus,
      memory_mb: f.memory_mb,
      root_gb: f.root_gb,
      ephemeral_gb: f.ephemeral_gb,
      // conductor records the host's AZ, or [DEFAULT] default_availability_zone
      availability_zone: spec.az !== undefined ? spec.az : (h.az ?? 'nova'),
      display_name: spec.display_name ?? `vm-${id}`,
      image_ref: bfv ? '' : this.imageId,
      os_type: spec.os_type ?? 'linux',
      architecture: 'x86_64',
      launched_at: created,
      terminated_at: null,
      created_at: created,
      updated_at: created,
      deleted: 0,
      deleted_at: null,
      hidden: false,
      extra: {numa_topology: null, pci_requests: '[]', flavor: this.flavorBlob(f)},
    }
    const mapping: InstanceMapping = {
      id: ++this.seq.im,
      instance_uuid: uuid,
      cell_id: h.cell.id,
      project_id: project,
      user_id: user,
      queued_for_delete: false,
      created_at: created,
    }
    const rec: InstanceRec = {row, flavor: f, res, bootFromVolume: bfv, hostRec: h, pins: new Map(), numaUsage: new Map(), mapping, numaCells: null}
    const numaCells = this.fitNuma(h, rec, spec.pin, force)
    rec.numaCells = numaCells
    if (numaCells && row.extra) row.extra.numa_topology = this.instanceNumaBlob(f, numaCells)
    this.instances.set(uuid, rec)
    this.instanceRows.push(row)
    this.instanceMappings.push(mapping)
    let groupUuid: string | null = null
    if (spec.server_group) {
      const g = this.serverGroup(spec.server_group)
      g.members.push(uuid)
      groupUuid = g.uuid
    }
    if (this.requestSpecs) {
      this.requestSpecRows.push({
        instance_uuid: uuid,
        spec: (this.shapes ? this.shapes.requestSpec.bind(this.shapes) : requestSpecBlob)({
          instanceUuid: uuid,
          flavor: f,
          projectId: project,
          userId: user,
          az: spec.az ?? null,
          imageId: bfv ? null : this.imageId,
          groupUuid,
        }),
      })
    }
    this.putAllocations(uuid, project, user, CONSUMER_TYPE_INSTANCE, allocs)
    if (!NOT_ON_HOST.has(vmState)) {
      this.trackInstance(h, row, 1)
      this.trackUsage(h, f, 1, bfv)
    }
    return rec
  }

  /** Undo an instance's claims on its host: tracker usage, stats, pins and NUMA usage. */
  protected untrack(rec: InstanceRec): void {
    const h = rec.hostRec
    if (!h) return
    if (!NOT_ON_HOST.has(rec.row.vm_state ?? '')) {
      this.trackInstance(h, rec.row, -1)
      this.trackUsage(h, rec.flavor, -1, rec.bootFromVolume)
    }
    for (const [cellId, pins] of rec.pins) {
      const c = h.numa?.find((x) => x.id === cellId)
      if (c) for (const p of pins) c.pinned.delete(p)
    }
    for (const [cellId, [cpu, mem]] of rec.numaUsage) {
      const c = h.numa?.find((x) => x.id === cellId)
      if (c) {
        c.cpuUsage -= cpu
        c.memoryUsage -= mem
      }
    }
    for (const [cellId, [size, n]] of rec.pages ?? []) {
      const pool = h.numa?.find((x) => x.id === cellId)?.mempages?.find((p) => p.size_kb === size)
      if (pool) pool.used -= n
    }
    rec.pins.clear()
    rec.numaUsage.clear()
    rec.pages?.clear()
  }

  /**
   * `openstack server delete` as nova does it: the row is soft-deleted (deleted = id), allocations go,
   * the mapping is queued for delete, the tracker forgets the instance. Options leave parts undone,
   * which is how leaks happen (host died: `keepAllocations`, `keepTracked`).
   */
  deleteInstance(uuid: string, opts: {keepAllocations?: boolean; keepTracked?: boolean; at?: string} = {}): InstanceRec {
    const rec = this.instance(uuid)
    const at = opts.at ?? this.ago(86400)
    if (!opts.keepTracked) this.untrack(rec)
    rec.row.deleted = rec.row.id
    rec.row.deleted_at = at
    rec.row.terminated_at = at
    rec.row.updated_at = at
    rec.row.vm_state = 'deleted'
    rec.row.task_state = null
    rec.row.power_state = 0
    rec.mapping.queued_for_delete = true
    if (!opts.keepAllocations) {
      const c = this.consumers.get(uuid)
      if (c) this.putAllocations(uuid, '', '', CONSUMER_TYPE_INSTANCE, [])
    }
    return rec
  }

  /** Rewrite an instance's NUMA topology blob from its (edited) cells. */
  rewriteInstanceNuma(uuid: string, cells: InstanceNumaCellSpec[]): void {
    const rec = this.instance(uuid)
    rec.numaCells = cells
    if (rec.row.extra) rec.row.extra.numa_topology = this.instanceNumaBlob(rec.flavor, cells)
  }

  /** Next id for a row of a cell table written outside the builder's own operations. */
  nextInstanceId(): number {
    return ++this.seq.inst
  }

  /** Push a raw instance row (a copy left in another cell, a row nova's API never wrote). */
  pushInstanceRow(row: Instance): void {
    this.instanceRows.push(row)
  }
}
