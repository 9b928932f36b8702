/**
 * What an instance asks placement for, derived from its flavor the way nova's scheduler utils do
 * (ResourceRequest.from_request_spec; resources_from_flavor is its merged form). The one copy of
 * the rule: the scheduler simulation (engine/request.ts), the audit's leak checks and the heal
 * repair (checks/flavor-resources.ts) and the capacity planner all build their answer here, so
 * `simulate boot`, `audit` and `repair leaks --heal` cannot disagree about what an instance holds.
 */
import {STANDARD_RESOURCE_CLASSES} from './resource-classes.js'
import {boolFromString} from './strutils.js'

/** nova's ResourceRequest.XS_KEYPAT: `resources[$S]:<class>` and `trait[$S]:<name>`, any suffix. */
export const XS_KEYPAT = /^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$/

const STANDARD = new Set<string>(STANDARD_RESOURCE_CLASSES)

/** RequestGroup.add_resource accepts CUSTOM_* and the standard classes; anything else is logged and dropped. */
export const isRequestableResourceClass = (rc: string): boolean => rc.startsWith('CUSTOM_') || STANDARD.has(rc)

/**
 * An extra spec amount as nova reads it: Python's int() of the string (surrounding whitespace, a
 * sign and digit-separating underscores allowed) and then non-negative. null when nova would log
 * "Resource amounts must be nonnegative integers" and drop the key.
 */
export function parseResourceAmount(value: string | number): number | null {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : null
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(value)
  if (!m) return null
  const n = Number((m[2] as string).replace(/_/g, ''))
  if (m[1] === '-' && n !== 0) return null
  return n
}

/**
 * hw:mem_encryption (flavor) or hw_mem_encryption (image) asks for one MEM_ENCRYPTION_CONTEXT
 * (_translate_memory_encryption; the API has already refused a flavor and image that contradict).
 */
export const memEncryptionRequested = (specs: Record<string, string>, imageProperties: Record<string, string> = {}): boolean =>
  boolFromString(specs['hw:mem_encryption']) || boolFromString(imageProperties.hw_mem_encryption)

/** One request group: '' is the unsuffixed group (use_same_provider=False), any other suffix a granular one. */
export interface RequestGroup {
  suffix: string
  /** resource class name -> amount */
  resources: Map<string, number>
  required: Set<string>
  forbidden: Set<string>
}

export const newRequestGroup = (suffix: string): RequestGroup => ({suffix, resources: new Map(), required: new Set(), forbidden: new Set()})

/** The flavor fields the request is computed from (a FlavorObject, a flavors row, an instance row). */
export interface FlavorAmounts {
  vcpus: number
  memory_mb: number
  root_gb: number | null
  ephemeral_gb: number | null
  swap: number
  extra_specs: Record<string, string>
}

/**
 * The CPU pinning the request asks for (_translate_pinning_policies). Callers resolve it from what
 * they have: the engine from the flavor, the image and the guest NUMA topology it builds; the checks
 * from the stored flavor and the instance's NUMA topology.
 */
export interface CpuPinning {
  /** hw:cpu_policy (or hw_cpu_policy): 'dedicated' and 'mixed' ask for PCPU. */
  policy: string | null
  /** mixed: how many vCPUs are dedicated (the dedicated or realtime mask). */
  mixedPcpus: number
  /** hw:emulator_threads_policy=isolate: one more PCPU. */
  isolateEmulator: boolean
  /** hw:cpu_thread_policy: isolate forbids HW_CPU_HYPERTHREADING, require requires it. */
  threadPolicy?: string | null
}

export interface RequestOptions<G extends RequestGroup> {
  /** A volume-backed instance does not ask for its root disk. */
  bootFromVolume: boolean
  pinning?: CpuPinning | null
  /** Traits the image requires (_process_image_meta), added after the extra specs were counted. */
  imageTraits?: Iterable<string>
  /** hw:mem_encryption (or the image's): one MEM_ENCRYPTION_CONTEXT. */
  memEncryption?: boolean
  /** Further required traits of the unsuffixed group nova derives from the flavor and image (PCI NUMA socket, secure boot). */
  requiredTraits?: Iterable<string>
  /** Group factory, for callers whose groups carry more (the engine's aggregates and in_tree). */
  newGroup?: (suffix: string) => G
}

/** The request groups being built, with the warnings nova would log while building them. */
export class ResourceRequest<G extends RequestGroup = RequestGroup> {
  readonly groups = new Map<string, G>()
  readonly warnings: string[] = []
  policy: 'none' | 'isolate' | null = null
  /** Suffixed groups the flavor's extra specs made (suffixed_groups_from_flavor). */
  suffixedFromFlavor = 0

  constructor(private readonly makeGroup: (suffix: string) => G) {}

  group(suffix: string): G {
    let g = this.groups.get(suffix)
    if (!g) this.groups.set(suffix, (g = this.makeGroup(suffix)))
    return g
  }

