/**
 * NUMA fitting as nova's virt/hardware.py does it (Zed): fitting an instance topology onto a host
 * topology (numa_fit_instance_to_host, with dedicated-CPU pinning and thread policies), and the host
 * usage after a claim (numa_usage_from_instance_numa). The topology a flavor/image asks for
 * (numa_get_constraints) is numa-constraints.ts, re-exported here.
 */
import type {HostNumaCell, HostNumaTopology, MemPages} from '../domain/nova-objects.js'
import {cpuRanges} from '../util/cpu-ranges.js'
import {PyIntSet} from './pyset.js'
import type {EngineRelease} from './config.js'
import {
  type CpuPolicy,
  type InstanceCellRequest,
  type InstanceTopologyRequest,
  MEMPAGES_ANY,
  MEMPAGES_LARGE,
  MEMPAGES_SMALL,
  type ThreadPolicy,
} from './numa-constraints.js'

// The engine and the tests know the NUMA code as one module.
export {
  type CpuPolicy,
  type InstanceCellRequest,
  type InstanceTopologyRequest,
  instanceTopologyFor,
  NumaRequestError,
  parseCpuSpecBounded,
  type ThreadPolicy,
} from './numa-constraints.js'

export interface FittedCell {
  id: number // host cell id
  cpuset: number[]
  pcpuset: number[]
  memory: number
  pagesize: number | null
  cpuPolicy: CpuPolicy | null
  /** vCPU -> host pCPU */
  pinning: Array<[number, number]>
  cpusetReserved: number[]
  /** isolate pins the host CPUs' thread siblings too when the guest is claimed */
  threadPolicy: ThreadPolicy | null
}

// ---------------------------------------------------------------- host cell helpers

export function freePcpus(cell: HostNumaCell): number[] {
  const pinned = new Set(cell.pinned_cpus)
  return cell.pcpuset.filter((c) => !pinned.has(c))
}

function availMemory(cell: HostNumaCell): number {
  return cell.memory - cell.memory_usage
}

function smallestPagesize(cell: HostNumaCell): number {
  return Math.min(...cell.mempages.map((p) => p.size_kb))
}

/** NUMACell.can_fit_pagesize; null when the page size is not on the host (MemoryPageSizeNotSupported). */
function canFitPagesize(cell: HostNumaCell, pagesize: number, memoryKb: number, useFree: boolean): boolean | null {
  for (const p of cell.mempages) {
    if (p.size_kb !== pagesize) continue
    const avail = useFree ? (p.total - p.used - p.reserved) * p.size_kb : p.total * p.size_kb
    return memoryKb <= avail && memoryKb % p.size_kb === 0
  }
  return null
}

function pagesizeFor(cell: HostNumaCell, inst: InstanceCellRequest): number | null | 'unsupported' {
  const sizes = cell.mempages.map((p) => p.size_kb).sort((a, b) => b - a)
  const kb = inst.memory * 1024
  const tryIn = (list: number[]): number | null | 'unsupported' => {
    for (const s of list) {
      const r = canFitPagesize(cell, s, kb, true)
      if (r === null) return 'unsupported'
      if (r) return s
    }
    return null
  }
  if (inst.pagesize === MEMPAGES_SMALL) return tryIn(sizes.slice(-1))
  if (inst.pagesize === MEMPAGES_LARGE) return tryIn(sizes.slice(0, -1))
  if (inst.pagesize === MEMPAGES_ANY) return tryIn(sizes)
  return tryIn([inst.pagesize as number])
}

export interface FitFailure {
  reason: string
}

// Host cells are never modified (a claim makes new ones): their free sibling lists are computed once.
const freeSiblingsCache = new WeakMap<HostNumaCell, number[][]>()

/**
 * NUMACell.free_siblings = [sibling_set & free_pcpus], free_pcpus = pcpuset - pinned_cpus: Python
 * sets, iterated in their hash-table order (see pyset.ts), which decides the CPUs picked.
 */
function freeSiblingsOf(cell: HostNumaCell): number[][] {
  let out = freeSiblingsCache.get(cell)
  if (!out) {
    const freePy = PyIntSet.difference(PyIntSet.novaField(cell.pcpuset), PyIntSet.novaField(cell.pinned_cpus))
    out = cell.siblings.map((s) => PyIntSet.intersection(PyIntSet.novaField(s), freePy).values())
    freeSiblingsCache.set(cell, out)
  }
  return out
}

