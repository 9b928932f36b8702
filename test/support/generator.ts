/**
 * generateCloud: a seeded, consistent cloud of any size (10k hosts, 300k instances, ~1M allocations
 * in seconds) built with CloudBuilder, plus planted faults. Each fault switch plants one precise
 * inconsistency and records it in `planted` as {code, subject}; where nova itself would make a
 * second finding inevitable the entry says so in `alsoExpected`.
 *
 * Clean clouds keep every compute node within its physical size (vcpus_used <= vcpus, memory and
 * disk used <= total) so that no usage.negative-free appears unless planted, and faults that need a
 * quiet host get a "spare" host: not in any aggregate, no instances.
 */
import type {FindingSubject} from '../../src/lib/domain/finding.js'
import {CELL0_UUID, type Flavor, type Instance, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {CONSUMER_TYPE_MIGRATION, CloudBuilder, type HostRec, type InstanceRec, Rng} from './builders.js'
import type {HostNumaCellSpec} from './builders/blobs.js'
import {realShapes} from './builders/real-shapes.js'

export const FAULT_CODES = [
  'allocation.consumer-deleted',
  'allocation.consumer-unknown',
  'allocation.migration-finished',
  'allocation.evacuation-leftover',
  'allocation.wrong-provider',
  'allocation.missing',
  'allocation.amount-mismatch',
  'allocation.consumer-incomplete',
  'provider.stale',
  'provider.uuid-mismatch',
  'provider.missing',
  'provider.duplicate-name',
  'provider.over-capacity',
  'provider.inventory-drift',
  'cell.instance-unmapped',
  'cell.instance-mapped-wrong-cell',
  'cell.instance-duplicate',
  'cell.host-unmapped',
  'cell.host-mapping-stale',
  'pinning.leaked',
  'pinning.unaccounted',
  'pinning.overlap',
  'pinning.outside-dedicated-set',
  'pinning.placement-drift',
  'usage.node-drift',
  'usage.negative-free',
  'aggregate.missing-in-placement',
  'aggregate.extra-in-placement',
] as const

export type FaultCode = (typeof FAULT_CODES)[number]

export interface PlantedFault {
  code: FaultCode
  subject: FindingSubject
  /** Other finding codes nova's own behaviour makes inevitable with this fault. */
  alsoExpected?: string[]
  description: string
}

export interface GenerateOptions {
  seed?: number
  /** Number of cells besides cell0. Default 1. */
  cells?: number
  /** Total compute hosts (spread over the cells), or per cell. Default 20 per cell. */
  hosts?: number
  hostsPerCell?: number
  /** Instances to boot. Default 10 per host. */
  instances?: number
  /** Alternative to `instances`: roughly this many allocation rows (about 3 per instance). */
  allocations?: number
  /** Share of hosts with a cpu_dedicated_set. Default 0.1. */
  pinnedHostFraction?: number
  bootFromVolumeFraction?: number
  /** Live migrations in progress (consistent). Default 0. */
  migrationsInProgress?: number
  /** Confirmed cold migrations in the history (consistent). Default 0. */
  completedMigrations?: number
  /** Write nova_api.request_specs (large). Default false. */
  requestSpecs?: boolean
  now?: string
  /**
   * 'real': blobs and trait sets in the shapes real nova wrote (test/fixtures/real-shapes, see
   * builders/real-shapes.ts): hosts of two sockets with hyperthread siblings and 4 KiB / 2 MiB /
   * 1 GiB page pools, every flavor with a NUMA topology (shared ones hw:numa_nodes=1), request specs
   * (default on), ~73 traits per provider, and instance_extra's vcpu_model and keypairs (in
   * `instanceExtra`: columns the snapshot does not carry). Default 'builder': the builders' own.
   */
  shapes?: 'real' | 'builder'
  /** Instances booted and then deleted (soft-deleted rows, allocations gone). Default 0. */
  deletedInstances?: number
  /** How many of each fault to plant (true = 1). */
  faults?: Partial<Record<FaultCode, number | boolean>>
}

export interface GeneratedCloud {
  snapshot: Snapshot
  planted: PlantedFault[]
  /** instance_extra columns beyond the snapshot's (shapes 'real'): written by the bench's seeding. */
  instanceExtra?: {columns: string[]; values: (row: Instance) => Array<string | null>}
}

/** Faults that need an empty host outside every aggregate. */
const SPARE_FAULTS: FaultCode[] = ['provider.stale', 'provider.uuid-mismatch', 'provider.missing', 'cell.host-mapping-stale', 'usage.negative-free']
const PINNED_FAULTS: FaultCode[] = ['pinning.leaked', 'pinning.unaccounted', 'pinning.overlap', 'pinning.outside-dedicated-set', 'pinning.placement-drift']

const SHARED_FLAVORS = [
  {name: 'm1.tiny', vcpus: 1, memory_mb: 512, root_gb: 1, weight: 2},
  {name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 20, weight: 4},
  {name: 'm1.medium', vcpus: 2, memory_mb: 4096, root_gb: 40, weight: 3},
  {name: 'm1.large', vcpus: 4, memory_mb: 8192, root_gb: 80, weight: 1},
  {name: 'm1.swap', vcpus: 2, memory_mb: 4096, root_gb: 20, swap: 1536, ephemeral_gb: 10, weight: 1},
]
const PINNED_FLAVORS = [
  {name: 'm1.pinned', vcpus: 2, memory_mb: 4096, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}, weight: 3},
  {
    name: 'm1.pinned-iso',
    vcpus: 4,
    memory_mb: 8192,
    root_gb: 40,
    extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate'},
    weight: 1,
  },
  {name: 'm1.mixed', vcpus: 4, memory_mb: 8192, root_gb: 40, extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}, weight: 1},
]
const EXTRA_FLAVORS = [{name: 'r1.large', vcpus: 4, memory_mb: 32768, root_gb: 40}]
export const GENERATOR_DOMAIN = 'cloud.example.com'

