/**
 * Stage 7: weighers (nova/scheduler/weights/*.py) and nova's weight handler (nova/weights.py):
 * each weigher's raw values are clamped to its minval/maxval and normalised to 0..1 over the hosts
 * (bounds: minval/maxval when the weigher sets them, else the values' min/max; equal bounds -> all 0), multiplied
 * by the host's multiplier (config, overridden by the lowest per-aggregate value), summed, and the
 * hosts sorted by total, descending and stable. A single host is not weighed.
 */
import type {SchedulerConfig} from './config.js'
import {ConfigError} from '../errors.js'
import {aggregateNumber, type HostState} from './host-state.js'
import type {RequestSpec} from './request-spec.js'

export interface Weigher {
  name: string
  /** nova.conf option, also the per-aggregate metadata key. */
  option: keyof SchedulerConfig & string
  /** BuildFailureWeigher negates its multiplier. */
  negateMultiplier?: boolean
  /**
   * BaseWeigher.minval / maxval: raw values are clamped to them and normalisation uses them instead
   * of the hosts' min / max (RAM, CPU, Disk and IoOps weighers set minval = 0).
   */
  minval?: number
  maxval?: number
  raw(hs: HostState, spec: RequestSpec, cfg: SchedulerConfig): number
}

const PCI_MAX_DEVS = 100

function groupMembersOn(hs: HostState, spec: RequestSpec, policy: string): number {
  const g = spec.group
  if (!g || g.policy !== policy) return 0
  let n = 0
  for (const u of hs.instances) if (g.members.has(u)) n++
  return n
}

/**
 * ImagePropertiesWeigher._weigh_object: how many (property, value) pairs of the instances already
 * on the host match the requested image's, each counted once per instance carrying it, scaled by
 * the property's ratio in image_props_weight_setting when that is set (a property it does not
 * name counts 0). Nothing is looked at while the global multiplier is 0, as nova skips the work.
 */
export function imagePropsWeight(requested: Record<string, string>, existing: Array<Record<string, string>>, setting: Record<string, number>): number {
  const pairs = new Map<string, number>()
  for (const props of existing) for (const [k, v] of Object.entries(props)) pairs.set(`${k}\u0000${v}`, (pairs.get(`${k}\u0000${v}`) ?? 0) + 1)
  const bySetting = Object.keys(setting).length > 0
  let weight = 0
  for (const [k, v] of Object.entries(requested)) {
    const n = pairs.get(`${k}\u0000${v}`)
    if (n === undefined) continue
    weight += bySetting ? (setting[k] ?? 0) * n : n
  }
  return weight
}

