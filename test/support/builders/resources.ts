/** Builder family: what a flavor asks placement for, as nova derives it (cpu sets, resources:* overrides). */
import {memEncryptionRequested, resourcesFromFlavor} from '../../../src/lib/domain/resource-request.js'
import {type Flavor} from '../../../src/lib/domain/snapshot.js'

// ---------------------------------------------------------------- resources

/** Parse a nova CPU set spec ("0-3,^2", "4,6"). */
export function parseCpuSet(spec: string): number[] {
  const inc = new Set<number>()
  const exc = new Set<number>()
  for (const raw of spec.split(',')) {
    const p = raw.trim()
    if (!p) continue
    const neg = p.startsWith('^')
    const m = /^(\d+)(?:-(\d+))?$/.exec(neg ? p.slice(1) : p)
    if (!m) throw new Error(`bad CPU set spec ${spec}`)
    const hi = m[2] === undefined ? Number(m[1]) : Number(m[2])
    for (let c = Number(m[1]); c <= hi; c++) (neg ? exc : inc).add(c)
  }
  return [...inc].filter((c) => !exc.has(c)).sort((a, b) => a - b)
}

/** Dedicated vCPU ids of a mixed-policy flavor (hw:cpu_dedicated_mask; '^0' = all but vCPU 0). */
export function dedicatedVcpus(mask: string, vcpus: number): number[] {
  const m = mask.trim()
  if (m.startsWith('^')) {
    const excluded = new Set(parseCpuSet(m.slice(1).replace(/\^/g, '')))
    const out: number[] = []
    for (let c = 0; c < vcpus; c++) if (!excluded.has(c)) out.push(c)
    return out
  }
  return parseCpuSet(m).filter((c) => c < vcpus)
}

export interface FlavorResources {
  /** resource class name -> amount, zero amounts dropped */
  resources: Record<string, number>
  cpuPolicy: 'shared' | 'dedicated' | 'mixed'
  /** vCPU ids pinned (dedicated or the mixed mask) */
  dedicated: number[]
  isolateEmulator: boolean
}

/** What nova asks placement for, for a flavor: the one rule (domain/resource-request.ts), with the pinned vCPU ids the builders need. */
export function flavorResources(f: Flavor, bootFromVolume: boolean): FlavorResources {
  const specs = f.extra_specs
  const policy = (specs['hw:cpu_policy'] ?? 'shared') as FlavorResources['cpuPolicy']
  const isolate = specs['hw:emulator_threads_policy'] === 'isolate' && policy !== 'shared'
  let dedicated: number[] = []
  if (policy === 'dedicated') dedicated = Array.from({length: f.vcpus}, (_, i) => i)
  else if (policy === 'mixed') {
    const mask = specs['hw:cpu_dedicated_mask'] ?? specs['hw:cpu_realtime_mask']
    if (!mask) throw new Error(`flavor ${f.name}: hw:cpu_policy=mixed needs hw:cpu_dedicated_mask`)
    dedicated = dedicatedVcpus(mask, f.vcpus)
  }
  const resources = resourcesFromFlavor(f, {
    bootFromVolume,
    pinning: {policy, mixedPcpus: dedicated.length, isolateEmulator: isolate},
    memEncryption: memEncryptionRequested(specs),
  })
  return {resources, cpuPolicy: policy, dedicated, isolateEmulator: isolate}
}