function weighted<T extends {weight: number}>(items: T[]): T[] {
  const out: T[] = []
  for (const it of items) for (let i = 0; i < it.weight; i++) out.push(it)
  return out
}

const roundUp = (n: number, step: number): number => Math.ceil(n / step) * step

/**
 * A production host as nova's libvirt driver reports it (the recorded shape): one NUMA cell per
 * socket, hyperthread siblings as consecutive pairs, the first `sharedPerCell` CPUs of each socket in
 * cpu_shared_set and the rest dedicated (when the host has a dedicated set), each cell's memory in
 * 4 KiB pages but 1/16 of it in 2 MiB and 1/16 in 1 GiB pages.
 */
function realHostNuma(vcpus: number, memoryMb: number, sharedPerCell: number): {cells: HostNumaCellSpec[]} {
  const per = vcpus / 2
  const mem = Math.floor(memoryMb / 2)
  const cells: HostNumaCellSpec[] = []
  for (let s = 0; s < 2; s++) {
    const cpus = Array.from({length: per}, (_, i) => s * per + i)
    const siblings: number[][] = []
    for (let i = 0; i + 1 < cpus.length; i += 2) siblings.push([cpus[i], cpus[i + 1]])
    const giant = Math.floor(mem / 16 / 1024)
    const huge = Math.floor(mem / 16 / 2)
    cells.push({
      cpuset: cpus.slice(0, sharedPerCell),
      pcpuset: cpus.slice(sharedPerCell),
      memory: mem,
      siblings,
      mempages: [
        {size_kb: 4, total: (mem - giant * 1024 - huge * 2) * 256, used: 0, reserved: 0},
        {size_kb: 2048, total: huge, used: 0, reserved: 0},
        {size_kb: 1048576, total: giant, used: 0, reserved: 0},
      ],
    })
  }
  return {cells}
}

/** Does the tracker stay within the host's physical size after adding this flavor? */
export function fitsPhysically(h: HostRec, f: Flavor, bootFromVolume: boolean): boolean {
  const cn = h.cn
  const disk = h.diskUsed + (bootFromVolume ? 0 : (f.root_gb ?? 0)) + (f.ephemeral_gb ?? 0) + (h.swapMbUsed + f.swap) / 1024
  if (!(h.vcpusUsed + f.vcpus <= cn.vcpus && h.reservedMemoryMb + h.memoryUsed + f.memory_mb <= cn.memory_mb && disk <= cn.local_gb)) return false
  // A guest on one NUMA node needs one cell with its memory free and as many CPUs as it has vCPUs.
  if (f.extra_specs['hw:numa_nodes'] !== undefined && h.numa) return h.numa.some((c) => c.memory - c.memoryUsage >= f.memory_mb && c.cpuset.length >= f.vcpus)
  return true
}