export const WEIGHERS: Record<string, Weigher> = {
  RAMWeigher: {name: 'RAMWeigher', option: 'ram_weight_multiplier', minval: 0, raw: (hs) => hs.freeRamMb},
  CPUWeigher: {name: 'CPUWeigher', option: 'cpu_weight_multiplier', minval: 0, raw: (hs) => hs.vcpusTotal * hs.cpuAllocationRatio - hs.vcpusUsed},
  DiskWeigher: {name: 'DiskWeigher', option: 'disk_weight_multiplier', minval: 0, raw: (hs) => hs.freeDiskMb},
  IoOpsWeigher: {name: 'IoOpsWeigher', option: 'io_ops_weight_multiplier', minval: 0, raw: (hs) => hs.numIoOps},
  PCIWeigher: {
    name: 'PCIWeigher',
    option: 'pci_weight_multiplier',
    raw: (hs) =>
      PCI_MAX_DEVS -
      Math.min(
        hs.pciPools.reduce((n, p) => n + p.count, 0),
        PCI_MAX_DEVS - 1,
      ),
  },
  ServerGroupSoftAffinityWeigher: {
    name: 'ServerGroupSoftAffinityWeigher',
    option: 'soft_affinity_weight_multiplier',
    raw: (hs, spec) => groupMembersOn(hs, spec, 'soft-affinity'),
  },
  ServerGroupSoftAntiAffinityWeigher: {
    name: 'ServerGroupSoftAntiAffinityWeigher',
    option: 'soft_anti_affinity_weight_multiplier',
    // 0 - n, not -n: no member gives 0, not -0
    raw: (hs, spec) => 0 - groupMembersOn(hs, spec, 'soft-anti-affinity'),
  },
  BuildFailureWeigher: {name: 'BuildFailureWeigher', option: 'build_failure_weight_multiplier', negateMultiplier: true, raw: (hs) => hs.failedBuilds},
  // A boot has no requested_destination cell with allow_cross_cell_move: always 0.
  CrossCellWeigher: {name: 'CrossCellWeigher', option: 'cross_cell_move_weight_multiplier', raw: () => 0},
  // 2025.1 (nova 31). No minval: the hosts' own min / max bound the normalisation.
  HypervisorVersionWeigher: {name: 'HypervisorVersionWeigher', option: 'hypervisor_version_weight_multiplier', raw: (hs) => hs.hypervisorVersion || 0},
  NumInstancesWeigher: {name: 'NumInstancesWeigher', option: 'num_instances_weight_multiplier', raw: (hs) => hs.numInstances},
  ImagePropertiesWeigher: {
    name: 'ImagePropertiesWeigher',
    option: 'image_props_weight_multiplier',
    raw(hs, spec, cfg) {
      // nova tests the global option, not the per-aggregate multiplier
      if (cfg.image_props_weight_multiplier === 0) return 0
      if (hs.instanceImageProps === undefined) {
        throw new ConfigError(
          `ImagePropertiesWeigher with image_props_weight_multiplier=${cfg.image_props_weight_multiplier} weighs the image properties of the instances on each host, which cloudctl does not capture`,
          'Set image_props_weight_multiplier to 0 (its default) or drop ImagePropertiesWeigher from weight_classes for the simulation.',
        )
      }
      return imagePropsWeight(spec.image.properties, hs.instanceImageProps, cfg.image_props_weight_setting)
    },
  },
}

export function resolveWeighers(names: string[]): {weighers: Weigher[]; unknown: string[]} {
  const weighers: Weigher[] = []
  const unknown: string[] = []
  for (const raw of names) {
    const w = WEIGHERS[raw.split('.').pop() as string]
    if (w) weighers.push(w)
    else unknown.push(raw)
  }
  return {weighers, unknown}
}

export function multiplierFor(w: Weigher, hs: HostState, cfg: SchedulerConfig): number {
  const m = hs.aggregates.length === 0 ? (cfg[w.option] as number) : aggregateNumber(hs, w.option, cfg[w.option] as number).value
  return w.negateMultiplier ? -m : m
}

/** nova.weights.normalize: scaled to 0..1 by the given bounds, else the values' own min / max; all equal -> 0. */
export function normalize(values: number[], minval?: number, maxval?: number): number[] {
  if (values.length === 0) return []
  let min = Infinity
  let max = -Infinity
  for (const v of values) {
    if (v < min) min = v
    if (v > max) max = v
  }
  if (minval !== undefined) min = minval
  if (maxval !== undefined) max = maxval
  if (min === max) return values.map(() => 0)
  const range = max - min
  return values.map((v) => (v - min) / range)
}

export interface WeightPart {
  weigher: string
  raw: number
  normalized: number
  multiplier: number
  score: number
}

export interface WeighedHost {
  hs: HostState
  weight: number
  /** Only when `explain` is asked; computed on first read (a big cloud weighs thousands of hosts, a report shows a few). */
  parts?: WeightPart[]
}

/**
 * Multipliers of the hosts sharing an aggregates array, for one list of weighers and multiplier
 * values (the fingerprint: a config object may be edited between calls).
 */
const multiplierCache = new WeakMap<object, {fingerprint: string; values: Float64Array}>()