/**
 * Python's `not pinning`: an empty pinning list counts as no pinning, so a mixed guest cell with
 * no dedicated vCPU of its own does not fit anywhere (nova's behaviour, kept).
 */
function noPins(p: Array<[number, number]> | null): p is null {
  return p === null || p.length === 0
}

/** _pack_instance_onto_cores: returns pinning + reserved pCPUs, or a reason. */
function packOntoCores(
  cell: HostNumaCell,
  inst: InstanceCellRequest,
  numReserved: number,
): {pinning: Array<[number, number]>; reserved: number[]} | FitFailure {
  if (cell.siblings.length === 0) {
    // max(map(len, [])) raises ValueError in nova: the filter errors out on such a host.
    return {reason: `host NUMA cell ${cell.id} has no siblings information (nova's pinning code raises ValueError)`}
  }
  const threadsPerCore = Math.max(...cell.siblings.map((s) => s.length)) || 1
  const free = new Set(freePcpus(cell))
  // NUMACell.free_siblings = [sibling_set & free_pcpus], free_pcpus = pcpuset - pinned_cpus: Python
  // sets, iterated in their hash-table order (see pyset.ts), which decides the CPUs picked below.
  const freeSiblings = freeSiblingsOf(cell)
  const siblingSets = new Map<number, number[][]>()
  for (const sib of freeSiblings) for (let n = 1; n <= sib.length; n++) (siblingSets.get(n) ?? (siblingSets.set(n, []).get(n) as number[][])).push(sib)
  const vcpus = [...inst.pcpuset].sort((a, b) => a - b)
  const getPinning = (threadsNo: number, sets: number[][]): Array<[number, number]> | null => {
    if (threadsNo * sets.length < vcpus.length) return null
    const usable = sets.flatMap((s) => s.slice(0, threadsNo))
    return vcpus.map((v, i) => [v, usable[i] as number])
  }
  const getReserved = (sets: number[][], pinning: Array<[number, number]> | null, isolate: boolean): number[] | null => {
    if (noPins(pinning)) return null
    if (!numReserved) return null
    let cores = sets.map((s) => [...s])
    for (const [, p] of pinning) {
      const hit = cores.find((s) => s.includes(p))
      if (!hit) continue
      if (isolate) cores = cores.filter((s) => s !== hit)
      else hit.splice(hit.indexOf(p), 1)
    }
    const r = cores.flat().slice(0, numReserved)
    return r.length > 0 ? r : null
  }
  let pinning: Array<[number, number]> | null = null
  let reserved: number[] | null = null
  const policy = inst.threadPolicy
  if (policy === 'isolate') {
    const full = siblingSets.get(threadsPerCore)
    if (!full) return {reason: `cpu_thread_policy=isolate needs ${vcpus.length} whole free core(s); no core of ${threadsPerCore} thread(s) is entirely free`}
    const sameSets = cell.pcpuset.length === cell.cpuset.length && cell.pcpuset.every((c) => cell.cpuset.includes(c))
    if (threadsPerCore !== 1 && !sameSets) return {reason: 'cpu_thread_policy=isolate on a host with hyperthreads requires cpu_dedicated_set == cpu_shared_set'}
    pinning = getPinning(1, full)
    reserved = getReserved(siblingSets.get(1) ?? [], pinning, true)
    if (noPins(pinning) || (numReserved && !reserved)) {
      pinning = null
      reserved = null
    }
  } else {
    if (policy === 'require' && threadsPerCore <= 1) return {reason: 'cpu_thread_policy=require but the host cell has no hyperthreads'}
    const ordered = [...siblingSets.entries()].sort((a, b) => b[0] - a[0])
    let lastThreads = 1
    for (const [threadsNo, sets] of ordered) {
      lastThreads = threadsNo
      if (policy === 'require' && threadsNo <= 1) continue
      pinning = getPinning(threadsNo, sets)
      reserved = getReserved(siblingSets.get(1) ?? [], pinning, false)
      if (noPins(pinning) || (numReserved && !reserved)) continue
      break
    }
    if (policy !== 'require' && noPins(pinning)) {
      const singles = (siblingSets.get(1) ?? []).flat().map((x) => [x])
      pinning = getPinning(lastThreads, singles)
      reserved = getReserved(singles, pinning, false)
    }
  }
  if (noPins(pinning) || (numReserved && !reserved)) {
    return {
      reason: `cannot pin ${vcpus.length} vCPU(s)${numReserved ? ` + ${numReserved} emulator pCPU` : ''} on cell ${cell.id}: free pCPUs ${fmtSet([...free])} (pinned_cpus ${fmtSet(cell.pinned_cpus)})${policy ? `, thread policy ${policy}` : ''}`,
    }
  }
  return {pinning, reserved: reserved ?? []}
}

