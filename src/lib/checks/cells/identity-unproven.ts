import type {FindingSubject} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {type CellIdentityEvidence, unprovenCells} from './identity.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.identity-unproven': [FindingSubject & {cell_uuid: string}, CellIdentityEvidence]
  }
}

export const identityUnproven: CheckUnit = {
  code: 'cell.identity-unproven',
  check: 'cells',
  severity: 'error',
  summary: "a cell's database does not prove it is the cell nova maps to",
  explain: {
    cause:
      'The database read for the cell is readable but not that cell’s: a --cell-db or cell_mappings URL names an empty or freshly synced database, cell0’s, another cell’s, or one database is reached by two cell mappings. Its hosts and instances disagree with host_mappings and instance_mappings (fewer than half of the mapped ones are there), cell0’s holds computes, or two cells report the same server and schema. Every other finding about that cell is then suspect.',
    repair:
      'Point the cell at its own database (cell_mappings.database_connection, or --cell-db NAME=URL) and audit again. Until then every repair refuses --apply (exit 2) naming this evidence; see "Proving a cell\'s identity" in docs/repairs.md.',
  },
  run(ctx) {
    return unprovenCells(ctx.model).map((u) => ({
      check: 'cells' as const,
      code: 'cell.identity-unproven' as const,
      severity: 'error' as const,
      subject: {cell: u.label, cell_uuid: u.cell.uuid},
      message: `${u.reasons.join('; ')}.`,
      evidence: u.evidence,
      repair: `point ${u.label} at its own database (cell_mappings or --cell-db ${u.label}=URL), then audit again`,
    }))
  },
}
