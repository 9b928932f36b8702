import type {Finding, FindingSubject, NodeEvidence} from '../../domain/finding.js'
import {sortedNumbers} from '../context.js'
import {type CheckUnit, runbook} from '../unit.js'
import {cellPins, nodePins, pinningFinding} from './node-pins.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.leaked': [FindingSubject, NodeEvidence]
  }
}

/** One finding per node: its repair rewrites the node's numa_topology once. */
export const pinningLeaked: CheckUnit = {
  code: 'pinning.leaked',
  check: 'pinning',
  severity: 'error',
  summary: 'pCPUs in pinned_cpus that no live instance pins',
  explain: {
    cause:
      'compute_nodes.numa_topology keeps pCPUs in pinned_cpus that no live instance pins: an instance deleted or moved while nova-compute was down, so the resource tracker never freed them. NUMATopologyFilter then returns 0 hosts for pinned flavors.',
    repair:
      '`cloudctl repair pinning` rewrites pinned_cpus from the live instances (only that array, byte for byte otherwise); refused while nova-compute is up unless `--force`, as the tracker would overwrite it. Restarting nova-compute recomputes it too.',
    runbook: runbook('pinned-cpus-stuck-full'),
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const p of nodePins(ctx)) {
      const cells: Array<{numa_cell: number; pinned_cpus: number[]; expected_pinned: number[]; leaked: number[]; pcpuset: number[] | null}> = []
      for (const {cellId, hc, expected, pinned} of cellPins(p)) {
        const leaked = sortedNumbers([...pinned].filter((pcpu) => !expected.has(pcpu)))
        if (leaked.length > 0)
          cells.push({
            numa_cell: cellId,
            pinned_cpus: sortedNumbers(pinned),
            expected_pinned: sortedNumbers(expected.keys()),
            leaked,
            pcpuset: hc?.pcpuset ?? null,
          })
      }
      // Up to `tolerance` leaked pCPUs may be those of instances moving through the node.
      if (cells.reduce((n, c) => n + c.leaked.length, 0) <= p.tolerance) continue
      findings.push(
        pinningFinding(ctx, p, {
          code: 'pinning.leaked',
          severity: 'error',
          cellId: cells.length === 1 ? cells[0].numa_cell : undefined,
          message: `${p.cn.hypervisor_hostname ?? p.cn.host}: pCPUs ${cells.map((c) => `${c.leaked.join(',')} (NUMA cell ${c.numa_cell})`).join('; ')} are pinned but no live instance on the node pins them; NUMATopologyFilter treats them as taken.`,
          evidence: {cells, instances: p.resident.map((i) => i.uuid), migrating_tolerance: p.tolerance},
          rowOnly: true,
        }),
      )
    }
    return findings
  },
}