/**
 * _numa_fit_instance_cell. `release` changes where a pinned cell's memory is checked: Zed compares
 * it with the cell's free memory (memory - memory_usage) after the pCPU count, whatever the page
 * size; nova 31 checks it in the memory step instead, against the free small pages when the host
 * reports page sizes (no overcommit) or the free memory when it does not, and not at all when a
 * page size was requested (the free-pages check of the size stands for it).
 */
export function fitInstanceCell(
  cell: HostNumaCell,
  inst: InstanceCellRequest,
  limits: {cpu: number; ram: number} | null,
  numReserved: number,
  release: EngineRelease = 'zed',
): FittedCell | FitFailure {
  let pagesize: number | null = null
  const pinned = inst.cpuPolicy === 'dedicated' || inst.cpuPolicy === 'mixed'
  const epoxy = release !== 'zed'
  if (inst.pagesize) {
    const ps = pagesizeFor(cell, inst)
    if (ps === 'unsupported' || ps === null) return {reason: `cell ${cell.id}: page size request ${inst.pagesize} cannot be met`}
    pagesize = ps
  } else if (cell.mempages.length > 0) {
    const fits = canFitPagesize(cell, smallestPagesize(cell), inst.memory * 1024, epoxy && pinned)
    if (!fits) return {reason: `cell ${cell.id}: ${inst.memory} MB does not fit in its ${epoxy && pinned ? 'free ' : ''}small pages`}
  } else if (epoxy && pinned) {
    if (availMemory(cell) < inst.memory) return {reason: `cell ${cell.id}: needs ${inst.memory} MB, ${availMemory(cell)} MB available (pinned: no overcommit)`}
  } else if (inst.memory > cell.memory) {
    return {reason: `cell ${cell.id}: ${inst.memory} MB > cell memory ${cell.memory} MB`}
  }
  const shared = inst.cpuPolicy === null || inst.cpuPolicy === 'shared' || inst.cpuPolicy === 'mixed'
  if (pinned && inst.pcpuset.length + numReserved > cell.pcpuset.length) {
    return {reason: `cell ${cell.id}: needs ${inst.pcpuset.length + numReserved} dedicated pCPUs, cell has ${cell.pcpuset.length} in cpu_dedicated_set`}
  }
  if (shared && inst.cpuset.length > cell.cpuset.length)
    return {reason: `cell ${cell.id}: needs ${inst.cpuset.length} shared CPUs, cell has ${cell.cpuset.length}`}
  let pinning: Array<[number, number]> = []
  let reserved: number[] = []
  if (pinned) {
    const need = inst.pcpuset.length + numReserved
    const free = freePcpus(cell)
    if (need > free.length) {
      return {
        reason: `cell ${cell.id}: needs ${need} free pCPUs, has ${free.length} (pcpuset ${fmtSet(cell.pcpuset)}, pinned_cpus ${fmtSet(cell.pinned_cpus)})`,
      }
    }
    if (!epoxy && inst.memory > availMemory(cell)) return {reason: `cell ${cell.id}: needs ${inst.memory} MB, ${availMemory(cell)} MB available`}
    const packed = packOntoCores(cell, inst, numReserved)
    if ('reason' in packed) return packed
    pinning = packed.pinning
    reserved = packed.reserved
  }
  if (shared && limits) {
    const cpuUsage = cell.cpu_usage + inst.cpuset.length
    const cpuLimit = cell.cpuset.length * limits.cpu
    if (cpuUsage > cpuLimit) return {reason: `cell ${cell.id}: shared CPU usage ${cpuUsage} > limit ${cpuLimit} (${cell.cpuset.length} x ${limits.cpu})`}
    const ramUsage = cell.memory_usage + inst.memory
    const ramLimit = cell.memory * limits.ram
    if (ramUsage > ramLimit) return {reason: `cell ${cell.id}: memory usage ${ramUsage} MB > limit ${ramLimit} MB`}
  }
  return {
    id: cell.id,
    cpuset: inst.cpuset,
    pcpuset: inst.pcpuset,
    memory: inst.memory,
    pagesize,
    cpuPolicy: inst.cpuPolicy,
    pinning,
    cpusetReserved: reserved,
    threadPolicy: inst.threadPolicy,
  }
}

