import type {Finding, FindingSubject, NodeEvidence} from '../../domain/finding.js'
import {sortedNumbers} from '../context.js'
import type {CheckUnit} from '../unit.js'
import {cellLabel, cellPins, nodePins, ownersOf, pinningFinding, soleOwner} from './node-pins.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.unaccounted': [FindingSubject, NodeEvidence]
  }
}

export const pinningUnaccounted: CheckUnit = {
  code: 'pinning.unaccounted',
  check: 'pinning',
  severity: 'warning',
  summary: 'pCPUs live instances pin that are missing from pinned_cpus',
  explain: {
    cause:
      "Live instances pin pCPUs that the host's pinned_cpus does not record: a tracker that missed an instance (stalled periodic, a move in flight). The scheduler may pin a second guest onto them.",
    repair: '`cloudctl repair pinning` adds them from the live instances (same guard as pinning.leaked).',
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const p of nodePins(ctx)) {
      // While an instance moves through the node its pins here may be claimed but not yet recorded.
      if (p.moving.length > 0) continue
      for (const c of cellPins(p)) {
        // forEach: a spread of the keys and a filter make two lists per cell, mostly unoptimised.
        const found: number[] = []
        c.expected.forEach((_owners, pcpu) => {
          if (!c.pinned.has(pcpu)) found.push(pcpu)
        })
        const unaccounted = sortedNumbers(found)
        if (unaccounted.length === 0) continue
        findings.push(
          pinningFinding(ctx, p, {
            code: 'pinning.unaccounted',
            severity: 'warning',
            cellId: c.cellId,
            message: `${cellLabel(p, c.cellId)}: pCPUs ${unaccounted.join(',')} are pinned by live instances but not in pinned_cpus; the scheduler may pin them again.`,
            evidence: {pinned_cpus: sortedNumbers(c.pinned), expected_pinned: sortedNumbers(c.expected.keys()), unaccounted, owners: ownersOf(c, unaccounted)},
            instance: soleOwner(unaccounted.flatMap((pcpu) => c.expected.get(pcpu) ?? [])),
            rowOnly: true,
          }),
        )
      }
    }
    return findings
  },
}
