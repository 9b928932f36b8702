/**
 * usage: seed 000's question, "is it really a leak?". A compute node row records what the resource
 * tracker counted (vcpus_used, memory_mb_used, local_gb_used, free_ram_mb, free_disk_gb,
 * running_vms). It should equal the sum over the live instances on the node (plus
 * reserved_host_memory_mb, read from the MEMORY_MB inventory's `reserved`, 512 by default), counting
 * migrations in progress on both ends. Negative free values are normal under overcommit (the
 * allocation ratio); they are a leak only when the row counts instances that are gone. Placement's
 * view per consumer is judged by the leaks check; here it is shown as evidence.
 *
 * This file computes, once per audit, what each node's row should hold; the usage codes compare.
 */
import type {NodeDriftEvidence} from '../../domain/finding.js'
import {nodeKey} from '../../domain/model.js'
import type {FlavorObject, InstanceFlavors, Parsed} from '../../domain/nova-objects.js'
import type {ComputeNode, Instance, Inventory, Migration, ResourceProvider} from '../../domain/snapshot.js'
import {TextMemo} from '../../util/text-memo.js'
import type {AuditContext} from '../context.js'
import {bootsFromVolume} from '../flavor-resources.js'
import {isIronicNode} from '../ironic.js'

export const DEFAULT_RESERVED_HOST_MEMORY_MB = 512

interface Usage {
  vcpus: number
  memory_mb: number
  local_gb: number
}

export interface NodeUsage {
  cn: ComputeNode
  key: string
  rp: ResourceProvider | undefined
  memInv: Inventory | undefined
  diskInv: Inventory | undefined
  vcpuInv: Inventory | undefined
  reservedMem: number
  reservedCpus: number
  /** Live instances on the node that hold resources. */
  resident: Instance[]
  /** Migrations in progress through the node, with the flavor counted for each. */
  migrations: Array<{m: Migration; inst: Instance; which: 'old' | 'new'}>
  expected: UsageColumns
  recorded: {[K in keyof UsageColumns]: number | null}
  /** The columns that differ beyond rounding. */
  drift: Record<string, {recorded: number | null; expected: number; diff: number | null}>
}

interface UsageColumns {
  vcpus_used: number
  memory_mb_used: number
  local_gb_used: number
  free_ram_mb: number
  free_disk_gb: number
  running_vms: number
}

/** Every non-ironic live node whose instances could all be read, in liveComputeNodes order. */
export function nodeUsages(ctx: AuditContext): NodeUsage[] {
  return ctx.once(nodeUsages, () => {
    const usageOf = flavorUsages(ctx)
    const out: NodeUsage[] = []
    for (const cn of ctx.model.liveComputeNodes) {
      if (isIronicNode(cn)) continue // the ironic driver reports a node as all-used or all-free
      const u = nodeUsage(ctx, cn, usageOf)
      if (u) out.push(u)
    }
    return out
  })
}

interface FlavorUsages {
  current(inst: Instance): Usage | undefined
  /** current(inst) from its blob and boot-from-volume as ctx.residentsOf already read them. */
  currentFrom(inst: Instance, parsed: Parsed<InstanceFlavors | null>, bfv: boolean): Usage | undefined
  of(inst: Instance, which: 'cur' | 'old' | 'new'): Usage | undefined
}

