/**
 * NUMA fitting as nova's virt/hardware.py does it (Zed): the instance topology a flavor/image asks
 * for (numa_get_constraints), fitting it onto a host topology (numa_fit_instance_to_host, with
 * dedicated-CPU pinning and thread policies), and the host usage after a claim
 * (numa_usage_from_instance_numa).
 */
import type {HostNumaCell, HostNumaTopology, MemPages} from '../domain/nova-objects.js'
import {PyIntSet} from './pyset.js'

export type CpuPolicy = 'shared' | 'dedicated' | 'mixed'
export type ThreadPolicy = 'prefer' | 'isolate' | 'require'

export interface InstanceCellRequest {
  id: number
  cpuset: number[]
  pcpuset: number[]
  memory: number
  /** null, or -1 small, -2 large, -3 any, or a size in KiB */
  pagesize: number | null
  cpuPolicy: CpuPolicy | null
  threadPolicy: ThreadPolicy | null
}

export interface InstanceTopologyRequest {
  cells: InstanceCellRequest[]
  emulatorThreadsIsolated: boolean
}

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
}

export const MEMPAGES_SMALL = -1
export const MEMPAGES_LARGE = -2
export const MEMPAGES_ANY = -3

export class NumaRequestError extends Error {}

/** nova's parse_cpu_spec: "0-3,^2,5" -> {0,1,3,5}. */
export function parseCpuSpec(spec: string): Set<number> {
  const include = new Set<number>()
  const exclude = new Set<number>()
  for (const raw of spec.split(',')) {
    const rule = raw.trim()
    if (!rule) continue
    const neg = rule.startsWith('^')
    const body = neg ? rule.slice(1) : rule
    const m = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(body)
    if (!m) throw new NumaRequestError(`invalid CPU range "${rule}"`)
    const a = Number(m[1])
    const b = m[2] === undefined ? a : Number(m[2])
    if (b < a) throw new NumaRequestError(`invalid CPU range "${rule}"`)
    for (let i = a; i <= b; i++) (neg ? exclude : include).add(i)
  }
  for (const x of exclude) include.delete(x)
  return include
}

function pagesizeOf(v: string | undefined): number | null {
  if (v === undefined || v === '') return null
  const s = v.trim().toLowerCase()
  if (s === 'small') return MEMPAGES_SMALL
  if (s === 'large') return MEMPAGES_LARGE
  if (s === 'any') return MEMPAGES_ANY
  const m = /^(\d+)\s*(kb|k|kib|mb|m|mib|gb|g|gib)?$/.exec(s)
  if (!m) throw new NumaRequestError(`invalid hw:mem_page_size "${v}"`)
  const n = Number(m[1])
  const unit = m[2] ?? 'kb'
  return unit.startsWith('g') ? n * 1024 * 1024 : unit.startsWith('m') ? n * 1024 : n
}

/** Flavor extra spec wins; the image property applies when the flavor says nothing. */
export function policyOf(extraSpecs: Record<string, string>, image: Record<string, string>, flavorKey: string, imageKey: string): string | null {
  return extraSpecs[flavorKey] ?? image[imageKey] ?? null
}

