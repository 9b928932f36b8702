/**
 * usage: seed 000's question, "is it really a leak?". A compute node row records what the resource
 * tracker counted (vcpus_used, memory_mb_used, local_gb_used, free_ram_mb, free_disk_gb,
 * running_vms). It should equal the sum over the live instances on the node (plus
 * reserved_host_memory_mb, read from the MEMORY_MB inventory's `reserved`, 512 by default), counting
 * migrations in progress on both ends. Negative free values are normal under overcommit (the
 * allocation ratio); they are a leak only when the row counts instances that are gone.
 * Placement's view per consumer is judged by the leaks check; here it is shown as evidence.
 */
import type {Finding} from '../domain/finding.js'
import {type CloudModel, nodeKey} from '../domain/model.js'
import type {FlavorObject} from '../domain/nova-objects.js'
import {serviceUp} from '../domain/service-state.js'
import type {Instance, Migration} from '../domain/snapshot.js'
import {AuditContext, TextMemo, floatColumn, holdsResources, push} from './context.js'
import {bootsFromVolume} from './flavor-resources.js'
import {DOWN_HOST_NOTE} from './pinning.js'

const REPAIR = 'cloudctl repair usage'
export const DEFAULT_RESERVED_HOST_MEMORY_MB = 512

interface Usage {
  vcpus: number
  memory_mb: number
  local_gb: number
}

