import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {sortedNumbers} from '../context.js'
import type {CheckUnit} from '../unit.js'
import {cellLabel, cellPins, nodePins, ownersOf, pinningFinding} from './node-pins.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.overlap': [FindingSubject, Open]
  }
}

export const pinningOverlap: CheckUnit = {
  code: 'pinning.overlap',
  check: 'pinning',
  severity: 'error',
  summary: 'one pCPU pinned by two instances',
  explain: {
    cause:
      'Two instances pin the same pCPU: a race between two claims or a live migration without NUMA-aware migration (pre-Train behaviour), or instance NUMA topologies edited by hand.',
    repair: 'Reported only: migrate one of the instances (a new claim re-pins it).',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const p of nodePins(ctx)) {
      for (const c of cellPins(p)) {
        // Two distinct owners need two entries: most pinned pCPUs have one, and no Set is made for
        // them. forEach: a for-of over the map makes an entry pair per pCPU while unoptimised.
        const shared: number[] = []
        c.expected.forEach((owners, pcpu) => {
          if (owners.length > 1 && new Set(owners).size > 1) shared.push(pcpu)
        })
        const overlap = sortedNumbers(shared)
        if (overlap.length === 0) continue
        findings.push(
          pinningFinding(ctx, p, {
            code: 'pinning.overlap',
            severity: 'error',
            cellId: c.cellId,
            message: `${cellLabel(p, c.cellId)}: pCPUs ${overlap.join(',')} are pinned by more than one instance.`,
            evidence: {overlap, owners: ownersOf(c, overlap)},
          }),
        )
      }
    }
    return findings
  },
}
