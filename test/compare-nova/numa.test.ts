/**
 * cloudctl's NUMA fitting against nova's own hardware.numa_get_constraints and
 * numa_fit_instance_to_host on random host topologies and flavors, for Zed (python3-nova 26) and
 * 2025.1 (nova 31 in the chroot of test/releases), the engine set to each release.
 * Skipped when /usr/bin/python3 cannot import nova (driver.ts).
 */
import {describe, expect, it} from 'vitest'

import type {HostNumaCell, HostNumaTopology} from '../../src/lib/domain/nova-objects.js'
import type {EngineRelease} from '../../src/lib/engine/config.js'
import {fitInstanceToHost, instanceTopologyFor} from '../../src/lib/engine/numa.js'
import {COMPARE, COMPARE_RELEASES, runNova, seeded} from './driver.js'

interface Case {
  host: HostNumaTopology
  flavor: {vcpus: number; memory_mb: number; extra_specs: Record<string, string>}
  limits: {cpu: number; ram: number} | null
  packing: boolean
}

interface NovaOutcome {
  error?: string
  raised?: string
  constraints?: Array<{cpuset: number[]; pcpuset: number[]; memory: number}> | null
  fit?: Array<{id: number; pinning: Record<string, number>; reserved: number[]}> | null
}

/** Host cells numbered as Linux numbers them: thread siblings are (core, core + cores of the host). */
function randomHost(r: ReturnType<typeof seeded>): HostNumaTopology {
  const cellsN = 1 + r.int(3)
  const coresPerCell = 2 + r.int(3)
  const threads = r.pick([1, 2])
  const hostCores = cellsN * coresPerCell
  const mode = r.pick(['dedicated', 'shared', 'both-same', 'split'] as const)
  const cells: HostNumaCell[] = []
  for (let id = 0; id < cellsN; id++) {
    const siblings: number[][] = []
    for (let k = 0; k < coresPerCell; k++) {
      const core = id * coresPerCell + k
      siblings.push(threads === 2 ? [core, core + hostCores] : [core])
    }
    const cpus = siblings.flat().sort((a, b) => a - b)
    let pcpuset = cpus
    let cpuset: number[] = []
    if (mode === 'shared') [pcpuset, cpuset] = [[], cpus]
    if (mode === 'both-same') cpuset = cpus
    if (mode === 'split') {
      // first core shared, the rest dedicated
      const first = new Set(siblings[0])
      cpuset = cpus.filter((c) => first.has(c))
      pcpuset = cpus.filter((c) => !first.has(c))
    }
    const pinned = pcpuset.filter(() => r.chance(0.3))
    const memory = r.pick([4096, 8192, 16384])
    const large = r.chance(0.4) ? r.pick([0, 256, 1024]) : null
    const smallTotal = ((memory - (large ?? 0) * 2) * 1024) / 4
    const mempages = [{size_kb: 4, total: smallTotal, used: r.chance(0.5) ? r.int(smallTotal) : 0, reserved: 0}]
    if (large !== null) mempages.push({size_kb: 2048, total: large, used: r.int(large + 1), reserved: 0})
    cells.push({
      id,
      cpuset,
      pcpuset,
      memory,
      cpu_usage: cpuset.length > 0 ? r.int(cpuset.length * 3) : 0,
      memory_usage: r.chance(0.5) ? r.int(memory) : 0,
      pinned_cpus: pinned,
      siblings: siblings.map((s) => s.filter((c) => pcpuset.includes(c) || cpuset.includes(c))).filter((s) => s.length > 0),
      mempages,
      socket: 0,
      version: '1.5',
    })
  }
  return {version: '1.2', cells}
}

