/**
 * Stage 7: weighers (nova/scheduler/weights/*.py) and nova's weight handler (nova/weights.py):
 * each weigher's raw values are normalised to 0..1 over the hosts (all equal -> all 0), multiplied
 * by the host's multiplier (config, overridden by the lowest per-aggregate value), summed, and the
 * hosts sorted by total, descending and stable. A single host is not weighed.
 */
import type {SchedulerConfig} from './config.js'
import {aggregateNumber, type HostState} from './host-state.js'
import type {RequestSpec} from './request.js'

export interface Weigher {
  name: string
  /** nova.conf option, also the per-aggregate metadata key. */
  option: keyof SchedulerConfig & string
  /** BuildFailureWeigher negates its multiplier. */
  negateMultiplier?: boolean
  raw(hs: HostState, spec: RequestSpec): number
}

const PCI_MAX_DEVS = 100

function groupMembersOn(hs: HostState, spec: RequestSpec, policy: string): number {
  const g = spec.group
  if (!g || g.policy !== policy) return 0
  let n = 0
  for (const u of hs.instances) if (g.members.has(u)) n++
  return n
}

export const WEIGHERS: Record<string, Weigher> = {
  RAMWeigher: {name: 'RAMWeigher', option: 'ram_weight_multiplier', raw: (hs) => hs.freeRamMb},
  CPUWeigher: {name: 'CPUWeigher', option: 'cpu_weight_multiplier', raw: (hs) => hs.vcpusTotal * hs.cpuAllocationRatio - hs.vcpusUsed},
  DiskWeigher: {name: 'DiskWeigher', option: 'disk_weight_multiplier', raw: (hs) => hs.freeDiskMb},
  IoOpsWeigher: {name: 'IoOpsWeigher', option: 'io_ops_weight_multiplier', raw: (hs) => hs.numIoOps},
  PCIWeigher: {
    name: 'PCIWeigher',
    option: 'pci_weight_multiplier',
    raw: (hs) => PCI_MAX_DEVS - Math.min(hs.pciPools.reduce((n, p) => n + p.count, 0), PCI_MAX_DEVS - 1),
  },
  ServerGroupSoftAffinityWeigher: {name: 'ServerGroupSoftAffinityWeigher', option: 'soft_affinity_weight_multiplier', raw: (hs, spec) => groupMembersOn(hs, spec, 'soft-affinity')},
  ServerGroupSoftAntiAffinityWeigher: {
    name: 'ServerGroupSoftAntiAffinityWeigher',
    option: 'soft_anti_affinity_weight_multiplier',
    raw: (hs, spec) => -groupMembersOn(hs, spec, 'soft-anti-affinity'),
  },
  BuildFailureWeigher: {name: 'BuildFailureWeigher', option: 'build_failure_weight_multiplier', negateMultiplier: true, raw: (hs) => hs.failedBuilds},
  // A boot has no requested_destination cell with allow_cross_cell_move: always 0.
  CrossCellWeigher: {name: 'CrossCellWeigher', option: 'cross_cell_move_weight_multiplier', raw: () => 0},
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

/** nova.weights.normalize */
export function normalize(values: number[]): number[] {
  if (values.length === 0) return []
  let min = Infinity
  let max = -Infinity
  for (const v of values) {
    if (v < min) min = v
    if (v > max) max = v
  }
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
  /** Filled only when `explain` is asked (costly on big clouds). */
  parts?: WeightPart[]
}

/** get_weighed_objects: returns hosts sorted by weight, descending, stable. */
export function weighHosts(hosts: HostState[], spec: RequestSpec, weighers: Weigher[], cfg: SchedulerConfig, explain = false): WeighedHost[] {
  const n = hosts.length
  const totals = new Float64Array(n)
  const parts: WeightPart[][] | null = explain ? hosts.map(() => []) : null
  if (n > 1) {
    const raw = new Array<number>(n)
    for (const w of weighers) {
      for (let i = 0; i < n; i++) raw[i] = w.raw(hosts[i] as HostState, spec)
      const norm = normalize(raw)
      for (let i = 0; i < n; i++) {
        const nv = norm[i] as number
        const m = multiplierFor(w, hosts[i] as HostState, cfg)
        const score = m * nv
        totals[i] = (totals[i] as number) + score
        if (parts) (parts[i] as WeightPart[]).push({weigher: w.name, raw: raw[i] as number, normalized: nv, multiplier: m, score})
      }
    }
  }
  const order = Array.from({length: n}, (_, i) => i)
  order.sort((a, b) => (totals[b] as number) - (totals[a] as number) || a - b)
  return order.map((i) => ({hs: hosts[i] as HostState, weight: totals[i] as number, parts: parts ? (parts[i] as WeightPart[]) : undefined}))
}
