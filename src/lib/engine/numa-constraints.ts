/**
 * The NUMA topology a flavor and image ask for, as nova's virt/hardware.py numa_get_constraints
 * works it out (Zed), with its exceptions and messages: what nova-api refuses before scheduling.
 * Apart from numa.ts, which fits the result onto hosts: this half reads extra specs, never a host.
 */
import {boolFromString} from '../domain/strutils.js'

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

export const MEMPAGES_SMALL = -1
export const MEMPAGES_LARGE = -2
export const MEMPAGES_ANY = -3

export class NumaRequestError extends Error {
  /** The nova exception class nova-api answers with (400, except where noted in docs/engine.md). */
  readonly novaName: string
  constructor(novaName: string, message: string) {
    super(message)
    this.novaName = novaName
  }
}

/**
 * A CPU set spec ("0-3,^2,5") cut at `bound`: the members below it, and the smallest member at or
 * above it. Guest CPU numbers are bounded by the flavor's vCPUs, so nothing larger is ever
 * materialised (a mask of 0-99999999 costs the same as 0-3).
 */
export interface BoundedCpuSet {
  within: number[]
  beyond: number | null
}

const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/

function pyInt(text: string): number | null {
  return PY_INT.test(text) ? Number(text.replace(/_/g, '')) : null
}

/** parse_cpu_spec with nova's grammar and messages (exception.Invalid). */
export function parseCpuSpecBounded(spec: string, bound: number): BoundedCpuSet {
  const include: Array<[number, number]> = []
  const exclude: Array<[number, number]> = []
  const invalid = (what: string, rule: string) => new NumaRequestError('Invalid', `Invalid ${what} expression '${rule}'`)
  for (const raw of spec.split(',')) {
    const rule = raw.trim()
    if (rule.length === 0) continue
    const dash = rule.indexOf('-')
    if (dash >= 0) {
      let first = rule.slice(0, dash)
      const reject = first.startsWith('^')
      if (reject) first = first.slice(1)
      const start = pyInt(first)
      const end = pyInt(rule.slice(dash + 1))
      if (start === null || end === null || start > end) throw invalid('range', rule)
      ;(reject ? exclude : include).push([start, end])
    } else if (rule.startsWith('^')) {
      const n = pyInt(rule.slice(1))
      if (n === null) throw invalid('exclusion', rule)
      exclude.push([n, n])
    } else {
      const n = pyInt(rule)
      if (n === null) throw invalid('inclusion', rule)
      include.push([n, n])
    }
  }
  const excluded = (x: number): number | null => {
    for (const [a, b] of exclude) if (x >= a && x <= b) return b
    return null
  }
  const within = new Set<number>()
  let beyond: number | null = null
  for (const [a, b] of include) {
    for (let x = Math.max(a, 0); x <= Math.min(b, bound - 1); x++) if (excluded(x) === null) within.add(x)
    // the smallest included member >= bound: skip over exclusion ranges instead of walking them
    let x = Math.max(a, bound)
    while (x <= b) {
      const skipTo = excluded(x)
      if (skipTo === null) {
        if (beyond === null || x < beyond) beyond = x
        break
      }
      x = skipTo + 1
    }
  }
  return {within: [...within].sort((p, q) => p - q), beyond}
}

/** nova's str() of a Python set of small ints, as its messages print it. */
function pySetText(xs: Iterable<number>): string {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 'set()' : `{${s.join(', ')}}`
}

const CPU_POLICIES = ['dedicated', 'shared', 'mixed'] as const
const THREAD_POLICIES = ['prefer', 'isolate', 'require'] as const
const EMULATOR_POLICIES = ['share', 'isolate'] as const
const pyTuple = (xs: readonly string[]) => `(${xs.map((x) => `'${x}'`).join(', ')})`

/** ImageMetaProps.traits_required: the image's `trait:NAME=required` properties. */
function imageTraitsRequired(props: Record<string, string>): string[] {
  return Object.entries(props)
    .filter(([k, v]) => k.startsWith('trait:') && v === 'required')
    .map(([k]) => k.slice('trait:'.length))
}

