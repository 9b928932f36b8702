import {type Command, Flags, type Interfaces} from './oclif.js'

import {type AuditReport, AUDIT_CHECKS, auditExitCode, runChecks} from '../checks/index.js'
import type {CheckName} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Snapshot} from '../domain/snapshot.js'
import {buildModel} from '../domain/model.js'
import {EVIDENCE_ROWS} from '../output/evidence.js'
import {renderFindings} from '../output/findings-formatter.js'
import {reportHeader} from '../output/snapshot-formatter.js'
import {FINDINGS_LISTING} from '../output/listings.js'
import {CloudctlCommand, type CommandFlags} from './base-command.js'
import {sourceFlags, sourceOptionsFrom} from './source-flags.js'
import {requireKnownCell, requireKnownHost} from './require-known.js'

/** What `audit <check> --json` prints: the findings, counts per check and severity, and the exit code. */
export interface AuditResult extends AuditReport {
  exit_code: number
}

const filterFlags = {
  cell: Flags.string({summary: 'Only findings of this cell (name or uuid).', helpGroup: 'FILTER'}),
  host: Flags.string({summary: 'Only findings of this host (service host or hypervisor_hostname).', helpGroup: 'FILTER'}),
  severity: Flags.option({
    summary: 'Only findings at or above this severity (error > unknown > warning > info).',
    options: ['error', 'unknown', 'warning', 'info'] as const,
    helpGroup: 'FILTER',
  })(),
}

/** Every command whose output holds findings (audits, snapshot diff): see src/lib/output/evidence.ts. */
export const evidenceFlags = {
  'full-evidence': Flags.boolean({
    summary: `Print every row of each finding's evidence (default: the first ${EVIDENCE_ROWS} of each list, with evidence_truncated giving the totals).`,
    helpGroup: 'OUTPUT',
  }),
}

export const auditFlags = {...sourceFlags, ...filterFlags, ...evidenceFlags}

/** The same three ways to run any audit: on the demo, on the live cloud via nova.conf, as JSON. */
export const auditExamples = [
  '<%= config.bin %> <%= command.id %> --snapshot demo',
  '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --severity warning',
  '<%= config.bin %> <%= command.id %> --snapshot snap.json.gz --json',
]

export const auditAllFlags = {
  ...auditFlags,
  // Comma lists too, as nova.conf lists are written: --check leaks,providers.
  check: Flags.option({
    summary: 'Run only this check (repeatable, or a comma list).',
    multiple: true,
    delimiter: ',',
    options: AUDIT_CHECKS,
    helpGroup: 'FILTER',
  })(),
}

/**
 * A --cell or --host that names nothing in the cloud would silently report "no findings": say so
 * instead (a typo must not read as a clean bill of health).
 */
function checkFilterSubjects(snapshot: Snapshot, cell: string | undefined, host: string | undefined): void {
  requireKnownCell(snapshot, cell)
  requireKnownHost(snapshot, host)
}

/** An audit command: its flags include auditFlags (checked where it extends AuditCommand). */
export type AuditCommandClass = typeof Command & {flags: typeof auditFlags}

/** What an audit command may add to the one run (audit all: the summary table, metrics and HTML). */
export interface AuditRunOptions {
  summaryTable?: boolean
  /** Further outputs of the same run (metrics, HTML), before the report is printed. */
  after?: (model: CloudModel, report: AuditReport) => Promise<void>
  /**
   * `after` reads more than the audits do (capacity, the HTML report): read every column from live
   * databases, not the audit view (Snapshot.scope 'audit').
   */
  everyColumn?: boolean
}

export abstract class AuditCommand<T extends AuditCommandClass> extends CloudctlCommand<T> {
  static override listing = FINDINGS_LISTING

  // T's flags include auditFlags (the constraint above), so its parsed flags hold their values.
  declare protected flags: CommandFlags<T> & Interfaces.InferredFlags<typeof auditFlags>

  /** Load the snapshot, run the checks, render, and set the exit code (0 clean, 3 findings). */
  protected async runAudit(checks: readonly CheckName[], opts: AuditRunOptions = {}): Promise<AuditResult> {
    const f = this.flags
    const snapshot = await this.readSnapshot({...sourceOptionsFrom(f), auditView: opts.everyColumn !== true})
    checkFilterSubjects(snapshot, f.cell, f.host)
    this.phase(`auditing ${checks.join(', ')}`)
    const model = buildModel(snapshot)
    const report = runChecks(model, {checks, cell: f.cell, host: f.host, severity: f.severity})
    const exitCode = auditExitCode(report)
    await opts.after?.(model, report)
    this.out((d) => `${reportHeader(snapshot, model.liveComputeNodes.length)}\n\n${renderFindings(report, d, opts)}`)
    this.setExit(exitCode)
    return {...report, exit_code: exitCode}
  }
}