function multipliersOf(hs: HostState, weighers: Weigher[], cfg: SchedulerConfig, fingerprint: string, plain: Float64Array): Float64Array {
  if (hs.aggregates.length === 0) return plain
  const hit = multiplierCache.get(hs.aggregates)
  if (hit && hit.fingerprint === fingerprint) return hit.values
  const values = new Float64Array(weighers.length)
  weighers.forEach((w, k) => (values[k] = multiplierFor(w, hs, cfg)))
  multiplierCache.set(hs.aggregates, {fingerprint, values})
  return values
}

class ExplainedHost implements WeighedHost {
  private built: WeightPart[] | null = null
  constructor(
    readonly hs: HostState,
    readonly weight: number,
    private readonly i: number,
    private readonly n: number,
    private readonly weighers: Weigher[],
    private readonly raw: Float64Array,
    private readonly norm: Float64Array,
    private readonly mult: Float64Array,
  ) {}

  get parts(): WeightPart[] {
    if (this.built) return this.built
    this.built = this.weighers.map((w, k) => {
      const j = k * this.n + this.i
      const normalized = this.norm[j] as number
      const multiplier = this.mult[j] as number
      return {weigher: w.name, raw: this.raw[j] as number, normalized, multiplier, score: multiplier * normalized}
    })
    return this.built
  }

  toJSON(): WeighedHost {
    return {hs: this.hs, weight: this.weight, parts: this.parts}
  }
}

/** get_weighed_objects: returns hosts sorted by weight, descending, stable. */
export function weighHosts(hosts: HostState[], spec: RequestSpec, weighers: Weigher[], cfg: SchedulerConfig, explain = false): WeighedHost[] {
  const n = hosts.length
  const W = weighers.length
  const totals = new Float64Array(n)
  // weigher k, host i at [k * n + i]
  const raws = new Float64Array(n > 1 ? n * W : 0)
  const norms = new Float64Array(n > 1 ? n * W : 0)
  const mults = new Float64Array(n > 1 ? n * W : 0)
  if (n > 1) {
    const raw = new Array<number>(n)
    const fingerprint = weighers.map((w) => `${w.name}=${String(cfg[w.option])}`).join(',')
    const plain = new Float64Array(weighers.length)
    weighers.forEach((w, k) => (plain[k] = w.negateMultiplier ? -(cfg[w.option] as number) : (cfg[w.option] as number)))
    for (let i = 0; i < n; i++) {
      const m = multipliersOf(hosts[i] as HostState, weighers, cfg, fingerprint, plain)
      for (let k = 0; k < W; k++) mults[k * n + i] = m[k] as number
    }
    for (let k = 0; k < W; k++) {
      const w = weighers[k] as Weigher
      for (let i = 0; i < n; i++) {
        let v = w.raw(hosts[i] as HostState, spec, cfg)
        if (w.minval !== undefined && v < w.minval) v = w.minval
        if (w.maxval !== undefined && v > w.maxval) v = w.maxval
        raw[i] = v
      }
      const norm = normalize(raw, w.minval, w.maxval)
      for (let i = 0; i < n; i++) {
        const j = k * n + i
        const nv = norm[i] as number
        raws[j] = raw[i] as number
        norms[j] = nv
        totals[i] = (totals[i] as number) + (mults[j] as number) * nv
      }
    }
  }
  const order = Array.from({length: n}, (_, i) => i)
  order.sort((a, b) => (totals[b] as number) - (totals[a] as number) || a - b)
  if (!explain) return order.map((i) => ({hs: hosts[i] as HostState, weight: totals[i] as number}))
  if (n <= 1) return order.map((i) => ({hs: hosts[i] as HostState, weight: totals[i] as number, parts: []}))
  return order.map((i) => new ExplainedHost(hosts[i] as HostState, totals[i] as number, i, n, weighers, raws, norms, mults))
}