export function generateCloud(opts: GenerateOptions = {}): GeneratedCloud {
  const seed = opts.seed ?? 1
  const rng = new Rng(seed ^ 0x5eed)
  const real = opts.shapes === 'real'
  const shapes = real ? realShapes() : undefined
  const b = new CloudBuilder({seed, now: opts.now, requestSpecs: opts.requestSpecs ?? real, shapes})
  const nCells = Math.max(1, opts.cells ?? 1)
  const totalHosts = opts.hosts ?? (opts.hostsPerCell ?? 20) * nCells
  const nInstances = opts.instances ?? (opts.allocations !== undefined ? Math.round(opts.allocations / 3) : totalHosts * 10)
  const faults = new Map<FaultCode, number>()
  for (const [k, v] of Object.entries(opts.faults ?? {})) {
    const n = v === true ? 1 : v === false || v === undefined ? 0 : v
    if (!(FAULT_CODES as readonly string[]).includes(k)) throw new Error(`unknown fault ${k}`)
    if (n > 0) faults.set(k as FaultCode, n)
  }
  const count = (c: FaultCode): number => faults.get(c) ?? 0
  const spareCount = SPARE_FAULTS.reduce((n, c) => n + count(c), 0)
  const pinnedFaultHosts = PINNED_FAULTS.reduce((n, c) => n + count(c), 0)
  const nPinned = Math.min(totalHosts, Math.max(Math.round(totalHosts * (opts.pinnedHostFraction ?? 0.1)), pinnedFaultHosts > 0 ? pinnedFaultHosts + 1 : 0))
  const nShared = totalHosts - nPinned
  if (nShared < 2) throw new Error('generateCloud needs at least 2 shared hosts')

  // ---- flavors
  const flavors = new Map<string, Flavor>()
  for (const f of [...SHARED_FLAVORS, ...PINNED_FLAVORS, ...EXTRA_FLAVORS]) {
    const {weight: _w, ...spec} = f as typeof f & {weight?: number}
    // Production flavors carry a NUMA topology: a shared guest on one NUMA node (r1.large, the
    // over-commit fault's flavor, stays without: the tracker then overfills the host, not a cell).
    const numa = real && SHARED_FLAVORS.includes(f as (typeof SHARED_FLAVORS)[number]) ? {extra_specs: {'hw:numa_nodes': '1'}} : {}
    flavors.set(f.name, b.addFlavor({...spec, ...numa, flavorid: f.name}))
  }
  const sharedPick = weighted(SHARED_FLAVORS).map((f) => flavors.get(f.name) as Flavor)
  const pinnedPick = weighted(PINNED_FLAVORS).map((f) => flavors.get(f.name) as Flavor)

  // ---- cells, aggregates
  const cellNames: string[] = []
  for (let c = 1; c <= nCells; c++) {
    b.addCell(`cell${c}`)
    cellNames.push(`cell${c}`)
  }
  b.addAggregate({name: 'az1', metadata: {availability_zone: 'az1'}})
  b.addAggregate({name: 'az2', metadata: {availability_zone: 'az2'}})
  b.addAggregate({name: 'ssd', metadata: {disk: 'ssd'}})

  // ---- hosts, sized for their share of instances (headroom 40%)
  const pinnedShare = nPinned > 0 ? Math.round(nInstances * Math.min(0.5, (nPinned / totalHosts) * 0.6)) : 0
  const sharedShare = nInstances - pinnedShare
  const sharedRegular = Math.max(1, nShared - spareCount)
  const perShared = sharedShare / sharedRegular
  // Real shapes: two sockets of hyperthreaded cores, at least 2 x 16 x 2 CPUs.
  const sharedVcpus = real ? Math.max(64, roundUp(perShared * 1.6 * 1.4 + 2, 8)) : Math.max(16, roundUp(perShared * 1.6 * 1.4 + 2, 8))
  const sharedMem = Math.max(32768, roundUp(perShared * 3000 * 1.4 + 512, 4096))
  const sharedDisk = Math.max(200, roundUp(perShared * 32 * 1.4, 100))
  const perPinned = nPinned > 0 ? pinnedShare / nPinned : 0
  const pinnedDed = Math.max(8, roundUp(perPinned * 3.6 * 1.4 + 6, 8))
  const pinnedMem = Math.max(32768, roundUp(perPinned * 6200 * 1.4 + 512, 4096))
  const pinnedDisk = Math.max(200, roundUp(perPinned * 36 * 1.4, 100))

  const shared: HostRec[] = []
  const spares: HostRec[] = []
  const pinned: HostRec[] = []
  for (let i = 0; i < totalHosts; i++) {
    const cell = cellNames[i % nCells]
    const isPinned = i % totalHosts >= nShared
    const n = String(i + 1).padStart(4, '0')
    if (isPinned) {
      const half = pinnedDed
      const h = b.addHost(cell, {
        host: `${cell}-pin${n}`,
        vcpus: half * 2,
        memory_mb: pinnedMem,
        local_gb: pinnedDisk,
        cpu_dedicated_set: `${Math.ceil(half / 2)}-${half - 1},${half + Math.ceil(half / 2)}-${2 * half - 1}`,
        ...(real ? {numa: realHostNuma(half * 2, pinnedMem, Math.ceil(half / 2))} : {}),
        cpu_allocation_ratio: 4,
        ram_allocation_ratio: 1,
        az: i % 2 === 0 ? 'az1' : 'az2',
      })
      pinned.push(h)
    } else {
      const spare = i >= nShared - spareCount
      const h = b.addHost(cell, {
        host: `${cell}-cmp${n}`,
        vcpus: sharedVcpus,
        memory_mb: sharedMem,
        ...(real ? {numa: realHostNuma(sharedVcpus, sharedMem, sharedVcpus / 2)} : {}),
        local_gb: sharedDisk,
        cpu_allocation_ratio: 4,
        ram_allocation_ratio: 1.5,
        ...(spare ? {} : {az: i % 2 === 0 ? 'az1' : 'az2'}),
      })
      if (!spare && i % 5 === 0) b.addHostToAggregate('ssd', h.host)
      ;(spare ? spares : shared).push(h)
    }
  }

  // ---- instances: round robin with a physical fit check
  const projects = Array.from({length: Math.max(3, Math.min(500, Math.ceil(nInstances / 50)))}, () => rng.hex(32))
  const users = projects.map(() => rng.hex(32))
  const bfvFraction = opts.bootFromVolumeFraction ?? 0.2
  const sharedInsts: InstanceRec[] = []
  const pinnedInsts: InstanceRec[] = []
  let cursorS = 0
  let cursorP = 0
  const place = (hosts: HostRec[], pickFrom: Flavor[], isPinned: boolean): InstanceRec => {
    const f = rng.pick(pickFrom)
    const bfv = !isPinned && rng.chance(bfvFraction)
    const p = rng.int(0, projects.length - 1)
    for (let tries = 0; tries < hosts.length; tries++) {
      const h = hosts[(isPinned ? cursorP++ : cursorS++) % hosts.length]
      if (!fitsPhysically(h, f, bfv)) continue
      if (isPinned) {
        const need = b.resourcesOf(f, false).resources.PCPU ?? 0
        const free = (h.numa ?? []).some((c) => c.pcpuset.length - c.pinned.size >= need && (!real || c.memory - c.memoryUsage >= f.memory_mb))
        if (!free) continue
      }
      const r = rng.next()
      return b.addInstance(h.node, f.name, {
        project: projects[p],
        user: users[p],
        boot_from_volume: bfv,
        vm_state: r < 0.9 ? 'active' : r < 0.97 ? 'stopped' : 'paused',
        power_state: r < 0.9 ? 1 : r < 0.97 ? 4 : 3,
      })
    }
    throw new Error(`generateCloud: no ${isPinned ? 'pinned' : 'shared'} host has room for ${f.name}`)
  }
  for (let i = 0; i < sharedShare; i++) sharedInsts.push(place(shared, sharedPick, false))
  for (let i = 0; i < pinnedShare; i++) pinnedInsts.push(place(pinned, pinnedPick, true))
  // Deleted servers: booted like the others, then deleted as the API does (rows soft-deleted).
  for (let i = 0; i < (opts.deletedInstances ?? 0); i++) {
    const isPinned = pinned.length > 0 && i % 10 === 9
    const r = isPinned ? place(pinned, pinnedPick, true) : place(shared, sharedPick, false)
    // Within the last 25 days: a cloud that archives deleted rows monthly keeps no older ones.
    b.deleteInstance(r.row.uuid, {at: b.ago(86400 * (1 + (i % 25)))})
  }

  // ---- consistent moves
  const usedHosts = new Set<HostRec>()
  const usedInsts = new Set<string>()
  const pickInstance = (list: InstanceRec[], ok: (r: InstanceRec) => boolean = () => true): InstanceRec => {
    const accept = (r: InstanceRec) => !usedInsts.has(r.row.uuid) && r.hostRec !== null && !usedHosts.has(r.hostRec) && !r.bootFromVolume && ok(r)
    for (let t = 0; t < 64; t++) {
      const r = list[Math.floor(rng.next() * list.length)]
      if (r && accept(r)) return take(r)
    }
    const r = list.find(accept)
    if (!r) throw new Error('generateCloud: no instance left for a fault (grow the cloud)')
    return take(r)
  }
  const take = (r: InstanceRec): InstanceRec => {
    usedInsts.add(r.row.uuid)
    usedHosts.add(r.hostRec as HostRec)
    return r
  }
  const pickHost = (list: HostRec[], ok: (h: HostRec) => boolean = () => true): HostRec => {
    const start = Math.floor(rng.next() * list.length)
    for (let t = 0; t < list.length; t++) {
      const h = list[(start + t) % list.length]
      if (!usedHosts.has(h) && ok(h)) {
        usedHosts.add(h)
        return h
      }
    }
    throw new Error('generateCloud: no host left for a fault (grow the cloud)')
  }
  const sameCellDest = (src: HostRec, f: Flavor) => pickHost(shared, (h) => h !== src && h.cell === src.cell && fitsPhysically(h, f, false))

  for (let i = 0; i < (opts.migrationsInProgress ?? 0); i++) {
    const inst = pickInstance(sharedInsts)
    const dest = sameCellDest(inst.hostRec as HostRec, inst.flavor)
    // the destination tracker counts the incoming instance too: keep it physically within size
    b.addMigration(inst.row.uuid, {type: 'live-migration', status: 'running', dest: dest.node})
  }
  for (let i = 0; i < (opts.completedMigrations ?? 0); i++) {
    const inst = sharedInsts[Math.floor(rng.next() * sharedInsts.length)]
    if (usedInsts.has(inst.row.uuid) || (inst.hostRec && usedHosts.has(inst.hostRec))) continue
    const src = inst.hostRec as HostRec
    const dest = shared.find((h) => h !== src && h.cell === src.cell && !usedHosts.has(h) && fitsPhysically(h, inst.flavor, inst.bootFromVolume))
    if (dest) b.addMigration(inst.row.uuid, {type: 'migration', status: 'confirmed', dest: dest.node})
  }

  // ---- faults
  const planted: PlantedFault[] = []
  const subjectOf = (h: HostRec, extra: FindingSubject = {}): FindingSubject => ({
    cell: h.cell.name ?? h.cell.uuid,
    cell_uuid: h.cell.uuid,
    host: h.host,
    node: h.node,
    provider_uuid: h.rp.row.uuid,
    ...extra,
  })
  const instSubject = (r: InstanceRec, extra: FindingSubject = {}) =>
    subjectOf(r.hostRec as HostRec, {instance_uuid: r.row.uuid, consumer_uuid: r.row.uuid, ...extra})
  const resOf = (r: InstanceRec) => b.resourcesOf(r.flavor, r.bootFromVolume).resources
  const plant = (code: FaultCode, subject: FindingSubject, description: string, alsoExpected?: string[]) =>
    planted.push({code, subject, description, ...(alsoExpected ? {alsoExpected} : {})})
  const spareQueue = [...spares]
  const takeSpare = (): HostRec => {
    const h = spareQueue.shift()
    if (!h) throw new Error('generateCloud: no spare host left')
    usedHosts.add(h)
    return h
  }
  const postBuild: Array<(s: Snapshot) => void> = []

  const repeat = (code: FaultCode, fn: () => void) => {
    for (let i = 0; i < count(code); i++) fn()
  }

  repeat('allocation.consumer-deleted', () => {
    const r = pickInstance(sharedInsts)
    const subject = instSubject(r)
    b.deleteInstance(r.row.uuid, {keepAllocations: true})
    plant(
      'allocation.consumer-deleted',
      subject,
      `instance ${r.row.uuid} soft-deleted in ${r.hostRec?.cell.name}; its allocations on ${r.hostRec?.node} stayed (seed 004)`,
    )
  })
  repeat('allocation.consumer-unknown', () => {
    const h = pickHost(shared)
    const consumer = b.newUuid()
    b.addAllocations(consumer, h.node, {VCPU: 1, MEMORY_MB: 512, DISK_GB: 1}, {project: rng.hex(32), user: rng.hex(32)})
    plant(
      'allocation.consumer-unknown',
      subjectOf(h, {consumer_uuid: consumer}),
      `consumer ${consumer} is no instance and no migration, holds VCPU/MEMORY_MB/DISK_GB on ${h.node}`,
    )
  })
  repeat('allocation.migration-finished', () => {
    const r = pickInstance(sharedInsts)
    const src = r.hostRec as HostRec
    const dest = sameCellDest(src, r.flavor)
    const m = b.addMigration(r.row.uuid, {type: 'migration', status: 'confirmed', dest: dest.node})
    const mig = m.row.uuid as string
    b.addAllocations(mig, src.node, resOf(r), {project: r.row.project_id ?? undefined, user: r.row.user_id ?? undefined, type: CONSUMER_TYPE_MIGRATION})
    plant(
      'allocation.migration-finished',
      subjectOf(src, {consumer_uuid: mig, migration_uuid: mig, instance_uuid: r.row.uuid}),
      `migration ${mig} of ${r.row.uuid} is confirmed but still holds the source allocation on ${src.node}`,
    )
  })
  repeat('allocation.evacuation-leftover', () => {
    const r = pickInstance(sharedInsts)
    const src = r.hostRec as HostRec
    const dest = sameCellDest(src, r.flavor)
    const m = b.addMigration(r.row.uuid, {type: 'evacuation', status: 'done', dest: dest.node})
    b.addAllocations(r.row.uuid, src.node, resOf(r))
    plant(
      'allocation.evacuation-leftover',
      subjectOf(src, {consumer_uuid: r.row.uuid, instance_uuid: r.row.uuid, migration_uuid: m.row.uuid as string}),
      `instance ${r.row.uuid} evacuated from ${src.node} to ${dest.node} (migration done); the instance consumer still holds the source allocation`,
    )
  })
  repeat('allocation.wrong-provider', () => {
    const r = pickInstance(sharedInsts)
    const to = pickHost(shared, (h) => h !== r.hostRec && h.cell === r.hostRec?.cell)
    const project = r.row.project_id as string
    const user = r.row.user_id as string
    b.putAllocations(r.row.uuid, project, user, 1, b.resolveOn(to.node, resOf(r)))
    plant(
      'allocation.wrong-provider',
      subjectOf(to, {consumer_uuid: r.row.uuid, instance_uuid: r.row.uuid}),
      `instance ${r.row.uuid} runs on ${r.hostRec?.node} but its allocations are on ${to.node}, no migration`,
    )
  })
  repeat('allocation.missing', () => {
    const r = pickInstance(sharedInsts)
    b.removeAllocations(r.row.uuid)
    plant('allocation.missing', instSubject(r), `instance ${r.row.uuid} on ${r.hostRec?.node} holds no allocation (consumer gone)`)
  })
  repeat('allocation.amount-mismatch', () => {
    const r = pickInstance(sharedInsts)
    const list = (b.allocations.get(r.row.uuid) ?? []).map((a) => ({...a}))
    const mem = list.find((a) => a.rc === 1)
    if (!mem) throw new Error('no MEMORY_MB allocation')
    mem.used = Math.max(1, Math.floor(mem.used / 2))
    b.putAllocations(r.row.uuid, r.row.project_id as string, r.row.user_id as string, 1, list)
    plant('allocation.amount-mismatch', instSubject(r), `instance ${r.row.uuid} holds MEMORY_MB ${mem.used} instead of ${r.flavor.memory_mb}`)
  })
  repeat('allocation.consumer-incomplete', () => {
    const r = pickInstance(sharedInsts)
    const c = b.consumers.get(r.row.uuid)
    if (!c) throw new Error('no consumer')
    // placement's [placement] incomplete_consumer_project_id / _user_id, for consumers written before microversion 1.8
    c.project_id = b.placementProjectId('00000000-0000-0000-0000-000000000000')
    c.user_id = b.placementUserId('00000000-0000-0000-0000-000000000000')
    plant('allocation.consumer-incomplete', instSubject(r), `consumer ${r.row.uuid} has the incomplete-consumer project and user`)
  })

  repeat('provider.stale', () => {
    const h = takeSpare()
    const f = flavors.get('m1.small') as Flavor
    const r = b.addInstance(h.node, f.name, {project: projects[0], user: users[0]})
    usedInsts.add(r.row.uuid)
    const dest = sameCellDest(h, f)
    const m = b.addMigration(r.row.uuid, {type: 'evacuation', status: 'done', dest: dest.node})
    b.addAllocations(r.row.uuid, h.node, resOf(r))
    b.deleteComputeService(h.host, {keepProvider: true})
    plant(
      'provider.stale',
      subjectOf(h),
      `host ${h.host} died, its instance ${r.row.uuid} was evacuated to ${dest.node} (migration ${m.row.uuid}), then \`compute service delete\`: service and compute node soft-deleted, provider ${h.rp.row.uuid} kept with the evacuated instance's source allocation (seed 004)`,
      ['allocation.evacuation-leftover'],
    )
  })
  repeat('provider.uuid-mismatch', () => {
    const h = takeSpare()
    const oldUuid = h.rp.row.uuid
    const {current} = b.recreateComputeNode(h.node)
    plant(
      'provider.uuid-mismatch',
      subjectOf(h, {provider_uuid: oldUuid}),
      `compute node ${h.node} recreated as ${current.uuid} (FQDN hostname change, seed 004); provider ${oldUuid} still carries the name, so nova-compute cannot create its own`,
    )
  })
  repeat('provider.missing', () => {
    const h = takeSpare()
    b.removeProvider(h.rp.row.uuid)
    const {provider_uuid: _p, ...subject} = subjectOf(h)
    plant('provider.missing', subject, `compute node ${h.node} (${h.cn.uuid}) has no resource provider`)
  })
  repeat('provider.duplicate-name', () => {
    const h = pickHost(shared)
    const rp = b.addRootProvider({
      name: `${h.node}.${GENERATOR_DOMAIN}`,
      inventories: {
        VCPU: {total: h.cn.vcpus, allocation_ratio: 4},
        MEMORY_MB: {total: h.cn.memory_mb, reserved: 512, allocation_ratio: 1.5},
        DISK_GB: {total: h.cn.local_gb},
      },
    })
    plant(
      'provider.duplicate-name',
      subjectOf(h, {provider_uuid: rp.row.uuid}),
      `provider ${rp.row.uuid} named ${rp.row.name} (the host's FQDN before a rename) stands for ${h.node} too, with no compute node`,
    )
  })
  repeat('provider.over-capacity', () => {
    const h = pickHost(shared, (x) => (x.rp.used.get(0) ?? 0) >= 2)
    const used = h.rp.used.get(0) ?? 0
    const total = h.rp.inventories.get(0)?.total ?? 0
    let ratio = 0.5
    while (total * ratio >= used) ratio /= 2
    b.updateInventory(h.rp.row.uuid, 'VCPU', {allocation_ratio: ratio})
    plant('provider.over-capacity', subjectOf(h), `VCPU allocation_ratio set to ${ratio} in placement on ${h.node}: ${used} used > capacity ${total * ratio}`)
  })
  repeat('provider.inventory-drift', () => {
    const h = pickHost(shared)
    const inv = h.rp.inventories.get(1)
    if (!inv) throw new Error('no MEMORY_MB inventory')
    b.updateInventory(h.rp.row.uuid, 'MEMORY_MB', {total: inv.total + 65536, max_unit: inv.total + 65536})
    plant(
      'provider.inventory-drift',
      subjectOf(h),
      `MEMORY_MB inventory of ${h.node} is ${inv.total} while compute_nodes.memory_mb is ${h.cn.memory_mb} (a DIMM failed; the inventory update did not reach placement)`,
    )
  })

  repeat('cell.instance-unmapped', () => {
    const r = pickInstance(sharedInsts)
    b.removeInstanceMapping(r.row.uuid)
    plant('cell.instance-unmapped', instSubject(r), `instance ${r.row.uuid} lives in ${r.hostRec?.cell.name} with no instance_mapping`)
  })
  repeat('cell.instance-mapped-wrong-cell', () => {
    const r = pickInstance(sharedInsts)
    const other = b.cells.find((c) => !c.is_cell0 && c !== r.hostRec?.cell) ?? b.cell0
    r.mapping.cell_id = other.id
    plant('cell.instance-mapped-wrong-cell', instSubject(r), `instance ${r.row.uuid} lives in ${r.hostRec?.cell.name} but its mapping points to ${other.name}`)
  })
  repeat('cell.instance-duplicate', () => {
    const r = pickInstance(sharedInsts)
    const copy: Instance = {
      ...r.row,
      cell_uuid: CELL0_UUID,
      id: b.nextInstanceId(),
      host: null,
      node: null,
      vm_state: 'error',
      task_state: null,
      power_state: 0,
      launched_at: null,
      availability_zone: r.row.availability_zone,
      extra: r.row.extra ? {...r.row.extra, numa_topology: null} : null,
    }
    b.pushInstanceRow(copy)
    plant(
      'cell.instance-duplicate',
      instSubject(r, {cell: `${r.hostRec?.cell.name},cell0`}),
      `instance ${r.row.uuid} is live in ${r.hostRec?.cell.name} and (in error, no host) in cell0 (seed 004)`,
    )
  })
  repeat('cell.host-unmapped', () => {
    const h = pickHost(shared)
    b.removeHostMapping(h.host)
    plant(
      'cell.host-unmapped',
      subjectOf(h),
      `host ${h.host} runs nova-compute in ${h.cell.name} but has no host_mapping (compute_nodes.mapped stays 1, so discover_hosts finds nothing: seed 004)`,
    )
  })
  repeat('cell.host-mapping-stale', () => {
    const h = takeSpare()
    b.deleteComputeService(h.host, {keepHostMapping: true})
    const {provider_uuid: _p, node: _n, ...subject} = subjectOf(h)
    plant('cell.host-mapping-stale', subject, `host ${h.host}: service and compute node deleted, provider removed, host_mapping kept`)
  })

  const pinnedWith = (ok: (h: HostRec) => boolean) => pickHost(pinned, ok)
  const pinnedInstOn = (h: HostRec) => pinnedInsts.find((r) => r.hostRec === h && r.pins.size > 0 && !usedInsts.has(r.row.uuid))
  repeat('pinning.leaked', () => {
    const h = pinnedWith((x) => (x.numa ?? []).some((c) => c.pinned.size < c.pcpuset.length))
    const cells = b.numaOf(h.node)
    const leaked: number[] = []
    for (const c of cells) {
      for (const p of c.pcpuset) if (!c.pinned.has(p)) leaked.push(p)
      for (const p of c.pcpuset) c.pinned.add(p)
    }
    plant(
      'pinning.leaked',
      subjectOf(h),
      `pinned_cpus of ${h.node} filled with every dedicated pCPU; pCPUs ${leaked.join(',')} pinned by no instance (seed 004)`,
    )
  })
  repeat('pinning.unaccounted', () => {
    const h = pinnedWith((x) => pinnedInstOn(x) !== undefined)
    const r = pinnedInstOn(h) as InstanceRec
    usedInsts.add(r.row.uuid)
    const cells = b.numaOf(h.node)
    let cellId = 0
    for (const [id, pins] of r.pins) {
      cellId = id
      const c = cells.find((x) => x.id === id)
      for (const p of pins) c?.pinned.delete(p)
    }
    plant(
      'pinning.unaccounted',
      subjectOf(h, {instance_uuid: r.row.uuid, numa_cell: cellId}),
      `pCPUs of instance ${r.row.uuid} missing from pinned_cpus of ${h.node}`,
    )
  })
  repeat('pinning.overlap', () => {
    const pinnedFlavor = flavors.get('m1.pinned') as Flavor
    const h = pinnedWith((x) => {
      const r = pinnedInsts.find((i) => i.hostRec === x && i.flavor === pinnedFlavor && !usedInsts.has(i.row.uuid))
      return r !== undefined && fitsPhysically(x, pinnedFlavor, false) && (x.numa ?? []).reduce((n, c) => n + c.pcpuset.length - c.pinned.size, 0) >= 2
    })
    const victim = pinnedInsts.find((i) => i.hostRec === h && i.flavor === pinnedFlavor && !usedInsts.has(i.row.uuid)) as InstanceRec
    usedInsts.add(victim.row.uuid)
    const [[cellId, pins]] = [...victim.pins]
    const p = rng.int(0, projects.length - 1)
    const r = b.addInstance(h.node, pinnedFlavor.name, {pin: [...pins], force: true, project: projects[p], user: users[p]})
    usedInsts.add(r.row.uuid)
    plant(
      'pinning.overlap',
      subjectOf(h, {instance_uuid: r.row.uuid, numa_cell: cellId}),
      `instance ${r.row.uuid} pins pCPUs ${pins.join(',')} already pinned by ${victim.row.uuid}`,
    )
  })
  repeat('pinning.outside-dedicated-set', () => {
    const pinnedFlavor = flavors.get('m1.pinned') as Flavor
    const h = pinnedWith((x) => fitsPhysically(x, pinnedFlavor, false) && (x.numa ?? []).reduce((n, c) => n + c.pcpuset.length - c.pinned.size, 0) >= 2)
    const cell = (h.numa as NonNullable<HostRec['numa']>)[0]
    const pins = cell.cpuset.slice(0, 2)
    const p = rng.int(0, projects.length - 1)
    const r = b.addInstance(h.node, pinnedFlavor.name, {pin: pins, force: true, project: projects[p], user: users[p]})
    usedInsts.add(r.row.uuid)
    plant(
      'pinning.outside-dedicated-set',
      subjectOf(h, {instance_uuid: r.row.uuid, numa_cell: cell.id}),
      `instance ${r.row.uuid} pinned to shared pCPUs ${pins.join(',')} of ${h.node}`,
    )
  })
  repeat('pinning.placement-drift', () => {
    const h = pinnedWith((x) =>
      pinnedInsts.some((r) => r.hostRec === x && r.res.cpuPolicy === 'dedicated' && !r.res.isolateEmulator && r.res.dedicated.length >= 2),
    )
    const r = pinnedInsts.find(
      (i) => i.hostRec === h && i.res.cpuPolicy === 'dedicated' && !i.res.isolateEmulator && i.res.dedicated.length >= 2,
    ) as InstanceRec
    usedInsts.add(r.row.uuid)
    const cells = (r.numaCells ?? []).map((c) => ({...c, cpu_pinning: new Map(c.cpu_pinning ?? [])}))
    const ic = cells[0]
    const lastVcpu = Math.max(...ic.cpu_pinning.keys())
    const lost = ic.cpu_pinning.get(lastVcpu) as number
    ic.cpu_pinning.delete(lastVcpu)
    b.rewriteInstanceNuma(r.row.uuid, cells)
    const [[cellId]] = [...r.pins]
    b.numaOf(h.node)
      .find((c) => c.id === cellId)
      ?.pinned.delete(lost)
    plant(
      'pinning.placement-drift',
      subjectOf(h, {instance_uuid: r.row.uuid}),
      `instance ${r.row.uuid} holds PCPU ${r.res.resources.PCPU} in placement but pins ${r.res.dedicated.length - 1} pCPUs (cpu_pinning_raw lost vCPU ${lastVcpu}; pinned_cpus agrees with the pins)`,
    )
  })

  repeat('usage.node-drift', () => {
    const h = pickHost(shared)
    postBuild.push(() => {
      h.cn.vcpus_used += 2
    })
    plant('usage.node-drift', subjectOf(h), `compute_nodes.vcpus_used of ${h.node} is 2 above the sum of its instances`)
  })
  repeat('usage.negative-free', () => {
    const h = takeSpare()
    const f = flavors.get('r1.large') as Flavor
    const p = rng.int(0, projects.length - 1)
    while (h.reservedMemoryMb + h.memoryUsed <= h.cn.memory_mb) usedInsts.add(b.addInstance(h.node, f.name, {project: projects[p], user: users[p]}).row.uuid)
    plant(
      'usage.negative-free',
      subjectOf(h),
      `${h.node} runs ${h.memoryUsed} MB of guests on ${h.cn.memory_mb} MB (ram_allocation_ratio 1.5): free_ram_mb negative (seed 000)`,
    )
  })
  repeat('aggregate.missing-in-placement', () => {
    const ssd = b.aggregatesByName.get('ssd')
    const h = pickHost(shared, (x) => ssd?.hosts.includes(x.host) ?? false)
    b.unlinkProviderFromAggregate(h.rp.row.uuid, 'ssd')
    plant(
      'aggregate.missing-in-placement',
      subjectOf(h, {aggregate: 'ssd'}),
      `host ${h.host} is in nova aggregate ssd but its provider lacks the placement aggregate ${ssd?.uuid}`,
    )
  })
  repeat('aggregate.extra-in-placement', () => {
    const ssd = b.aggregatesByName.get('ssd')
    const h = pickHost(shared, (x) => !(ssd?.hosts.includes(x.host) ?? true))
    b.linkProviderToAggregate(h.rp.row.uuid, 'ssd')
    plant(
      'aggregate.extra-in-placement',
      subjectOf(h, {aggregate: 'ssd'}),
      `provider of ${h.host} is in placement aggregate ${ssd?.uuid} (nova aggregate ssd) which does not list the host`,
    )
  })

  const snapshot = b.build({source: `generator seed=${seed}${real ? ' shapes=real' : ''}`})
  for (const fn of postBuild) fn(snapshot)
  if (!shapes) return {snapshot, planted}
  const vcpus = new Map(snapshot.nova_api.flavors.map((f) => [f.id, f.vcpus]))
  return {
    snapshot,
    planted,
    instanceExtra: {
      columns: ['vcpu_model', 'keypairs'],
      values: (row) => [shapes.vcpuModel(vcpus.get(row.instance_type_id ?? -1) ?? row.vcpus ?? 1), row.user_id === null ? null : shapes.keypairs(row.user_id)],
    },
  }
}