  /** RequestGroup.add_resource: the class is checked first, then the amount; within a group the last value wins. */
  addResource(rc: string, amount: string | number, suffix = ''): void {
    const g = this.group(suffix)
    if (!isRequestableResourceClass(rc)) {
      this.warnings.push(`invalid resource class ${rc} ignored (nova logs "Received an invalid ResourceClass")`)
      return
    }
    const n = parseResourceAmount(amount)
    if (n === null) {
      this.warnings.push(`resources${suffix}:${rc}=${amount} ignored (not a non-negative integer)`)
      return
    }
    g.resources.set(rc, n)
  }

  addTrait(t: string, kind: string, suffix = ''): void {
    const g = this.group(suffix)
    if (kind === 'required') g.required.add(t)
    else if (kind === 'forbidden') g.forbidden.add(t)
    else this.warnings.push(`trait ${t}=${kind} ignored (only required|forbidden)`)
  }

  suffixedCount(): number {
    let n = 0
    for (const s of this.groups.keys()) if (s !== '') n++
    return n
  }

  /** _process_extra_specs: resources[$S], trait[$S] and group_policy. */
  processExtraSpecs(specs: Record<string, string>): void {
    for (const [key, val] of Object.entries(specs)) {
      if (key === 'group_policy') {
        if (val === 'none' || val === 'isolate') this.policy = val
        else this.warnings.push(`invalid group_policy ${val} ignored`)
        continue
      }
      const m = XS_KEYPAT.exec(key)
      if (!m) continue
      const suffix = m[2] ?? ''
      if (m[1] === 'resources') this.addResource(m[3] as string, val, suffix)
      else this.addTrait(m[3] as string, val, suffix)
    }
  }

  /** _translate_pinning_policies: dedicated / mixed CPUs as PCPU, thread policies as a trait. */
  translatePinning(vcpus: number, pin: CpuPinning): void {
    let pcpus = 0
    if (pin.policy === 'dedicated') pcpus = vcpus
    if (pin.policy === 'mixed') {
      pcpus = pin.mixedPcpus
      this.addResource('VCPU', vcpus - pcpus)
    }
    if (pin.policy === 'dedicated' || pin.policy === 'mixed') {
      if (pin.isolateEmulator) pcpus += 1
      this.addResource('PCPU', pcpus)
    }
    if (pin.threadPolicy === 'isolate') this.addTrait('HW_CPU_HYPERTHREADING', 'forbidden')
    if (pin.threadPolicy === 'require') this.addTrait('HW_CPU_HYPERTHREADING', 'required')
  }

  /** The flavor's own VCPU / MEMORY_MB / DISK_GB, each only where no group already asks for it. */
  addFlavorAmounts(flavor: FlavorAmounts, bootFromVolume: boolean): void {
    const merged = this.merged()
    if (!('VCPU' in merged) && !('PCPU' in merged)) this.addResource('VCPU', flavor.vcpus)
    if (!('MEMORY_MB' in merged)) this.addResource('MEMORY_MB', flavor.memory_mb)
    if (!('DISK_GB' in merged)) {
      // swap is in MB, rounded up to whole GB (compute_utils.convert_mb_to_ceil_gb)
      let disk = (flavor.ephemeral_gb ?? 0) + Math.ceil(flavor.swap / 1024)
      if (!bootFromVolume) disk += flavor.root_gb ?? 0
      if (disk) this.addResource('DISK_GB', disk)
    }
  }

  /** strip_zeros: zero amounts go, then groups left asking for nothing. */
  stripZeros(): void {
    for (const [suffix, g] of [...this.groups]) {
      for (const [rc, n] of [...g.resources]) if (n === 0) g.resources.delete(rc)
      if (g.resources.size === 0 && g.required.size === 0 && g.forbidden.size === 0) this.groups.delete(suffix)
    }
  }

  /** merged_resources: the amounts of every group added up per class. */
  merged(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const g of this.groups.values()) for (const [rc, n] of g.resources) out[rc] = (out[rc] ?? 0) + n
    return out
  }
}

/** ResourceRequest.from_request_spec for a flavor (and what the caller knows of the image and pinning). */
export function buildResourceRequest<G extends RequestGroup = RequestGroup>(flavor: FlavorAmounts, opts: RequestOptions<G>): ResourceRequest<G> {
  const req = new ResourceRequest<G>(opts.newGroup ?? (newRequestGroup as unknown as (suffix: string) => G))
  req.processExtraSpecs(flavor.extra_specs)
  req.suffixedFromFlavor = req.suffixedCount()
  for (const t of opts.imageTraits ?? []) req.addTrait(t, 'required')
  if (opts.pinning) req.translatePinning(flavor.vcpus, opts.pinning)
  req.addFlavorAmounts(flavor, opts.bootFromVolume)
  if (opts.memEncryption) req.addResource('MEM_ENCRYPTION_CONTEXT', 1)
  for (const t of opts.requiredTraits ?? []) req.addTrait(t, 'required')
  req.stripZeros()
  return req
}

/** resources_from_flavor: what placement should hold for an instance of this flavor, all groups merged. */
export function resourcesFromFlavor(flavor: FlavorAmounts, opts: Omit<RequestOptions<RequestGroup>, 'newGroup'>): Record<string, number> {
  return buildResourceRequest(flavor, opts).merged()
}