function flavorUsages(ctx: AuditContext): FlavorUsages {
  const of = (inst: Instance, which: 'cur' | 'old' | 'new', parsed = ctx.instanceFlavors(inst)): Usage | undefined => {
    let f: Pick<FlavorObject, 'vcpus' | 'memory_mb' | 'root_gb' | 'ephemeral_gb' | 'swap'> | null = null
    if (parsed.ok && parsed.value) f = parsed.value[which] ?? parsed.value.cur
    if (!f) {
      if (!parsed.ok || inst.vcpus === null || inst.memory_mb === null) return undefined
      const row = inst.instance_type_id === null ? undefined : ctx.model.flavorsById.get(inst.instance_type_id)
      f = {vcpus: inst.vcpus, memory_mb: inst.memory_mb, root_gb: inst.root_gb ?? 0, ephemeral_gb: inst.ephemeral_gb ?? 0, swap: row?.swap ?? 0}
    }
    return {vcpus: f.vcpus, memory_mb: f.memory_mb, local_gb: (bootsFromVolume(inst) ? 0 : f.root_gb) + f.ephemeral_gb + f.swap / 1024}
  }
  // Usage from instance_extra.flavor depends on the blob and boot-from-volume only: computed once per pair.
  const blobUsage = new TextMemo<Array<Usage | undefined | null>>()
  const newSlots = (): Array<Usage | undefined | null> => []
  const current = (inst: Instance): Usage | undefined => {
    const text = inst.extra?.flavor
    if (!text) return of(inst, 'cur')
    const slots = blobUsage.get(text, newSlots)
    const bfv = bootsFromVolume(inst) ? 1 : 0
    let u = slots[bfv]
    if (u === undefined) {
      const parsed = ctx.instanceFlavors(inst)
      // Without a current flavor in the blob the instance row decides: not shareable.
      if (!parsed.ok || !parsed.value?.cur) return of(inst, 'cur')
      slots[bfv] = u = of(inst, 'cur') ?? null
    }
    return u ?? undefined
  }
  // The same answers keyed by the parsed blob (one object per distinct text), not its text: reading
  // 300k blob texts' headers is a cache miss each.
  const byParsed = new Map<Parsed<InstanceFlavors | null>, Array<Usage | null>>()
  const currentFrom = (inst: Instance, parsed: Parsed<InstanceFlavors | null>, bfv: boolean): Usage | undefined => {
    // No blob, or no current flavor in it: the instance row decides, not shareable.
    if (!parsed.ok || !parsed.value?.cur) return of(inst, 'cur', parsed)
    let slots = byParsed.get(parsed)
    if (!slots) byParsed.set(parsed, (slots = []))
    const k = bfv ? 1 : 0
    let u = slots[k]
    if (u === undefined) slots[k] = u = of(inst, 'cur', parsed) ?? null
    return u ?? undefined
  }
  return {current, currentFrom, of}
}

/** Migrations in progress through the node whose other flavor the tracker also holds here. */
function countedMigrations(ctx: AuditContext, cn: ComputeNode, key: string, resident: Instance[]): NodeUsage['migrations'] {
  const migrations: NodeUsage['migrations'] = []
  const moving = ctx.inProgressByNode.get(key)
  const residentUuids = moving ? new Set(resident.map((i) => i.uuid)) : undefined
  for (const m of moving ?? []) {
    // The tracker reads the migrations of its own cell (get_in_progress_by_host_and_node): a
    // cross-cell move's row in the other cell is not its.
    if (m.cell_uuid !== cn.cell_uuid) continue
    const inst = m.instance_uuid ? ctx.liveRows(m.instance_uuid)?.[0] : undefined
    if (!inst) continue
    const incoming = ctx.movesTo(m, cn)
    const outbound = ctx.movesFrom(m, cn)
    if (incoming && outbound) {
      // A resize on its own node: nova's resource tracker counts the instance (as resident) and also
      // holds the other flavor of the migration, for a revert (or the pending new one before
      // finish_resize switched the instance's flavor).
      if (!residentUuids?.has(inst.uuid)) continue
      migrations.push({m, inst, which: inst.instance_type_id === m.old_instance_type_id ? 'new' : 'old'})
      continue
    }
    if (residentUuids?.has(inst.uuid)) continue
    migrations.push({m, inst, which: incoming ? 'new' : 'old'})
  }
  return migrations
}

