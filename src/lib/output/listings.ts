/**
 * Listings several commands share (see ListingSpec in formats.ts): the findings of every audit.
 */
import type {FindingSubject} from '../domain/finding.js'
import {formatSubject} from './findings-formatter.js'
import type {ListingSpec} from './formats.js'

const subjectOf = (row: Record<string, unknown>): FindingSubject => (row.subject ?? {}) as FindingSubject

/** Every subject field a finding may carry, under the one name each has in every check. */
const SUBJECT_FIELDS = ['cell', 'cell_uuid', 'host', 'node', 'provider_uuid', 'consumer_uuid', 'instance_uuid', 'migration_uuid', 'aggregate', 'numa_cell'] as const

/**
 * An audit's findings: by default the table's columns, with the subject's cell and host on their own
 * (what scripts filter on) and the subject on one line; -c adds the check and any subject field.
 */
export const FINDINGS_LISTING: ListingSpec = {
  rows: 'findings',
  columns: [
    {key: 'severity', label: 'Severity'},
    {key: 'code', label: 'Code'},
    {key: 'cell', label: 'Cell', value: (r) => subjectOf(r).cell},
    {key: 'host', label: 'Host', value: (r) => subjectOf(r).host},
    {key: 'subject', label: 'Subject', value: (r) => formatSubject(subjectOf(r)).replace(/\n/g, ' ')},
    {key: 'message', label: 'Finding'},
    {key: 'repair', label: 'Repair'},
  ],
  more: [{key: 'check'}, ...SUBJECT_FIELDS.map((f) => ({key: `subject.${f}`})), {key: 'evidence'}, {key: 'evidence_truncated'}],
  open: ['evidence'],
}

/**
 * A repair's (and cells discover-hosts'/map-instances') result: one row, its exit code and what was
 * applied (null on a dry run), whatever the plan holds.
 */
export const REPAIR_LISTING: ListingSpec = {
  columns: [{key: 'exit_code'}, {key: 'applied'}, {key: 'release'}],
  more: [{key: 'plan'}],
}