/** Python truthiness of an extra spec / image property value (None and '' are false). */
const given = (v: string | undefined | null): v is string => v !== undefined && v !== null && v !== ''

function cpuPolicyConstraint(fv: string | undefined, iv: string | undefined): CpuPolicy | null {
  if (given(fv) && !(CPU_POLICIES as readonly string[]).includes(fv))
    throw new NumaRequestError(
      'InvalidCPUAllocationPolicy',
      `CPU policy requested from 'flavor extra specs' is invalid, given: '${fv}', available: '${pyTuple(CPU_POLICIES)}'.`,
    )
  if (given(iv) && !(CPU_POLICIES as readonly string[]).includes(iv))
    throw new NumaRequestError(
      'InvalidCPUAllocationPolicy',
      `CPU policy requested from 'image properties' is invalid, given: '${iv}', available: '${pyTuple(CPU_POLICIES)}'.`,
    )
  const forbidden = () =>
    new NumaRequestError('ImageCPUPinningForbidden', "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor")
  if (fv === 'dedicated') return 'dedicated'
  if (fv === 'mixed') {
    if (iv === 'dedicated') throw forbidden()
    return 'mixed'
  }
  if (fv === 'shared') {
    if (iv === 'mixed' || iv === 'dedicated') throw forbidden()
    return 'shared'
  }
  return given(iv) ? (iv as CpuPolicy) : null
}

function threadPolicyConstraint(fv: string | undefined, iv: string | undefined): ThreadPolicy | null {
  if (given(fv) && !(THREAD_POLICIES as readonly string[]).includes(fv))
    throw new NumaRequestError(
      'InvalidCPUThreadAllocationPolicy',
      `CPU thread policy requested from 'flavor extra specs' is invalid, given: '${fv}', available: '${pyTuple(THREAD_POLICIES)}'.`,
    )
  if (given(iv) && !(THREAD_POLICIES as readonly string[]).includes(iv))
    throw new NumaRequestError(
      'InvalidCPUThreadAllocationPolicy',
      `CPU thread policy requested from 'image properties' is invalid, given: '${iv}', available: '${pyTuple(THREAD_POLICIES)}'.`,
    )
  if (fv === undefined || fv === 'prefer') return ((given(fv) ? fv : null) ?? (given(iv) ? iv : null)) as ThreadPolicy | null
  if (given(iv) && iv !== fv)
    throw new NumaRequestError(
      'ImageCPUThreadPolicyForbidden',
      "Image property 'hw_cpu_thread_policy' is not permitted to override CPU thread pinning policy set against the flavor",
    )
  return (given(fv) ? fv : null) as ThreadPolicy | null
}

function emulatorPolicyConstraint(specs: Record<string, string>): string | null {
  const v = specs['hw:emulator_threads_policy']
  if (!given(v)) return null
  if (!(EMULATOR_POLICIES as readonly string[]).includes(v))
    throw new NumaRequestError(
      'InvalidEmulatorThreadsPolicy',
      `CPU emulator threads option requested is invalid, given: '${v}', available: '${pyTuple(EMULATOR_POLICIES)}'.`,
    )
  return v
}

/** A mask relative to the guest's vCPUs: "^N" masks are taken from 0-(vcpus-1). */
function vcpuMask(mask: string, vcpus: number): BoundedCpuSet {
  return parseCpuSpecBounded(mask.trim().startsWith('^') ? `0-${vcpus - 1},${mask}` : mask, vcpus)
}