export function checkUsage(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const findings: Finding[] = []
  const rc = model.rc
  const id = (name: string) => rc.id(name) as number

  // Instances deleted on a node, to name the suspects when a row counts too much (one pass).
  const deletedOnNode = new Map<string, Instance[]>()
  for (const inst of model.snapshot.nova.instances) if (inst.deleted !== 0 && inst.host !== null) push(deletedOnNode, nodeKey(inst.host, inst.node), inst)

  // Usage from instance_extra.flavor depends on the blob and boot-from-volume only: computed once per pair.
  const blobUsage = new TextMemo<Array<Usage | undefined | null>>()
  const newSlots = (): Array<Usage | undefined | null> => []
  const currentUsage = (inst: Instance): Usage | undefined => {
    const text = inst.extra?.flavor
    if (!text) return flavorUsage(inst, 'cur')
    const slots = blobUsage.get(text, newSlots)
    const bfv = bootsFromVolume(inst) ? 1 : 0
    let u = slots[bfv]
    if (u === undefined) {
      const parsed = ctx.instanceFlavors(inst)
      // Without a current flavor in the blob the instance row decides: not shareable.
      if (!parsed.ok || !parsed.value?.cur) return flavorUsage(inst, 'cur')
      slots[bfv] = u = flavorUsage(inst, 'cur') ?? null
    }
    return u ?? undefined
  }

  const flavorUsage = (inst: Instance, which: 'cur' | 'old' | 'new'): Usage | undefined => {
    const parsed = ctx.instanceFlavors(inst)
    let f: Pick<FlavorObject, 'vcpus' | 'memory_mb' | 'root_gb' | 'ephemeral_gb' | 'swap'> | null = null
    if (parsed.ok && parsed.value) f = parsed.value[which] ?? parsed.value.cur
    if (!f) {
      if (!parsed.ok || inst.vcpus === null || inst.memory_mb === null) return undefined
      const row = inst.instance_type_id === null ? undefined : model.flavorsById.get(inst.instance_type_id)
      f = {vcpus: inst.vcpus, memory_mb: inst.memory_mb, root_gb: inst.root_gb ?? 0, ephemeral_gb: inst.ephemeral_gb ?? 0, swap: row?.swap ?? 0}
    }
    return {vcpus: f.vcpus, memory_mb: f.memory_mb, local_gb: (bootsFromVolume(inst) ? 0 : f.root_gb) + f.ephemeral_gb + f.swap / 1024}
  }

  for (const cn of model.liveComputeNodes) {
    if (cn.hypervisor_type === 'ironic') continue // the ironic driver reports a node as all-used or all-free
    const key = nodeKey(cn.host, cn.hypervisor_hostname)
    const resident = model.instancesOnNode(cn.host, cn.hypervisor_hostname).filter(holdsResources)
    const migrations: Array<{m: Migration; inst: Instance; which: 'old' | 'new'}> = []
    const moving = ctx.inProgressByNode.get(key)
    const residentUuids = moving ? new Set(resident.map((i) => i.uuid)) : undefined
    for (const m of moving ?? []) {
      const inst = m.instance_uuid ? ctx.liveRows(m.instance_uuid)?.[0] : undefined
      if (!inst) continue
      const incoming = m.dest_compute === cn.host && m.dest_node === cn.hypervisor_hostname
      const outbound = m.source_compute === cn.host && m.source_node === cn.hypervisor_hostname
      if (incoming && outbound) {
        // A resize on its own node: nova's resource tracker counts the instance (above) and also
        // holds the other flavor of the migration, for a revert (or the pending new one before
        // finish_resize switched the instance's flavor).
        if (!residentUuids?.has(inst.uuid)) continue
        migrations.push({m, inst, which: inst.instance_type_id === m.old_instance_type_id ? 'new' : 'old'})
        continue
      }
      if (residentUuids?.has(inst.uuid)) continue
      migrations.push({m, inst, which: incoming ? 'new' : 'old'})
    }

    const rp = ctx.providerOf(cn)
    const memInv = rp ? model.inventory(rp.id, id('MEMORY_MB')) : undefined
    const diskInv = rp ? model.inventory(rp.id, id('DISK_GB')) : undefined
    const vcpuInv = rp ? model.inventory(rp.id, id('VCPU')) : undefined
    const reservedMem = memInv?.reserved ?? DEFAULT_RESERVED_HOST_MEMORY_MB
    const reservedCpus = vcpuInv?.reserved ?? 0

    let undecidable = false
    const sum: Usage = {vcpus: reservedCpus, memory_mb: reservedMem, local_gb: 0}
    const add = (u: Usage | undefined): boolean => {
      if (!u) return false
      sum.vcpus += u.vcpus
      sum.memory_mb += u.memory_mb
      sum.local_gb += u.local_gb
      return true
    }
    for (const inst of resident) {
      if (!add(currentUsage(inst))) {
        undecidable = true
        break
      }
    }
    for (const x of migrations) {
      if (undecidable) break
      if (!add(flavorUsage(x.inst, x.which))) undecidable = true
    }
    if (undecidable) continue

    const expected = {
      vcpus_used: sum.vcpus,
      memory_mb_used: sum.memory_mb,
      local_gb_used: Math.floor(sum.local_gb),
      free_ram_mb: cn.memory_mb - sum.memory_mb,
      free_disk_gb: Math.floor(cn.local_gb - sum.local_gb),
      running_vms: resident.length,
    }
    const recorded = {
      vcpus_used: cn.vcpus_used,
      memory_mb_used: cn.memory_mb_used,
      local_gb_used: cn.local_gb_used,
      free_ram_mb: cn.free_ram_mb,
      free_disk_gb: cn.free_disk_gb,
      running_vms: cn.running_vms,
    }
    // Evidence is built only for a node with a finding: most nodes have none.
    const placement = () =>
      rp
        ? {
            provider: {id: rp.id, uuid: rp.uuid, generation: rp.generation},
            VCPU: model.usage(rp.id, id('VCPU')),
            PCPU: model.usage(rp.id, id('PCPU')),
            MEMORY_MB: model.usage(rp.id, id('MEMORY_MB')),
            DISK_GB: model.usage(rp.id, id('DISK_GB')),
          }
        : null

    const drift: Record<string, {recorded: number | null; expected: number; diff: number | null}> = {}
    for (const k of Object.keys(expected) as Array<keyof typeof expected>) {
      const r = recorded[k]
      if (r === null) continue
      // local_gb_used holds swap/1024 truncated by the column; allow that rounding.
      const tol = k === 'local_gb_used' || k === 'free_disk_gb' ? 1 : 0
      if (Math.abs(r - expected[k]) > tol) drift[k] = {recorded: r, expected: expected[k], diff: r - expected[k]}
    }
    // The counters are the resource tracker's own: on a dead host they are only stale.
    const rowIsStale = !serviceUp(model.serviceOf(cn), model.snapshot.captured_at)
    const subject = () => ({...ctx.nodeSubject(cn), ...(rp ? {provider_uuid: rp.uuid} : {})})
    const base = () => ({
      compute_node: {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid, updated_at: cn.updated_at},
      totals: {vcpus: cn.vcpus, memory_mb: cn.memory_mb, local_gb: cn.local_gb},
      recorded,
      expected,
      placement_usage: placement(),
      reserved_host_memory_mb: reservedMem,
      reserved_host_memory_source: memInv ? 'MEMORY_MB inventory reserved' : 'nova default',
      instances: resident.map((i) => i.uuid),
      migrations_in_progress: migrations.map((x) => ({uuid: x.m.uuid, instance_uuid: x.inst.uuid, status: x.m.status, counted_flavor: x.which})),
    })

    if (Object.keys(drift).length > 0) {
      const over = ['vcpus_used', 'memory_mb_used', 'local_gb_used', 'running_vms'].some((k) => (drift[k]?.diff ?? 0) > 0)
      const suspects = (deletedOnNode.get(key) ?? []).filter((i) => ctx.liveRows(i.uuid) === undefined).map((i) => ({uuid: i.uuid, id: i.id, deleted_at: i.deleted_at, vcpus: i.vcpus, memory_mb: i.memory_mb}))
      findings.push({
        check: 'usage',
        code: 'usage.node-drift',
        severity: rowIsStale ? 'info' : 'warning',
        subject: subject(),
        message: `${cn.hypervisor_hostname ?? cn.host}: the compute node row disagrees with its live instances (${Object.entries(drift)
          .map(([k, d]) => `${k} ${d.recorded} vs ${d.expected}`)
          .join(', ')})${over ? ': it still counts resources of instances that are gone' : ''}; ${rowIsStale ? `${DOWN_HOST_NOTE}` : "nova-compute's update_available_resource has not run since"}.`,
        evidence: {...base(), drift, deleted_instances_on_node: suspects.slice(0, 50), ...(rowIsStale ? {service_down: true} : {})},
        repair: REPAIR,
      })
      continue
    }

    // The row is right: explain negative free values by the allocation ratio.
    const negatives: Record<string, unknown> = {}
    let beyondRatio = false
    if ((cn.free_ram_mb ?? 0) < 0) {
      const ratio = memInv ? floatColumn(memInv.allocation_ratio) : (cn.ram_allocation_ratio ?? 1.5)
      const capacity = (cn.memory_mb - reservedMem) * ratio + reservedMem
      beyondRatio ||= cn.memory_mb_used > capacity + 1e-6
      negatives.free_ram_mb = {value: cn.free_ram_mb, ram_allocation_ratio: ratio, overcommitted_capacity_mb: capacity, memory_mb_used: cn.memory_mb_used}
    }
    // Without DISK_GB on the node's provider, disk comes from a sharing provider: local_gb says nothing.
    if ((cn.free_disk_gb ?? 0) < 0 && diskInv) {
      const ratio = diskInv ? floatColumn(diskInv.allocation_ratio) : (cn.disk_allocation_ratio ?? 1)
      const capacity = cn.local_gb * ratio
      beyondRatio ||= cn.local_gb_used > capacity + 1e-6
      negatives.free_disk_gb = {value: cn.free_disk_gb, disk_allocation_ratio: ratio, overcommitted_capacity_gb: capacity, local_gb_used: cn.local_gb_used}
    }
    if (cn.vcpus_used > cn.vcpus) {
      const ratio = vcpuInv ? floatColumn(vcpuInv.allocation_ratio) : (cn.cpu_allocation_ratio ?? 16)
      const capacity = (cn.vcpus - reservedCpus) * ratio
      beyondRatio ||= cn.vcpus_used > capacity + reservedCpus + 1e-6
      negatives.free_vcpus = {value: cn.vcpus - cn.vcpus_used, cpu_allocation_ratio: ratio, overcommitted_capacity: capacity, vcpus_used: cn.vcpus_used}
    }
    if (Object.keys(negatives).length === 0) continue
    findings.push({
      check: 'usage',
      code: 'usage.negative-free',
      severity: beyondRatio ? 'warning' : 'info',
      subject: subject(),
      message: beyondRatio
        ? `${cn.hypervisor_hostname ?? cn.host}: live instances use more than the node holds even with its allocation ratios (ratios lowered after they were placed?); no instance is missing, it is not a leak.`
        : `${cn.hypervisor_hostname ?? cn.host}: negative free values are overcommit within the allocation ratio, not a leak (the row matches its live instances).`,
      evidence: {...base(), negatives},
      ...(beyondRatio ? {repair: 'Migrate instances off the node or raise its allocation ratios.'} : {}),
    })
  }

  findings.push(...ctx.undecided('usage', 'usage.undecided', 'usage of its compute nodes is'))
  return findings
}

