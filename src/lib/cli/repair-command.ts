/**
 * The one flow every write command follows (docs/repairs.md): plan from a fresh snapshot, print the
 * plan, stop there unless --apply (exit 3 when there is something to do, 0 when not), refuse against a
 * snapshot file or an unavailable cell, confirm (or --yes; no TTY and no --yes = refuse), then hand the
 * plan to the executor (lock, guarded transactions, undo file, audit log) and exit 4.
 */
import {type Command, Flags, type Interfaces} from './oclif.js'
import {closeSync, mkdirSync, openSync, rmSync} from 'node:fs'
import {homedir, userInfo} from 'node:os'
import {dirname, join} from 'node:path'

import {type CloudModel, buildModel} from '../domain/model.js'
import {needsAction} from '../domain/finding.js'
import type {Snapshot} from '../domain/snapshot.js'
import {CloudctlError, ExitCode} from '../errors.js'
import {countLines, renderApplied, renderPlan} from '../output/plan-formatter.js'
import type {RepairScope} from '../repairs/common.js'
import type {HostRepairOptions} from '../repairs/host-state.js'
import {applyRefusals, guardRefusals} from '../repairs/preconditions.js'
import {refuseBrokenTrees} from '../repairs/tree-guard.js'
import {type RepairPlan, isEmptyPlan} from '../repairs/plan.js'
import {checkAuditLogPath} from '../db/repair/audit-log.js'
import {listUnreadCells} from '../repairs/unread-cells.js'
import {confirmApply} from '../ui/confirm.js'
import {CloudctlCommand, type CommandFlags} from './base-command.js'
import {MAX_COUNT} from './limits.js'
import {requireKnownCell, requireKnownHost} from './require-known.js'
import {type ChosenSource, sourceFlags, sourceOptionsFrom} from './source-flags.js'

export const repairFlags = {
  ...sourceFlags,
  apply: Flags.boolean({summary: 'Execute the plan (default: dry run, print it and exit 3 when there is something to do).', helpGroup: 'REPAIR'}),
  yes: Flags.boolean({char: 'y', summary: 'Do not ask for confirmation (automation). Never implies --apply.', helpGroup: 'REPAIR'}),
  // nova-manage and kubectl users type it out of habit; the default already is a dry run.
  'dry-run': Flags.boolean({summary: 'Plan only, write nothing (the default; accepted for habit).', exclusive: ['apply'], helpGroup: 'REPAIR'}),
  // nova-manage's batching (map_instances, archive_deleted_rows): a bounded transaction per run.
  'max-count': Flags.integer({
    summary: 'Apply at most N findings per run (each whole); exit 6 while more are left: run again until it exits 0.',
    min: 1,
    max: MAX_COUNT,
    helpGroup: 'REPAIR',
  }),
  // gh-ost's and pt-archiver's guard: a plan that takes a large share of the cloud is a wrong input until the operator says otherwise.
  'max-delete': Flags.integer({
    summary:
      "Refuse a plan that deletes (or remaps) more than N allocations, resource providers, host mappings or instance mappings (default: 10 % of the cloud's rows of that kind, at least 100).",
    min: 0,
    max: MAX_COUNT,
    helpGroup: 'REPAIR',
  }),
  verbose: Flags.boolean({
    char: 'v',
    summary: 'Also show every SQL statement of the plan (the lock/check steps that re-validate each finding too), with its parameters.',
    helpGroup: 'REPAIR',
  }),
  'undo-dir': Flags.string({summary: 'Directory for undo files (default ~/.local/state/cloudctl/undo).', helpGroup: 'REPAIR', env: 'CLOUDCTL_UNDO_DIR'}),
  'audit-log': Flags.string({
    summary: "Append JSON lines per applied plan here, one fsync'd before its COMMIT (default ~/.local/state/cloudctl/audit.log).",
    helpGroup: 'REPAIR',
    env: 'CLOUDCTL_AUDIT_LOG',
  }),
}

/**
 * --cell and --host of every repair that answers findings: the plan answers only the findings the
 * audit shows under the same filter (runChecks' own), and a name the cloud does not know is the
 * audits' usage error (exit 2), never an empty plan. Re-validation inside the transaction is unchanged.
 */
