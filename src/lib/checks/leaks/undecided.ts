import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {UNDECIDED_EXPLANATION, type CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.undecided': [FindingSubject, Open]
  }
}

/**
 * Consumers whose judgement depends on an unreadable cell are counted per cell; a cell no consumer
 * depended on still says that missing allocations of its instances are not decided.
 */
export const allocationUndecided: CheckUnit = {
  code: 'allocation.undecided',
  check: 'leaks',
  severity: 'unknown',
  summary: 'a cell could not be read: consumers that may live there are not judged',
  explain: UNDECIDED_EXPLANATION,
  run(ctx) {
    const {model} = ctx
    const byCell = classifyAllocations(ctx).verdicts.undecidedByCell
    const findings: Finding[] = []
    for (const [cellUuid, consumers] of byCell) {
      const cell = model.cellOf(cellUuid)
      findings.push({
        check: 'leaks',
        code: 'allocation.undecided',
        severity: 'unknown',
        subject: {cell: cell?.name ?? cellUuid, cell_uuid: cellUuid},
        message: `Cell ${cell?.name ?? cellUuid} could not be read: ${consumers.length} consumer(s) that may live there are not judged (no leak, wrong provider or missing allocation is reported for them).`,
        evidence: {cell_error: cell?.error ?? null, undecided_consumers: consumers.length, sample: consumers.slice(0, 20)},
        repair: 'Make the cell database reachable and audit again.',
      })
    }
    const quiet = ctx.undecided('leaks', 'allocation.undecided', 'missing allocations of its instances are')
    for (const f of quiet) if (!byCell.has(f.subject.cell_uuid as string)) findings.push(f)
    return findings
  },
}