function realtimeConstraint(specs: Record<string, string>, image: Record<string, string>, vcpus: number): number[] | null {
  if (!boolFromString(specs['hw:cpu_realtime'])) return null
  const mask = given(image.hw_cpu_realtime_mask) ? image.hw_cpu_realtime_mask : specs['hw:cpu_realtime_mask']
  const rt: BoundedCpuSet = given(mask) ? vcpuMask(mask, vcpus) : {within: Array.from({length: vcpus}, (_, i) => i), beyond: null}
  const msg = 'Use of realtime CPUs requires either one or more non-realtime CPU(s) or offloaded emulator threads.'
  if (rt.within.length === 0 && rt.beyond === null) throw new NumaRequestError('RealtimeMaskNotFoundOrInvalid', msg)
  const emu = emulatorPolicyConstraint(specs)
  if (rt.within.length === vcpus && rt.beyond === null && !emu) throw new NumaRequestError('RealtimeMaskNotFoundOrInvalid', msg)
  if (rt.beyond !== null)
    throw new NumaRequestError(
      'RealtimeMaskNotFoundOrInvalid',
      'Realtime policy vCPU(s) mask is configured with RT vCPUs that are not a subset of the vCPUs in the flavor. See hw:cpu_realtime_mask or hw_cpu_realtime_mask',
    )
  return rt.within
}

function dedicatedConstraint(specs: Record<string, string>, vcpus: number): number[] | null {
  const mask = specs['hw:cpu_dedicated_mask']
  if (!given(mask)) return null
  const p = vcpuMask(mask, vcpus)
  if ((p.within.length === 0 && p.beyond === null) || p.within.length === vcpus)
    throw new NumaRequestError(
      'InvalidMixedInstanceDedicatedMask',
      "Mixed instance must have at least 1 pinned vCPU and 1 unpinned vCPU. See 'hw:cpu_dedicated_mask'.",
    )
  if (p.beyond !== null)
    throw new NumaRequestError(
      'InvalidMixedInstanceDedicatedMask',
      'Mixed instance dedicated vCPU(s) mask is not a subset of vCPUs in the flavor. See "hw:cpu_dedicated_mask"',
    )
  return p.within
}

/** _get_vcpu_pcpu_resources: `resourcesN:VCPU` / `resourcesN:PCPU` (numeric suffixes only), summed. */
function vcpuPcpuResources(specs: Record<string, string>): [number, number] {
  let vcpu = 0
  let pcpu = 0
  for (const [k, v] of Object.entries(specs)) {
    const n = pyInt(v)
    if (n === null) continue
    if (/^resources(?:[1-9]\d*)?:VCPU/.test(k)) vcpu += n
    if (/^resources(?:[1-9]\d*)?:PCPU/.test(k)) pcpu += n
  }
  return [vcpu, pcpu]
}

function hyperthreadingTrait(specs: Record<string, string>, image: Record<string, string>): string | null {
  for (const [k, v] of Object.entries(specs)) if (/^trait(?:[1-9]\d*)?:HW_CPU_HYPERTHREADING/.test(k)) return v
  return imageTraitsRequired(image).includes('HW_CPU_HYPERTHREADING') ? 'required' : null
}

function nodeCountConstraint(specs: Record<string, string>, image: Record<string, string>): number | null {
  const fv = specs['hw:numa_nodes']
  const iv = image.hw_numa_nodes
  if (given(fv) && given(iv))
    throw new NumaRequestError(
      'ImageNUMATopologyForbidden',
      "Image property 'hw_numa_nodes' is not permitted to override NUMA configuration set against the flavor",
    )
  const nodes = given(fv) ? fv : iv
  if (nodes === undefined) return null
  // strutils.is_int_like: str(int(x)) == str(x)
  if (!/^(0|-?[1-9]\d*)$/.test(nodes) || Number(nodes) < 1)
    throw new NumaRequestError('InvalidNUMANodesNumber', `The property 'numa_nodes' cannot be '${nodes}'. It must be a number greater than 0`)
  return Number(nodes)
}

/** oslo strutils.string_to_bytes (IEC, return_int) / 1024. */
function pagesizeFromText(request: string): number {
  if (request === 'any') return MEMPAGES_ANY
  if (request === 'large') return MEMPAGES_LARGE
  if (request === 'small') return MEMPAGES_SMALL
  if (/^\d+$/.test(request)) return Number(request)
  const m = /^([-+]?\d*\.?\d+)([KMGT]i?)?(b|bit|B)$/.exec(request)
  if (!m) throw new NumaRequestError('MemoryPageSizeInvalid', `Invalid memory page size '${request}'`)
  const exp = m[2] ? 'KMGT'.indexOf((m[2] as string)[0] as string) + 1 : 0
  let bytes = Number(m[1]) * 1024 ** exp
  if (m[3] !== 'B') bytes /= 8
  return Math.ceil(bytes) / 1024
}