export const scopeFlags = {
  cell: Flags.string({summary: 'Only findings of this cell (name or uuid), as `cloudctl audit --cell` shows them.', helpGroup: 'FILTER'}),
  host: Flags.string({
    summary: 'Only findings of this host (service host or hypervisor_hostname), as `cloudctl audit --host` shows them.',
    helpGroup: 'FILTER',
  }),
}

/** Repairs that write compute_nodes rows nova-compute owns (pinning, usage). */
export const hostRowFlags = {
  force: Flags.boolean({summary: 'Write even while nova-compute on the host is up and reporting (restart it afterwards).'}),
}

/** A finding the plan left alone that needs the operator: the rule the audits' exit code follows too. */
function leftForOperator(plan: RepairPlan): boolean {
  return plan.skipped.some((s) => needsAction(s.severity))
}

export interface RepairOutcome {
  plan: RepairPlan
  applied: null | {committed: string[]; undo_file: string | null; rows_changed: number; rows_already: number; plan_id: string}
  exit_code: number
}

export function stateDir(): string {
  return process.env.XDG_STATE_HOME ? join(process.env.XDG_STATE_HOME, 'cloudctl') : join(homedir(), '.local', 'state', 'cloudctl')
}

/** A repair command: its flags include repairFlags (checked where it extends RepairCommand). */
export type RepairCommandClass = typeof Command & {flags: typeof repairFlags}

export abstract class RepairCommand<T extends RepairCommandClass> extends CloudctlCommand<T> {
  // T's flags include repairFlags (the constraint above), so its parsed flags hold their values.
  declare protected flags: CommandFlags<T> & Interfaces.InferredFlags<typeof repairFlags>

  protected sourceOptions(): ChosenSource {
    return sourceOptionsFrom(this.flags)
  }

  /** The model the plan was made from: runPlan checks the outage rule against it. */
  private planModel?: CloudModel

  /**
   * A fresh snapshot and its model. With --apply the live databases are always read: a snapshot file
   * (--snapshot or CLOUDCTL_SNAPSHOT) is for looking, never for writing, whatever its header says.
   */
  protected async loadModel(): Promise<{snapshot: Snapshot; model: CloudModel}> {
    const opts = this.sourceOptions()
    if (this.flags.apply && opts.snapshot) {
      const fromEnv =
        process.env.CLOUDCTL_SNAPSHOT === opts.snapshot &&
        !this.argv.some((a) => a === '-s' || a === '--snapshot' || a.startsWith('--snapshot=') || /^-s./.test(a))
      throw new CloudctlError(
        `refusing --apply with a snapshot file (${fromEnv ? 'CLOUDCTL_SNAPSHOT' : '--snapshot'}): a plan is applied only from a fresh read of the live databases`,
        {
          exitCode: ExitCode.CONFIG,
          code: 'RepairNeedsLiveSource',
          hint: fromEnv
            ? 'Unset CLOUDCTL_SNAPSHOT and run against the databases (--api-db / --nova-conf / a profile); the file is for dry runs.'
            : 'Drop --snapshot and run against the databases (--api-db / --nova-conf / a profile); a dry run may use the file.',
        },
      )
    }
    const snapshot = await this.readSnapshot(opts)
    this.phase('planning')
    const model = buildModel(snapshot)
    this.planModel = model
    return {snapshot, model}
  }

  /**
   * What every finding-driven planner takes from the flags: --cell and --host (checked as the audits
   * check them: a name the cloud does not know is exit 2) and --max-count.
   */
  protected planOptions(snapshot: Snapshot): RepairScope & {maxCount?: number} {
    const f = this.flags as typeof this.flags & Partial<Interfaces.InferredFlags<typeof scopeFlags>>
    requireKnownCell(snapshot, f.cell)
    requireKnownHost(snapshot, f.host)
    return {cell: f.cell, host: f.host, maxCount: f['max-count']}
  }

