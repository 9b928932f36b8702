import type {FindingSubject, Open} from '../../domain/finding.js'
import {blobSubject} from '../../domain/model.js'
import type {CheckUnit} from '../unit.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'snapshot.unreadable-blob': [FindingSubject, Open]
  }
}

/** A blob nova wrote that cannot be read is a finding: the checks that need it skip that row. */
export const unreadableBlob: CheckUnit = {
  code: 'snapshot.unreadable-blob',
  check: 'snapshot',
  severity: 'error',
  summary: 'a JSON column nova wrote cannot be read',
  explain: {
    cause:
      'A JSON column nova wrote (flavor, numa_topology, request spec...) cannot be parsed: truncated by a column size limit, written by hand, or of a newer release.',
    repair: 'Reported only: checks that need the blob skip the row rather than guess; fix or restore the row.',
  },
  run(ctx) {
    // The model decides which blobs are unreadable; the context's readers parse each distinct text once.
    return ctx.model.unreadableBlobs(ctx).map((b) => {
      const host = b.row.host
      const node = b.table === 'compute_nodes' ? b.row.hypervisor_hostname : b.row.node
      const subject = blobSubject(b)
      return {
        check: 'snapshot',
        code: 'snapshot.unreadable-blob',
        severity: 'error',
        subject: {
          cell: ctx.model.cellLabel(b.row.cell_uuid),
          cell_uuid: b.row.cell_uuid,
          ...(host === null ? {} : {host}),
          ...(node === null ? {} : {node}),
          ...(b.table === 'instance_extra' && b.row.uuid ? {instance_uuid: b.row.uuid} : {}),
        },
        message: `${b.table}.${b.column} of ${subject} cannot be read (${b.error}); checks that need it skip this row.`,
        evidence: {table: b.table, column: b.column, subject, row_id: b.row.id, error: b.error},
      }
    })
  },
}