function* permutations<T>(items: T[], k: number): Generator<T[]> {
  if (k === 0) {
    yield []
    return
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)]
    for (const p of permutations(rest, k - 1)) yield [items[i] as T, ...p]
  }
}

function stableSort<T>(items: T[], key: (t: T) => number, reverse: boolean): T[] {
  return items
    .map((t, i) => ({t, i, k: key(t)}))
    .sort((a, b) => (a.k === b.k ? a.i - b.i : reverse ? b.k - a.k : a.k - b.k))
    .map((x) => x.t)
}

export interface NumaFitOptions {
  limits: {cpu: number; ram: number} | null
  packing: boolean
  /** numa node -> device count, when the host has PCI pools */
  pciCountByCell?: Map<number, number>
  pciRequested?: boolean
  /** The nova release whose rules apply (default Zed). */
  release?: EngineRelease
}

export type NumaFit = {ok: true; cells: FittedCell[]} | {ok: false; reason: string}

// A multi-instance boot asks every host the same question once per instance; host topologies are
// immutable, so the answer is kept per topology object and per question.
const fitCache = new WeakMap<HostNumaTopology, Map<string, NumaFit>>()
const requestKeys = new WeakMap<InstanceTopologyRequest, string>()

/** numa_fit_instance_to_host: the fitted cells, or the reason of the first (best) failure. */
export function fitInstanceToHost(host: HostNumaTopology, req: InstanceTopologyRequest, opts: NumaFitOptions): NumaFit {
  let rk = requestKeys.get(req)
  if (rk === undefined) requestKeys.set(req, (rk = JSON.stringify(req)))
  const key = `${rk}|${opts.limits ? `${opts.limits.cpu}/${opts.limits.ram}` : '-'}|${opts.packing}|${opts.pciRequested ?? false}|${opts.release ?? 'zed'}|${opts.pciCountByCell ? [...opts.pciCountByCell].join(';') : '-'}`
  let perHost = fitCache.get(host)
  if (!perHost) fitCache.set(host, (perHost = new Map()))
  let got = perHost.get(key)
  if (!got) perHost.set(key, (got = fitUncached(host, req, opts)))
  return got
}

function fitUncached(host: HostNumaTopology, req: InstanceTopologyRequest, opts: NumaFitOptions): NumaFit {
  if (host.cells.length < req.cells.length) return {ok: false, reason: `instance wants ${req.cells.length} NUMA nodes, host has ${host.cells.length}`}
  let hostCells = host.cells
  if (host.cells.length > req.cells.length) {
    hostCells = stableSort(hostCells, availMemory, !opts.packing)
    const first = req.cells[0] as InstanceCellRequest
    if (first.cpuPolicy === null || first.cpuPolicy === 'shared') hostCells = stableSort(hostCells, (c) => c.cpu_usage, opts.packing)
    else hostCells = stableSort(hostCells, (c) => freePcpus(c).length, !opts.packing)
    if (opts.pciCountByCell) {
      const m = opts.pciCountByCell
      hostCells = stableSort(hostCells, (c) => m.get(c.id) ?? 0, Boolean(opts.pciRequested))
    }
  }
  const notFit = new Set<string>()
  const fitCache = new Map<string, FittedCell>()
  let firstReason: string | null = null
  // nova fits the guest's own cell objects and changes them as it goes: a cell that fitted takes
  // the host cell's id, and one that passed the page size check keeps the size chosen, for every
  // later permutation; the cache keys use those ids. Which hosts fit depends on it, so it is replayed.
  const ids = req.cells.map((c) => c.id)
  const pagesizes = req.cells.map((c) => c.pagesize)
  for (const perm of permutations(hostCells, req.cells.length)) {
    const chosen: FittedCell[] = []
    for (let i = 0; i < perm.length; i++) {
      const hc = perm[i] as HostNumaCell
      const base = req.cells[i] as InstanceCellRequest
      const pair = `${hc.id}/${ids[i] as number}`
      if (notFit.has(pair)) break
      const cached = fitCache.get(pair)
      if (cached) {
        chosen.push(cached)
        ids[i] = hc.id
        continue
      }
      const ic = ids[i] === base.id && pagesizes[i] === base.pagesize ? base : {...base, id: ids[i] as number, pagesize: pagesizes[i] as number | null}
      const reserved = req.emulatorThreadsIsolated && chosen.length === 0 ? 1 : 0
      const got = fitInstanceCell(hc, ic, opts.limits, reserved, opts.release)
      if ('reason' in got) {
        if (ic.pagesize) {
          const ps = pagesizeFor(hc, ic)
          if (typeof ps === 'number') pagesizes[i] = ps
        }
        notFit.add(pair)
        firstReason ??= got.reason
        break
      }
      if (ic.pagesize) pagesizes[i] = got.pagesize
      ids[i] = hc.id
      fitCache.set(pair, got)
      chosen.push(got)
    }
    if (chosen.length === perm.length) return {ok: true, cells: chosen}
  }
  return {ok: false, reason: firstReason ?? 'no permutation of host cells fits'}
}