  /** A host-row repair (its flags include hostRowFlags and scopeFlags): --force, --cell, --host and --max-count go to the planner. */
  protected async runHostRowPlan(plan: (model: CloudModel, opts: HostRepairOptions) => RepairPlan): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    const f = this.flags as typeof this.flags & Interfaces.InferredFlags<typeof hostRowFlags>
    return this.runPlan(plan(model, {...this.planOptions(snapshot), force: f.force}), snapshot)
  }

  protected async runPlan(plan: RepairPlan, snapshot: Snapshot | null): Promise<RepairOutcome> {
    const f = this.flags
    // A tree with a parent loop has no root: no plan touching it is shown or applied, whatever the command.
    if (this.planModel) refuseBrokenTrees(this.planModel, plan)
    const empty = isEmptyPlan(plan)
    // A refusal comes before the plan: a page of plan followed by "refusing" hides the reason.
    // With --apply a non-empty plan needs a live source, every cell it touches read, and the guards;
    // otherwise (a dry run, or nothing to do) a cell that is not the cell nova maps to still makes
    // "nothing to do" untrue: the plan is shown with the guard that would refuse it.
    const ctx = {model: this.planModel, snapshot, maxDelete: f['max-delete']}
    const refusals = f.apply && !empty ? applyRefusals(plan, ctx) : guardRefusals(plan, ctx)
    if (f.apply && refusals.length > 0) throw refusals[0]
    const refused = refusals.length > 0
    for (const e of refusals) plan.notes.push(`--apply would be refused: ${e.message.replace(/^refusing: /, '')}`)
    // Never "nothing to do" while a cell was not read: each unread cell is listed, so the exit is 3.
    if (this.planModel) listUnreadCells(this.planModel, plan)
    // Least privilege: the server is asked whether this account may run every statement of the plan,
    // before the plan is shown, confirmed or locked (--apply: exit 2; a dry run: a note).
    if (!empty && !this.sourceOptions().snapshot) await (await import('../db/grants.js')).checkPlanGrants(plan, this.sourceOptions(), f.apply, snapshot)
    this.out((d) => renderPlan(plan, d, {verbose: f.verbose, apply: f.apply}))
    if (empty || !f.apply) {
      // Findings this command left alone that need the operator (--force, another command, a decision)
      // are still findings: exit 3, so that "run until exit 0" does not stop here. Info ones do not
      // (needsAction: the same rule as the audits).
      const code = empty ? (plan.partial ? ExitCode.PARTIAL : leftForOperator(plan) || refused ? ExitCode.FINDINGS : ExitCode.OK) : ExitCode.FINDINGS
      this.setExit(code)
      return {plan, applied: null, exit_code: code}
    }
    preflightWritablePaths(f['undo-dir'] ?? join(stateDir(), 'undo'), f['audit-log'] ?? join(stateDir(), 'audit.log'))
    return this.confirmAndExecute(plan)
  }

  private async confirmAndExecute(plan: RepairPlan): Promise<RepairOutcome> {
    const f = this.flags
    const ok = await confirmApply({yes: f.yes, summary: countLines(plan)})
    if (!ok) {
      this.note('Not applied: nothing was written.')
      this.setExit(ExitCode.FINDINGS)
      return {plan, applied: null, exit_code: ExitCode.FINDINGS}
    }
    const {executePlan} = await import('../db/repair/executor.js')
    const {connectorFor, repairLockName, resolveRepairTargets} = await import('../db/repair/targets.js')
    const targets = await resolveRepairTargets(this.sourceOptions())
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')
    const undoDir = f['undo-dir'] ?? join(stateDir(), 'undo')
    const undoFile = join(undoDir, `${stamp}-${plan.kind}-${process.pid}.json`)
    this.phase('applying the plan')
    const result = await executePlan(plan, {
      connect: connectorFor(targets, plan.db_labels),
      undoFile,
      auditLog: f['audit-log'] ?? join(stateDir(), 'audit.log'),
      operator: safeUser(),
      lockName: repairLockName(targets),
    })
    // Every row already in its target state (a second `repair undo`, or someone fixed it meanwhile):
    // nothing was applied, and saying "applied, 0 rows" with exit 4 would claim otherwise.
    const nothing = result.rows_changed === 0 && !plan.partial
    if (nothing)
      this.out(
        plan.kind === 'undo' ? 'Nothing to undo: every row already holds its before-image.' : 'Nothing changed: every row was already in its target state.',
      )
    else this.out(() => renderApplied(plan, result))
    for (const w of result.warnings) this.note(`Warning: ${w}.`)
    // As for a dry run: nothing changed is 0 only when nothing was left alone (an unread cell included).
    const code = plan.partial ? ExitCode.PARTIAL : nothing ? (leftForOperator(plan) ? ExitCode.FINDINGS : ExitCode.OK) : ExitCode.APPLIED
    this.setExit(code)
    return {
      plan,
      applied: {
        committed: result.committed,
        undo_file: result.rows_changed > 0 ? result.undo_file : null,
        rows_changed: result.rows_changed,
        rows_already: result.rows_already,
        plan_id: result.plan_id,
      },
      exit_code: code,
    }
  }
}

