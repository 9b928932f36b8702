import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {sortedNumbers} from '../context.js'
import type {CheckUnit} from '../unit.js'
import {cellLabel, cellPins, nodePins, ownersOf, pinningFinding, soleOwner} from './node-pins.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.outside-dedicated-set': [FindingSubject, Open]
  }
}

export const outsideDedicatedSet: CheckUnit = {
  code: 'pinning.outside-dedicated-set',
  check: 'pinning',
  severity: 'warning',
  summary: 'pins outside the host cell pcpuset (cpu_dedicated_set)',
  explain: {
    cause: "Pins lie outside the host cell's pcpuset: cpu_dedicated_set was changed on a host with pinned guests still running.",
    repair: 'Reported only: restore cpu_dedicated_set or migrate the instances.',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const p of nodePins(ctx)) {
      for (const c of cellPins(p)) {
        if (c.expected.size === 0) continue
        // forEach and includes: no spread, filtered list or Set per cell on a clean cloud, where
        // this runs mostly unoptimised; the Set is made for a finding's message.
        const pcpuset = c.hc?.pcpuset ?? []
        const found: number[] = []
        c.expected.forEach((_owners, pcpu) => {
          if (!pcpuset.includes(pcpu)) found.push(pcpu)
        })
        const outside = sortedNumbers(found)
        if (outside.length === 0) continue
        const dedicated = new Set(pcpuset)
        const where = cellLabel(p, c.cellId)
        findings.push(
          pinningFinding(ctx, p, {
            code: 'pinning.outside-dedicated-set',
            severity: 'warning',
            cellId: c.cellId,
            message: c.hc
              ? `${where}: pCPUs ${outside.join(',')} are pinned but outside the dedicated set (cpu_dedicated_set) ${sortedNumbers(dedicated).join(',') || '(empty)'}.`
              : `${where}: instances pin pCPUs ${outside.join(',')} in a NUMA cell the host does not have.`,
            evidence: {outside, pcpuset: c.hc ? sortedNumbers(dedicated) : null, owners: ownersOf(c, outside)},
            instance: soleOwner(outside.flatMap((pcpu) => c.expected.get(pcpu) ?? [])),
          }),
        )
      }
    }
    return findings
  },
}