/** NUMACell.pin_cpus refusing a claim: nova's exception name and message. */
export class CpuPinningError extends Error {
  readonly novaName: 'CPUPinningInvalid' | 'CPUPinningUnknown'
  constructor(novaName: 'CPUPinningInvalid' | 'CPUPinningUnknown', message: string) {
    super(message)
    this.novaName = novaName
  }
}

const pyList = (xs: Iterable<number>) => `[${[...xs].sort((a, b) => a - b).join(', ')}]`

/**
 * NUMACell.pin_cpus / pin_cpus_with_siblings: the new pinned_cpus. An isolate guest takes every
 * thread sibling of the CPUs it is pinned to (on a host on the old vcpu_pin_set, where pcpuset
 * and cpuset are the same CPUs, nothing else keeps those siblings free).
 */
function pinCpus(cell: HostNumaCell, cpus: Set<number>, withSiblings: boolean): number[] {
  let want = cpus
  if (withSiblings) {
    want = new Set<number>()
    for (const sib of cell.siblings) if (sib.some((c) => cpus.has(c))) for (const c of sib) want.add(c)
  }
  const pcpus = new Set(cell.pcpuset)
  if ([...want].some((c) => !pcpus.has(c)))
    throw new CpuPinningError('CPUPinningUnknown', `CPU set to pin ${pyList(want)} must be a subset of known CPU set ${pyList(pcpus)}`)
  const pinned = new Set(cell.pinned_cpus)
  if ([...want].some((c) => pinned.has(c)))
    throw new CpuPinningError(
      'CPUPinningInvalid',
      `CPU set to pin ${pyList(want)} must be a subset of free CPU set ${pyList(cell.pcpuset.filter((c) => !pinned.has(c)))}`,
    )
  return [...pinned, ...want].sort((a, b) => a - b)
}

/** numa_usage_from_instance_numa (free=false), on a copy; throws CpuPinningError as nova does. */
export function consumeNuma(host: HostNumaTopology, cells: FittedCell[]): HostNumaTopology {
  return {
    version: host.version,
    cells: host.cells.map((hc) => {
      const next: HostNumaCell = {...hc, pinned_cpus: [...hc.pinned_cpus], mempages: hc.mempages.map((p) => ({...p}))}
      for (const ic of cells) {
        if (ic.id !== hc.id) continue
        const ps = ic.pagesize ?? (next.mempages.length > 0 ? smallestPagesize(next) : null)
        if (ps !== null)
          next.mempages = next.mempages.map((p): MemPages => (p.size_kb === ps ? {...p, used: Math.max(0, p.used + (ic.memory * 1024) / p.size_kb)} : p))
        next.memory_usage += ic.memory
        next.cpu_usage += ic.cpuset.length
        if (ic.cpuPolicy === null || ic.cpuPolicy === 'shared') continue
        next.pinned_cpus = pinCpus(next, new Set([...ic.pinning.map(([, p]) => p), ...ic.cpusetReserved]), ic.threadPolicy === 'isolate')
      }
      return next
    }),
  }
}

/** A set of CPUs as nova's messages print it: {0-3,8}. */
export function fmtSet(xs: number[]): string {
  return `{${cpuRanges(new Set(xs))}}`
}