function pagesizeConstraint(specs: Record<string, string>, image: Record<string, string>): number | null {
  const fv = specs['hw:mem_page_size']
  const iv = image.hw_mem_page_size
  if (!given(fv) && given(iv)) throw new NumaRequestError('MemoryPageSizeForbidden', `Page size ${iv} forbidden against '<empty>'`)
  if (!given(fv)) return null
  const pagesize = pagesizeFromText(fv)
  if (given(iv) && (pagesize === MEMPAGES_ANY || pagesize === MEMPAGES_LARGE)) return pagesizeFromText(iv)
  if (given(iv)) throw new NumaRequestError('MemoryPageSizeForbidden', `Page size ${iv} forbidden against '${fv}'`)
  return pagesize
}

function lockedMemoryConstraint(specs: Record<string, string>, image: Record<string, string>): void {
  const fv = specs['hw:locked_memory']
  const iv = image.hw_locked_memory
  const imageLocked = iv === undefined ? null : boolFromString(iv)
  let locked: boolean | null
  if (fv !== undefined) {
    locked = boolFromString(fv)
    if (imageLocked !== null && imageLocked !== locked)
      throw new NumaRequestError(
        'FlavorImageLockedMemoryConflict',
        `locked_memory value in image (${imageLocked ? 'True' : 'False'}) and flavor (${locked ? 'True' : 'False'}) conflict. A consistent value is expected if both specified.`,
      )
  } else locked = imageLocked
  if (locked && !given(specs['hw:mem_page_size']) && !given(image.hw_mem_page_size))
    throw new NumaRequestError('LockMemoryForbidden', 'locked_memory value in image or flavor is forbidden when mem_page_size is not set.')
}

const NUMA_NODES_MAX = 128

/** `hw:numa_cpus.N` / `hw:numa_mem.N` (flavor) or `hw_numa_cpus.N` / `hw_numa_mem.N` (image), from 0 up to the first gap. */
function cellMappings(source: Record<string, string>, key: string): string[] | null {
  const out: string[] = []
  for (let i = 0; i < NUMA_NODES_MAX; i++) {
    const v = source[`${key}.${i}`]
    if (v === undefined) break
    out.push(v)
  }
  return out.length > 0 ? out : null
}

function memText(v: string): number {
  const n = pyInt(v)
  // int() raising ValueError in nova: not one of the exceptions nova-api maps to 400
  if (n === null) throw new NumaRequestError('ValueError', `invalid literal for int() with base 10: '${v}'`)
  return n
}

/**
 * numa_get_constraints: the guest NUMA topology a flavor and image ask for, or null. Throws
 * NumaRequestError (nova's exception name and message) where nova-api refuses the request.
 */
