/**
 * Listings several commands share (see ListingSpec in formats.ts): the findings of every audit.
 */
import {type FindingSubject, SUBJECT_FIELDS} from '../domain/finding.js'
import {formatSubject} from './findings-formatter.js'
import type {ListingSpec} from './formats.js'
import {stepCells} from './plan-formatter.js'
import type {Step} from '../repairs/plan.js'

const subjectOf = (row: Record<string, unknown>): FindingSubject => (row.subject ?? {}) as FindingSubject

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
 * A repair's (and cells discover-hosts'/map-instances', repair undo's) plan: one row per write, as the
 * plan table shows them (`-c op` and the lock/check steps are in the JSON document), whether dry run or
 * applied. Nothing to do: the header alone.
 */
export const REPAIR_LISTING: ListingSpec = {
  rows: 'plan.steps',
  keep: (r) => r.op !== 'check',
  columns: [
    {key: 'db', label: 'database'},
    {key: 'statement', label: 'Statement', value: (r) => stepCells(r as unknown as Step).statement},
    {key: 'parameters', label: 'Parameters', value: (r) => stepCells(r as unknown as Step).parameters},
    {key: 'rows', label: 'Rows', value: (r) => stepCells(r as unknown as Step).rows},
    {key: 'why', label: 'Why'},
  ],
  more: [{key: 'op'}, {key: 'table'}, {key: 'code'}, {key: 'key'}, {key: 'expect'}, {key: 'set'}, {key: 'where'}],
  open: ['key', 'expect', 'set', 'where'],
}
