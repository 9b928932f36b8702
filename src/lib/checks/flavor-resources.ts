/**
 * What placement should hold for a stored instance: its flavor (instance_extra.flavor, else the
 * instance row and the flavors table) read through the one flavor -> resources rule
 * (domain/resource-request.ts), with the pinning worked out from what is stored.
 */
import type {CloudModel} from '../domain/model.js'
import type {FlavorObject, InstanceFlavors, InstanceNumaTopology, Parsed} from '../domain/nova-objects.js'
import type {Instance} from '../domain/snapshot.js'
import {type CpuPinning, memEncryptionRequested, resourcesFromFlavor as resourcesOf} from '../domain/resource-request.js'

export type ResourceAmounts = Record<string, number>

export interface ExpectedResources {
  resources: ResourceAmounts
  /** Where the flavor was read from. */
  flavorSource: 'instance_extra.flavor' | 'instances row + flavors table'
  flavorName: string | null
  bootFromVolume: boolean
  cpuPolicy: string | null
}

export type ExpectedResult = {ok: true; value: ExpectedResources} | {ok: false; reason: string}

/** Parse a nova CPU set spec ("0-3,^2", "4,6"): the caret excludes. */
export function parseCpuSpec(spec: string): Set<number> {
  const include = new Set<number>()
  const exclude = new Set<number>()
  for (const raw of spec.split(',')) {
    const part = raw.trim()
    if (part === '') continue
    const neg = part.startsWith('^')
    const body = neg ? part.slice(1) : part
    const m = /^(\d+)(?:-(\d+))?$/.exec(body)
    if (!m) continue
    const lo = Number(m[1])
    const hi = m[2] === undefined ? lo : Number(m[2])
    for (let c = lo; c <= hi; c++) (neg ? exclude : include).add(c)
  }
  for (const c of exclude) include.delete(c)
  return include
}

/** hw:cpu_dedicated_mask / hw:cpu_realtime_mask: a leading caret means "all vCPUs but these". */
export function maskCount(mask: string, vcpus: number): number {
  const m = mask.trim()
  if (m.startsWith('^')) {
    const excluded = parseCpuSpec(m.slice(1).replace(/\^/g, ''))
    let n = 0
    for (let c = 0; c < vcpus; c++) if (!excluded.has(c)) n++
    return n
  }
  return parseCpuSpec(m).size
}

/**
 * The pinning a stored flavor asked for: from the flavor, or from the instance's NUMA topology where
 * an image property asked for it (the image is not stored with the instance).
 */
export function storedPinning(flavor: Pick<FlavorObject, 'vcpus' | 'extra_specs'>, numa?: InstanceNumaTopology | null): CpuPinning {
  const specs = flavor.extra_specs
  const cells = numa?.cells ?? []
  const mask = specs['hw:cpu_dedicated_mask'] ?? specs['hw:cpu_realtime_mask']
  return {
    policy: specs['hw:cpu_policy'] ?? cells.find((c) => c.cpu_policy)?.cpu_policy ?? null,
    mixedPcpus: mask ? maskCount(mask, flavor.vcpus) : cells.reduce((n, c) => n + c.pcpuset.length, 0),
    isolateEmulator:
      specs['hw:emulator_threads_policy'] !== undefined ? specs['hw:emulator_threads_policy'] === 'isolate' : cells.some((c) => c.cpuset_reserved.length > 0),
    threadPolicy: specs['hw:cpu_thread_policy'] ?? null,
  }
}

/** Resources from a stored flavor, as nova requested them from placement: the one rule in domain/resource-request.ts. */
export function resourcesFromFlavor(
  flavor: Pick<FlavorObject, 'vcpus' | 'memory_mb' | 'root_gb' | 'ephemeral_gb' | 'swap' | 'extra_specs'>,
  opts: {bootFromVolume: boolean; numa?: InstanceNumaTopology | null},
): {resources: ResourceAmounts; cpuPolicy: string | null} {
  const pinning = storedPinning(flavor, opts.numa)
  const resources = resourcesOf(flavor, {bootFromVolume: opts.bootFromVolume, pinning, memEncryption: memEncryptionRequested(flavor.extra_specs)})
  return {resources, cpuPolicy: pinning.policy}
}

/** A volume-backed instance has no image_ref (nova compute utils is_volume_backed_instance). */
export const bootsFromVolume = (inst: Instance): boolean => inst.image_ref === null || inst.image_ref === ''

export interface BlobSource {
  model?: CloudModel
  instanceFlavors(inst: Instance): Parsed<InstanceFlavors | null>
  instanceNumaTopology(inst: Instance): Parsed<InstanceNumaTopology | null>
}

/** What placement should hold for a live instance, or why it cannot be said. `src` is a CloudModel or an AuditContext. */
export function expectedResources(src: BlobSource & {model?: CloudModel}, inst: Instance, which: 'cur' | 'old' | 'new' = 'cur'): ExpectedResult {
  const model = (src.model ?? src) as CloudModel
  const parsed = src.instanceFlavors(inst)
  if (!parsed.ok) return {ok: false, reason: `instance_extra.flavor unreadable: ${parsed.error}`}
  const numaParsed = src.instanceNumaTopology(inst)
  const numa = numaParsed.ok ? numaParsed.value : null
  const bfv = bootsFromVolume(inst)
  const blobFlavor = parsed.value ? (parsed.value[which] ?? parsed.value.cur) : null
  if (blobFlavor) {
    const {resources, cpuPolicy} = resourcesFromFlavor(blobFlavor, {bootFromVolume: bfv, numa})
    return {ok: true, value: {resources, flavorSource: 'instance_extra.flavor', flavorName: blobFlavor.name, bootFromVolume: bfv, cpuPolicy}}
  }
  if (inst.vcpus === null || inst.memory_mb === null) return {ok: false, reason: 'no flavor blob and no vcpus/memory_mb on the instance row'}
  const row = inst.instance_type_id === null ? undefined : model.flavorsById.get(inst.instance_type_id)
  const {resources, cpuPolicy} = resourcesFromFlavor(
    {
      vcpus: inst.vcpus,
      memory_mb: inst.memory_mb,
      root_gb: inst.root_gb ?? 0,
      ephemeral_gb: inst.ephemeral_gb ?? 0,
      swap: row?.swap ?? 0,
      extra_specs: row?.extra_specs ?? {},
    },
    {bootFromVolume: bfv, numa},
  )
  return {ok: true, value: {resources, flavorSource: 'instances row + flavors table', flavorName: row?.name ?? null, bootFromVolume: bfv, cpuPolicy}}
}