export function instanceTopologyFor(
  vcpus: number,
  memoryMb: number,
  extraSpecs: Record<string, string>,
  image: Record<string, string>,
): InstanceTopologyRequest | null {
  // ImageMetaProps parses the image's per-node lists when the image is read, before any check here
  const imageCpuSets = cellMappings(image, 'hw_numa_cpus')?.map((s) => parseCpuSpecBounded(s, vcpus)) ?? null
  const imageMemList = cellMappings(image, 'hw_numa_mem')?.map(memText) ?? null
  let cpuPolicy = cpuPolicyConstraint(extraSpecs['hw:cpu_policy'], image.hw_cpu_policy)
  let threadPolicy = threadPolicyConstraint(extraSpecs['hw:cpu_thread_policy'], image.hw_cpu_thread_policy)
  const realtime = realtimeConstraint(extraSpecs, image, vcpus)
  let dedicated = dedicatedConstraint(extraSpecs, vcpus)
  const emu = emulatorPolicyConstraint(extraSpecs)

  const [reqVcpus, reqPcpus] = vcpuPcpuResources(extraSpecs)
  if (cpuPolicy && (reqVcpus || reqPcpus))
    throw new NumaRequestError(
      'InvalidRequest',
      "It is not possible to use the 'resources:VCPU' or 'resources:PCPU' extra specs in combination with the 'hw:cpu_policy' extra spec or 'hw_cpu_policy' image metadata property; use one or the other",
    )
  if (reqVcpus && reqPcpus)
    throw new NumaRequestError('InvalidRequest', "It is not possible to specify both 'resources:VCPU' and 'resources:PCPU' extra specs; use one or the other")
  if (reqPcpus) {
    if (emu === 'isolate' && vcpus + 1 !== reqPcpus)
      throw new NumaRequestError(
        'InvalidRequest',
        "You have requested 'hw:emulator_threads_policy=isolate' but have not requested sufficient PCPUs to handle this policy; you must allocate exactly flavor.vcpus + 1 PCPUs.",
      )
    if (emu !== 'isolate' && vcpus !== reqPcpus)
      throw new NumaRequestError(
        'InvalidRequest',
        "There is a mismatch between the number of PCPUs requested via 'resourcesNN:PCPU' and the flavor); you must allocate exactly flavor.vcpus PCPUs",
      )
    cpuPolicy = 'dedicated'
  }
  if (reqVcpus) cpuPolicy = 'shared'

  const ht = hyperthreadingTrait(extraSpecs, image)
  if (threadPolicy && ht)
    throw new NumaRequestError(
      'InvalidRequest',
      "It is not possible to use the 'trait:HW_CPU_HYPERTHREADING' extra spec in combination with the 'hw:cpu_thread_policy' extra spec or 'hw_cpu_thread_policy' image metadata property; use one or the other",
    )
  if (ht === 'forbidden') threadPolicy = 'isolate'
  else if (ht === 'required') threadPolicy = 'require'

  if (cpuPolicy === null || cpuPolicy === 'shared') {
    if (threadPolicy)
      throw new NumaRequestError('CPUThreadPolicyConfigurationInvalid', 'Cannot set cpu thread pinning policy in a non dedicated cpu pinning policy')
    if (emu === 'isolate')
      throw new NumaRequestError('BadRequirementEmulatorThreadsPolicy', 'An isolated CPU emulator threads option requires a dedicated CPU policy option.')
    if (dedicated && dedicated.length > 0)
      throw new NumaRequestError('RequiredMixedInstancePolicy', "Cannot specify 'hw:cpu_dedicated_mask' without the 'mixed' policy.")
    if (realtime && realtime.length > 0)
      throw new NumaRequestError('RealtimeConfigurationInvalid', 'Cannot set realtime policy in a non dedicated cpu pinning policy')
  } else if (cpuPolicy === 'dedicated') {
    if (dedicated && dedicated.length > 0)
      throw new NumaRequestError('RequiredMixedInstancePolicy', "Cannot specify 'hw:cpu_dedicated_mask' without the 'mixed' policy.")
  } else {
    const both =
      "Dedicated CPU set can be specified from either 'hw:cpu_dedicated_mask' or 'hw:cpu_realtime_mask' when using 'mixed' CPU policy. 'hw:cpu_dedicated_mask' and 'hw:cpu_realtime_mask' can not be specified at the same time, or be specified with none of them."
    const rtGiven = realtime !== null && realtime.length > 0
    const dedGiven = dedicated !== null && dedicated.length > 0
    if ((rtGiven && dedGiven) || !(rtGiven || dedGiven)) throw new NumaRequestError('RequiredMixedOrRealtimeCPUMask', both)
    dedicated = dedGiven ? dedicated : realtime
  }

  const nodesAsked = nodeCountConstraint(extraSpecs, image)
  const pagesize = pagesizeConstraint(extraSpecs, image)
  const vpmems = (extraSpecs['hw:pmem'] ?? '').split(',').filter((l) => l.trim() !== '')
  lockedMemoryConstraint(extraSpecs, image)

  const pinned = cpuPolicy === 'dedicated' || cpuPolicy === 'mixed'
  if (!nodesAsked && !pagesize && vpmems.length === 0 && !pinned) return null
  const pcpus = new Set(cpuPolicy === 'dedicated' ? Array.from({length: vcpus}, (_, i) => i) : (dedicated ?? []))
  const nodes = nodesAsked || 1

  const flavorCpus = cellMappings(extraSpecs, 'hw:numa_cpus')
  const flavorMem = cellMappings(extraSpecs, 'hw:numa_mem')
  let cpuList: BoundedCpuSet[] | null = flavorCpus?.map((s) => parseCpuSpecBounded(s, vcpus)) ?? null
  if (cpuList === null) cpuList = imageCpuSets
  else if (imageCpuSets !== null)
    throw new NumaRequestError(
      'ImageNUMATopologyForbidden',
      "Image property 'hw_numa_cpus' is not permitted to override NUMA configuration set against the flavor",
    )
  let memList: number[] | null = flavorMem?.map(memText) ?? null
  if (memList === null) memList = imageMemList
  else if (imageMemList !== null)
    throw new NumaRequestError(
      'ImageNUMATopologyForbidden',
      "Image property 'hw_numa_mem' is not permitted to override NUMA configuration set against the flavor",
    )

  const cells: InstanceCellRequest[] = []
  const cell = (id: number, cpus: number[], memory: number): InstanceCellRequest => ({
    id,
    cpuset: cpus.filter((c) => !pcpus.has(c)),
    pcpuset: cpus.filter((c) => pcpus.has(c)),
    memory,
    pagesize: pagesize || null,
    cpuPolicy,
    threadPolicy,
  })
  if (cpuList === null && memList === null) {
    if (vcpus % nodes !== 0 || memoryMb % nodes !== 0)
      throw new NumaRequestError(
        'ImageNUMATopologyAsymmetric',
        'Instance CPUs and/or memory cannot be evenly distributed across instance NUMA nodes. Explicit assignment of CPUs and memory to nodes is required',
      )
    const per = Math.trunc(vcpus / nodes)
    for (let i = 0; i < nodes; i++)
      cells.push(
        cell(
          i,
          Array.from({length: per}, (_, k) => i * per + k),
          Math.trunc(memoryMb / nodes),
        ),
      )
  } else if (cpuList !== null && memList !== null) {
    if (cpuList.length !== nodes || memList.length !== nodes)
      throw new NumaRequestError('ImageNUMATopologyIncomplete', 'CPU and memory allocation must be provided for all NUMA nodes')
    const avail = new Set(Array.from({length: vcpus}, (_, i) => i))
    let total = 0
    for (let i = 0; i < nodes; i++) {
      const cpus = cpuList[i] as BoundedCpuSet
      // nova walks each set in iteration order; for these small-int sets that is ascending, and
      // every member beyond the flavor's vCPUs comes after the ones within
      for (const c of cpus.within) {
        if (!avail.has(c)) throw new NumaRequestError('ImageNUMATopologyCPUDuplicates', `CPU number ${c} is assigned to two nodes`)
        avail.delete(c)
      }
      if (cpus.beyond !== null) throw new NumaRequestError('ImageNUMATopologyCPUOutOfRange', `CPU number ${cpus.beyond} is larger than max ${vcpus - 1}`)
      cells.push(cell(i, cpus.within, memList[i] as number))
      total += memList[i] as number
    }
    if (avail.size > 0) throw new NumaRequestError('ImageNUMATopologyCPUsUnassigned', `CPU number ${pySetText(avail)} is not assigned to any node`)
    if (total !== memoryMb) throw new NumaRequestError('ImageNUMATopologyMemoryOutOfRange', `${total} MB of memory assigned, but expected ${memoryMb} MB`)
  } else throw new NumaRequestError('ImageNUMATopologyIncomplete', 'CPU and memory allocation must be provided for all NUMA nodes')
  return {cells, emulatorThreadsIsolated: emu === 'isolate'}
}