function randomFlavor(r: ReturnType<typeof seeded>): Case['flavor'] {
  const vcpus = 1 + r.int(6)
  const nodes = r.pick([null, null, '1', '2'])
  const memory_mb = r.pick([512, 1024, 2048, 4096, 6144]) * (nodes === '2' ? 2 : 1)
  const extra_specs: Record<string, string> = {}
  const policy = r.pick([null, 'dedicated', 'dedicated', 'shared', 'mixed'])
  if (policy) extra_specs['hw:cpu_policy'] = policy
  if (policy === 'mixed') extra_specs['hw:cpu_dedicated_mask'] = vcpus > 1 ? `1-${vcpus - 1}` : '0'
  // mostly valid combinations; now and then one nova refuses (thread/emulator policy on a shared guest)
  if (policy === 'dedicated' || policy === 'mixed' ? r.chance(0.5) : r.chance(0.05))
    extra_specs['hw:cpu_thread_policy'] = r.pick(['prefer', 'isolate', 'require'])
  if (policy === 'dedicated' || policy === 'mixed' ? r.chance(0.3) : r.chance(0.05)) extra_specs['hw:emulator_threads_policy'] = 'isolate'
  if (nodes) extra_specs['hw:numa_nodes'] = nodes
  if (r.chance(0.2)) extra_specs['hw:mem_page_size'] = r.pick(['small', 'large', 'any', '2048'])
  // topologies nova implies (explicit PCPU / VCPU, the hyperthreading trait, vPMEM, realtime)
  if (!policy && r.chance(0.15)) extra_specs['resources:PCPU'] = String(r.chance(0.8) ? vcpus : vcpus + 1)
  if (!policy && r.chance(0.05)) extra_specs['resources:VCPU'] = String(vcpus)
  if (r.chance(0.1)) extra_specs['trait:HW_CPU_HYPERTHREADING'] = r.pick(['forbidden', 'required'])
  if (r.chance(0.05)) extra_specs['hw:pmem'] = '2GB'
  if ((policy === 'dedicated' || policy === 'mixed') && r.chance(0.15)) {
    extra_specs['hw:cpu_realtime'] = 'yes'
    if (r.chance(0.8)) extra_specs['hw:cpu_realtime_mask'] = '^0'
    if (policy === 'mixed' && r.chance(0.7)) delete extra_specs['hw:cpu_dedicated_mask']
  }
  return {vcpus: nodes === '2' && vcpus % 2 ? vcpus + 1 : vcpus, memory_mb, extra_specs}
}

function engineOutcome(c: Case, release: EngineRelease): NovaOutcome {
  let t
  try {
    t = instanceTopologyFor(c.flavor.vcpus, c.flavor.memory_mb, c.flavor.extra_specs, {})
  } catch {
    return {error: 'rejected'}
  }
  if (!t) return {constraints: null}
  const constraints = t.cells.map((x) => ({cpuset: x.cpuset, pcpuset: x.pcpuset, memory: x.memory}))
  const fit = fitInstanceToHost(c.host, t, {limits: c.limits, packing: c.packing, release})
  if (!fit.ok) return {constraints, fit: null}
  return {
    constraints,
    fit: fit.cells.map((x) => ({
      id: x.id,
      pinning: Object.fromEntries(x.pinning.map(([v, p]) => [String(v), p])),
      reserved: [...x.cpusetReserved].sort((a, b) => a - b),
    })),
  }
}

describe.skipIf(!COMPARE)('compare with nova: NUMA fitting', () => {
  it.each(COMPARE_RELEASES)(
    'nova %s: agrees with numa_get_constraints and numa_fit_instance_to_host on random cases (NUMA_CASES, default 400)',
    (release) => {
      const r = seeded(Number(process.env.NUMA_SEED ?? 20240603))
      const cases: Case[] = Array.from({length: Number(process.env.NUMA_CASES ?? 400)}, () => ({
        host: randomHost(r),
        flavor: randomFlavor(r),
        limits: r.chance(0.8) ? {cpu: r.pick([1, 4, 16]), ram: r.pick([1, 1.5])} : null,
        packing: r.chance(0.3),
      }))
      const nova = runNova<NovaOutcome[]>({mode: 'numa', cases}, release)
      const mismatches: string[] = []
      let fits = 0
      cases.forEach((c, i) => {
        const n = nova[i] as NovaOutcome
        const e = engineOutcome(c, release)
        if (n.fit) fits++
        const norm = (o: NovaOutcome) => (o.error ? {error: true} : o.raised ? {raised: true} : {constraints: o.constraints, fit: o.fit ?? null})
        const en = e.error ? {error: true} : norm(e)
        if (JSON.stringify(norm(n)) !== JSON.stringify(en))
          mismatches.push(
            `case ${i} ${JSON.stringify(c.flavor)} limits=${JSON.stringify(c.limits)} packing=${c.packing}\n  host ${JSON.stringify(c.host.cells.map((x) => ({id: x.id, cpuset: x.cpuset, pcpuset: x.pcpuset, pinned: x.pinned_cpus, sib: x.siblings, mem: x.memory, used: x.memory_usage, cpu: x.cpu_usage, pages: x.mempages})))}\n  nova   ${JSON.stringify(norm(n))}\n  engine ${JSON.stringify(en)}`,
          )
      })
      // the generator must produce both outcomes, or the comparison proves little
      expect(fits).toBeGreaterThan(cases.length * 0.1)
      expect(fits).toBeLessThan(cases.length * 0.9)
      expect(mismatches.slice(0, 5).join('\n')).toBe('')
    },
    120_000,
  )
})