function nodeUsage(ctx: AuditContext, cn: ComputeNode, usageOf: FlavorUsages): NodeUsage | undefined {
  const {model} = ctx
  const id = (name: string) => model.rc.id(name) as number
  const key = nodeKey(cn.host, cn.hypervisor_hostname)
  // The hidden copy of a cross-cell move is counted on its node, as the resource tracker does.
  const residents = ctx.residentsOf(cn)
  const resident = residents.list
  const migrations = countedMigrations(ctx, cn, key, resident)
  const rp = ctx.providerOf(cn)
  const memInv = rp ? model.inventory(rp.id, id('MEMORY_MB')) : undefined
  const diskInv = rp ? model.inventory(rp.id, id('DISK_GB')) : undefined
  const vcpuInv = rp ? model.inventory(rp.id, id('VCPU')) : undefined
  const reservedMem = memInv?.reserved ?? DEFAULT_RESERVED_HOST_MEMORY_MB
  const reservedCpus = vcpuInv?.reserved ?? 0

  const sum: Usage = {vcpus: reservedCpus, memory_mb: reservedMem, local_gb: 0}
  const add = (u: Usage | undefined): boolean => {
    if (!u) return false
    sum.vcpus += u.vcpus
    sum.memory_mb += u.memory_mb
    sum.local_gb += u.local_gb
    return true
  }
  // One unreadable flavor makes the node undecidable (snapshot.unreadable-blob says why).
  for (let k = 0; k < resident.length; k++) if (!add(usageOf.currentFrom(resident[k], residents.flavors[k], residents.bootsFromVolume[k]))) return undefined
  for (const x of migrations) if (!add(usageOf.of(x.inst, x.which))) return undefined

  const expected = columnsOf(cn, sum, resident.length)
  const recorded = {
    vcpus_used: cn.vcpus_used,
    memory_mb_used: cn.memory_mb_used,
    local_gb_used: cn.local_gb_used,
    free_ram_mb: cn.free_ram_mb,
    free_disk_gb: cn.free_disk_gb,
    running_vms: cn.running_vms,
  }
  let drift = driftOf(recorded, expected)
  // A build's claim under way: instance_claim sets host and node, then writes the node row under the
  // tracker's lock. A row that matches without the building instances is that moment, not drift.
  const building = Object.keys(drift).length > 0 ? resident.filter((i) => i.vm_state === 'building') : []
  if (building.length > 0) {
    const without = {...sum}
    for (const inst of building) {
      const u = usageOf.current(inst) as Usage
      without.vcpus -= u.vcpus
      without.memory_mb -= u.memory_mb
      without.local_gb -= u.local_gb
    }
    if (Object.keys(driftOf(recorded, columnsOf(cn, without, resident.length - building.length))).length === 0) drift = {}
  }
  return {cn, key, rp, memInv, diskInv, vcpuInv, reservedMem, reservedCpus, resident, migrations, expected, recorded, drift}
}

function columnsOf(cn: ComputeNode, sum: Usage, running: number): UsageColumns {
  return {
    vcpus_used: sum.vcpus,
    memory_mb_used: sum.memory_mb,
    local_gb_used: Math.floor(sum.local_gb),
    free_ram_mb: cn.memory_mb - sum.memory_mb,
    free_disk_gb: Math.floor(cn.local_gb - sum.local_gb),
    running_vms: running,
  }
}

function driftOf(recorded: NodeUsage['recorded'], expected: UsageColumns): NodeUsage['drift'] {
  const drift: NodeUsage['drift'] = {}
  for (const k of Object.keys(expected) as Array<keyof UsageColumns>) {
    const r = recorded[k]
    if (r === null) continue
    // local_gb_used holds swap/1024 truncated by the column; allow that rounding.
    const tol = k === 'local_gb_used' || k === 'free_disk_gb' ? 1 : 0
    if (Math.abs(r - expected[k]) > tol) drift[k] = {recorded: r, expected: expected[k], diff: r - expected[k]}
  }
  return drift
}

export function usageSubject(ctx: AuditContext, u: NodeUsage) {
  return {...ctx.nodeSubject(u.cn), ...(u.rp ? {provider_uuid: u.rp.uuid} : {})}
}

/** The evidence both usage codes start with. Built only for a node with a finding: most nodes have none. */
export function usageEvidence(ctx: AuditContext, u: NodeUsage): NodeDriftEvidence {
  const {model} = ctx
  const {cn, rp} = u
  const id = (name: string) => model.rc.id(name) as number
  const placement = rp
    ? {
        provider: {id: rp.id, uuid: rp.uuid, generation: rp.generation},
        VCPU: model.usage(rp.id, id('VCPU')),
        PCPU: model.usage(rp.id, id('PCPU')),
        MEMORY_MB: model.usage(rp.id, id('MEMORY_MB')),
        DISK_GB: model.usage(rp.id, id('DISK_GB')),
      }
    : null
  return {
    compute_node: {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid, updated_at: cn.updated_at},
    totals: {vcpus: cn.vcpus, memory_mb: cn.memory_mb, local_gb: cn.local_gb},
    recorded: u.recorded,
    expected: {...u.expected},
    placement_usage: placement,
    reserved_host_memory_mb: u.reservedMem,
    reserved_host_memory_source: u.memInv ? 'MEMORY_MB inventory reserved' : 'nova default',
    instances: u.resident.map((i) => i.uuid),
    migrations_in_progress: u.migrations.map((x) => ({uuid: x.m.uuid, instance_uuid: x.inst.uuid, status: x.m.status, counted_flavor: x.which})),
  }
}