/** numa_get_constraints: null when the guest has no NUMA topology. */
export function instanceTopologyFor(vcpus: number, memoryMb: number, extraSpecs: Record<string, string>, image: Record<string, string>): InstanceTopologyRequest | null {
  const cpuPolicy = policyOf(extraSpecs, image, 'hw:cpu_policy', 'hw_cpu_policy') as CpuPolicy | null
  const threadPolicy = policyOf(extraSpecs, image, 'hw:cpu_thread_policy', 'hw_cpu_thread_policy') as ThreadPolicy | null
  const nodesText = policyOf(extraSpecs, image, 'hw:numa_nodes', 'hw_numa_nodes')
  const pagesize = pagesizeOf(policyOf(extraSpecs, image, 'hw:mem_page_size', 'hw_mem_page_size') ?? undefined)
  const emulatorIsolate = extraSpecs['hw:emulator_threads_policy'] === 'isolate'
  const pinned = cpuPolicy === 'dedicated' || cpuPolicy === 'mixed'
  // numa_get_constraints refuses these combinations whether or not a topology follows.
  if (!pinned && threadPolicy) throw new NumaRequestError(`hw:cpu_thread_policy=${threadPolicy} needs hw:cpu_policy=dedicated or mixed (CPUThreadPolicyConfigurationInvalid)`)
  if (!pinned && emulatorIsolate) throw new NumaRequestError('hw:emulator_threads_policy=isolate needs hw:cpu_policy=dedicated or mixed (BadRequirementEmulatorThreadsPolicy)')
  if (cpuPolicy !== 'mixed' && extraSpecs['hw:cpu_dedicated_mask']) throw new NumaRequestError('hw:cpu_dedicated_mask needs hw:cpu_policy=mixed (RequiredMixedInstancePolicy)')
  if (nodesText === null && pagesize === null && !pinned) return null
  const nodes = nodesText === null ? 1 : Number(nodesText)
  if (!Number.isInteger(nodes) || nodes < 1) throw new NumaRequestError(`invalid hw:numa_nodes "${nodesText}"`)
  const cells: InstanceCellRequest[] = []
  const manual = extraSpecs['hw:numa_cpus.0'] !== undefined || image['hw_numa_cpus.0'] !== undefined
  if (manual) {
    for (let i = 0; i < nodes; i++) {
      const cpus = extraSpecs[`hw:numa_cpus.${i}`] ?? image[`hw_numa_cpus.${i}`]
      const mem = extraSpecs[`hw:numa_mem.${i}`] ?? image[`hw_numa_mem.${i}`]
      if (cpus === undefined || mem === undefined) throw new NumaRequestError(`hw:numa_cpus.${i} / hw:numa_mem.${i} missing`)
      cells.push({id: i, cpuset: [...parseCpuSpec(cpus)].sort((a, b) => a - b), pcpuset: [], memory: Number(mem), pagesize, cpuPolicy, threadPolicy})
    }
  } else {
    if (vcpus % nodes !== 0 || memoryMb % nodes !== 0) throw new NumaRequestError(`${vcpus} vCPUs / ${memoryMb} MB cannot be split evenly over ${nodes} NUMA nodes`)
    const per = vcpus / nodes
    for (let i = 0; i < nodes; i++) {
      cells.push({id: i, cpuset: Array.from({length: per}, (_, k) => i * per + k), pcpuset: [], memory: memoryMb / nodes, pagesize, cpuPolicy, threadPolicy})
    }
  }
  if (cpuPolicy === 'dedicated') {
    for (const c of cells) {
      c.pcpuset = c.cpuset
      c.cpuset = []
    }
  } else if (cpuPolicy === 'mixed') {
    const mask = extraSpecs['hw:cpu_dedicated_mask']
    if (!mask) throw new NumaRequestError('hw:cpu_policy=mixed needs hw:cpu_dedicated_mask')
    const all = new Set(Array.from({length: vcpus}, (_, i) => i))
    const dedicated = mask.trim().startsWith('^') ? new Set([...all].filter((x) => !parseCpuSpec(mask.trim().slice(1)).has(x))) : parseCpuSpec(mask)
    // get_dedicated_cpu_constraint: a mixed guest needs both kinds, and only its own vCPUs
    if (dedicated.size === 0 || dedicated.size >= all.size || [...dedicated].some((x) => !all.has(x))) {
      throw new NumaRequestError(`hw:cpu_dedicated_mask=${mask} must name some but not all of the ${vcpus} vCPUs (InvalidMixedInstanceDedicatedMask)`)
    }
    for (const c of cells) {
      c.pcpuset = c.cpuset.filter((x) => dedicated.has(x))
      c.cpuset = c.cpuset.filter((x) => !dedicated.has(x))
    }
  }
  return {cells, emulatorThreadsIsolated: emulatorIsolate && pinned}
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
function packOntoCores(cell: HostNumaCell, inst: InstanceCellRequest, numReserved: number): {pinning: Array<[number, number]>; reserved: number[]} | FitFailure {
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
  for (const sib of freeSiblings) for (let n = 1; n <= sib.length; n++) (siblingSets.get(n) ?? siblingSets.set(n, []).get(n) as number[][]).push(sib)
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
    return {reason: `cannot pin ${vcpus.length} vCPU(s)${numReserved ? ` + ${numReserved} emulator pCPU` : ''} on cell ${cell.id}: free pCPUs ${fmtSet([...free])} (pinned_cpus ${fmtSet(cell.pinned_cpus)})${policy ? `, thread policy ${policy}` : ''}`}
  }
  return {pinning, reserved: reserved ?? []}
}

