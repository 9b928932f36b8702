/**
 * What placement should hold for an instance, computed from its flavor the way nova's scheduler
 * utils do (ResourceRequest.from_request_spec / resources_from_flavor): `resources[$S]:RC` extra
 * specs override, hw:cpu_policy=dedicated turns VCPU into PCPU, mixed splits them, an isolated
 * emulator thread adds one PCPU, DISK_GB = ephemeral + swap (MB, rounded up to GB) + root unless the
 * instance boots from volume, and zero amounts are dropped.
 */
import type {CloudModel} from '../domain/model.js'
import type {FlavorObject, InstanceFlavors, InstanceNumaTopology, Parsed} from '../domain/nova-objects.js'
import type {Instance} from '../domain/snapshot.js'

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

// nova ResourceRequest.XS_KEYPAT
const XS_KEY = /^(resources)([1-9][0-9]*|_[a-zA-Z0-9_-]{1,64})?:(.+)$/

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

/** Resources from a flavor, as nova requests them from placement. */
export function resourcesFromFlavor(
  flavor: Pick<FlavorObject, 'vcpus' | 'memory_mb' | 'root_gb' | 'ephemeral_gb' | 'swap' | 'extra_specs'>,
  opts: {bootFromVolume: boolean; numa?: InstanceNumaTopology | null},
): {resources: ResourceAmounts; cpuPolicy: string | null} {
  const specs = flavor.extra_specs
  const res: ResourceAmounts = {}
  for (const [key, value] of Object.entries(specs)) {
    const m = XS_KEY.exec(key)
    if (!m) continue
    const amount = Number.parseInt(value, 10)
    if (!Number.isFinite(amount)) continue
    const rc = m[3]
    res[rc] = (res[rc] ?? 0) + amount
  }
  const cells = opts.numa?.cells ?? []
  // An image property (hw_cpu_policy) can ask for pinning too; the instance's NUMA topology records it.
  const cpuPolicy = specs['hw:cpu_policy'] ?? cells.find((c) => c.cpu_policy)?.cpu_policy ?? null
  const explicitCpu = 'VCPU' in res || 'PCPU' in res
  if (!explicitCpu && (cpuPolicy === 'dedicated' || cpuPolicy === 'mixed')) {
    let pcpus = flavor.vcpus
    if (cpuPolicy === 'mixed') {
      const mask = specs['hw:cpu_dedicated_mask'] ?? specs['hw:cpu_realtime_mask']
      pcpus = mask ? maskCount(mask, flavor.vcpus) : cells.reduce((n, c) => n + c.pcpuset.length, 0)
      res.VCPU = flavor.vcpus - pcpus
    }
    const isolate =
      specs['hw:emulator_threads_policy'] !== undefined ? specs['hw:emulator_threads_policy'] === 'isolate' : cells.some((c) => c.cpuset_reserved.length > 0)
    if (isolate) pcpus += 1
    res.PCPU = pcpus
  }
  if (!('VCPU' in res) && !('PCPU' in res)) res.VCPU = flavor.vcpus
  if (!('MEMORY_MB' in res)) res.MEMORY_MB = flavor.memory_mb
  if (!('DISK_GB' in res)) {
    let disk = flavor.ephemeral_gb + Math.ceil(flavor.swap / 1024)
    if (!opts.bootFromVolume) disk += flavor.root_gb
    res.DISK_GB = disk
  }
  for (const k of Object.keys(res)) if (!res[k]) delete res[k]
  return {resources: res, cpuPolicy}
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