/**
 * An undo file that cannot be written aborts a repair only after its writes ran, and an audit log that
 * cannot be appended to was skipped silently: prove both paths writable before the confirmation and
 * before any transaction, by writing to them (root passes access(2) checks whatever the mode says).
 */
function preflightWritablePaths(undoDir: string, auditLog: string): void {
  const refuse = (what: string, path: string, error: unknown, making = false) => {
    let code = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error))
    // mkdir -p reports a file in the way as EEXIST: a path component is not a directory.
    if (making && code === 'EEXIST') code = 'ENOTDIR'
    const why =
      {
        ENOTDIR: ': a path component is not a directory',
        EISDIR: ': it is a directory',
        EACCES: ': permission denied',
        EROFS: ': read-only file system',
        EPERM: ': operation not permitted',
        ...(making ? {ENOENT: ': no directory can be created there'} : {}),
      }[code] ?? ''
    return new CloudctlError(`the ${what} ${path} cannot be written (${code}${why}); nothing was written to the databases`, {
      exitCode: ExitCode.CONFIG,
      code: 'NotWritable',
      hint:
        what === 'undo directory'
          ? 'Pass a writable directory with --undo-dir (or CLOUDCTL_UNDO_DIR).'
          : 'Pass a writable file with --audit-log (or CLOUDCTL_AUDIT_LOG).',
    })
  }
  // mkdir -p one level at a time: mkdirSync({recursive}) loops forever where mkdir answers ENOENT
  // under a parent that exists (/proc, /sys), which hung `--undo-dir /proc/x` at 35 % CPU.
  const makeDir = (what: string, path: string, d: string) => {
    const abs = d.startsWith('/') ? d : join(process.cwd(), d)
    const parts = abs.split('/').filter((p) => p !== '')
    for (let i = 1; i <= parts.length; i++) {
      try {
        mkdirSync(`/${parts.slice(0, i).join('/')}`, {mode: 0o700})
      } catch (error) {
        // An existing directory (or a file in the way, which the next level or the probe reports as ENOTDIR).
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw refuse(what, path, error, true)
      }
    }
  }
  makeDir('undo directory', undoDir, undoDir)
  try {
    // 'wx': a name planted in the directory (a symlink) is never followed.
    const probe = join(undoDir, `.cloudctl-probe-${process.pid}-${Date.now()}`)
    closeSync(openSync(probe, 'wx', 0o600))
    rmSync(probe, {force: true})
  } catch (error) {
    throw refuse('undo directory', undoDir, error)
  }
  makeDir('audit log', auditLog, dirname(auditLog))
  // Before the open below: a FIFO there would block it, and /proc or /dev files open fine but keep nothing.
  checkAuditLogPath(auditLog)
  try {
    // 'a' creates the log as the executor would, and fails on a directory or a read-only file.
    closeSync(openSync(auditLog, 'a', 0o600))
  } catch (error) {
    throw refuse('audit log', auditLog, error)
  }
}

function safeUser(): string {
  try {
    return userInfo().username
  } catch {
    return process.env.USER ?? 'unknown'
  }
}