/** _numa_fit_instance_cell */
export function fitInstanceCell(cell: HostNumaCell, inst: InstanceCellRequest, limits: {cpu: number; ram: number} | null, numReserved: number): FittedCell | FitFailure {
  let pagesize: number | null = null
  if (inst.pagesize) {
    const ps = pagesizeFor(cell, inst)
    if (ps === 'unsupported' || ps === null) return {reason: `cell ${cell.id}: page size request ${inst.pagesize} cannot be met`}
    pagesize = ps
  } else if (cell.mempages.length > 0) {
    const fits = canFitPagesize(cell, smallestPagesize(cell), inst.memory * 1024, false)
    if (!fits) return {reason: `cell ${cell.id}: ${inst.memory} MB does not fit in its small pages`}
  } else if (inst.memory > cell.memory) {
    return {reason: `cell ${cell.id}: ${inst.memory} MB > cell memory ${cell.memory} MB`}
  }
  const pinned = inst.cpuPolicy === 'dedicated' || inst.cpuPolicy === 'mixed'
  const shared = inst.cpuPolicy === null || inst.cpuPolicy === 'shared' || inst.cpuPolicy === 'mixed'
  if (pinned && inst.pcpuset.length + numReserved > cell.pcpuset.length) {
    return {reason: `cell ${cell.id}: needs ${inst.pcpuset.length + numReserved} dedicated pCPUs, cell has ${cell.pcpuset.length} in cpu_dedicated_set`}
  }
  if (shared && inst.cpuset.length > cell.cpuset.length) return {reason: `cell ${cell.id}: needs ${inst.cpuset.length} shared CPUs, cell has ${cell.cpuset.length}`}
  let pinning: Array<[number, number]> = []
  let reserved: number[] = []
  if (pinned) {
    const need = inst.pcpuset.length + numReserved
    const free = freePcpus(cell)
    if (need > free.length) {
      return {reason: `cell ${cell.id}: needs ${need} free pCPUs, has ${free.length} (pcpuset ${fmtSet(cell.pcpuset)}, pinned_cpus ${fmtSet(cell.pinned_cpus)})`}
    }
    if (inst.memory > availMemory(cell)) return {reason: `cell ${cell.id}: needs ${inst.memory} MB, ${availMemory(cell)} MB available`}
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
  return {id: cell.id, cpuset: inst.cpuset, pcpuset: inst.pcpuset, memory: inst.memory, pagesize, cpuPolicy: inst.cpuPolicy, pinning, cpusetReserved: reserved}
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
  const key = `${rk}|${opts.limits ? `${opts.limits.cpu}/${opts.limits.ram}` : '-'}|${opts.packing}|${opts.pciRequested ?? false}|${opts.pciCountByCell ? [...opts.pciCountByCell].join(';') : '-'}`
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
  for (const perm of permutations(hostCells, req.cells.length)) {
    const chosen: FittedCell[] = []
    for (let i = 0; i < perm.length; i++) {
      const hc = perm[i] as HostNumaCell
      const ic = req.cells[i] as InstanceCellRequest
      const pair = `${hc.id}/${ic.id}`
      if (notFit.has(pair)) break
      const cached = fitCache.get(pair)
      if (cached) {
        chosen.push(cached)
        continue
      }
      const reserved = req.emulatorThreadsIsolated && chosen.length === 0 ? 1 : 0
      const got = fitInstanceCell(hc, ic, opts.limits, reserved)
      if ('reason' in got) {
        notFit.add(pair)
        firstReason ??= got.reason
        break
      }
      fitCache.set(pair, got)
      chosen.push(got)
    }
    if (chosen.length === perm.length) return {ok: true, cells: chosen}
  }
  return {ok: false, reason: firstReason ?? 'no permutation of host cells fits'}
}

/** numa_usage_from_instance_numa (free=false), on a copy. */
export function consumeNuma(host: HostNumaTopology, cells: FittedCell[]): HostNumaTopology {
  return {
    version: host.version,
    cells: host.cells.map((hc) => {
      const next: HostNumaCell = {...hc, pinned_cpus: [...hc.pinned_cpus], mempages: hc.mempages.map((p) => ({...p}))}
      for (const ic of cells) {
        if (ic.id !== hc.id) continue
        const ps = ic.pagesize ?? (next.mempages.length > 0 ? smallestPagesize(next) : null)
        if (ps !== null) next.mempages = next.mempages.map((p): MemPages => (p.size_kb === ps ? {...p, used: Math.max(0, p.used + (ic.memory * 1024) / p.size_kb)} : p))
        next.memory_usage += ic.memory
        next.cpu_usage += ic.cpuset.length
        if (ic.cpuPolicy === null || ic.cpuPolicy === 'shared') continue
        const pins = new Set([...next.pinned_cpus, ...ic.pinning.map(([, p]) => p), ...ic.cpusetReserved])
        next.pinned_cpus = [...pins].sort((a, b) => a - b)
      }
      return next
    }),
  }
}

export function fmtSet(xs: number[]): string {
  const s = [...new Set(xs)].sort((a, b) => a - b)
  if (s.length === 0) return '{}'
  const parts: string[] = []
  let start = s[0] as number
  let prev = start
  for (const x of [...s.slice(1), Number.NaN]) {
    if (x === prev + 1) {
      prev = x
      continue
    }
    parts.push(start === prev ? String(start) : `${start}-${prev}`)
    start = x
    prev = x
  }
  return `{${parts.join(',')}}`
}
