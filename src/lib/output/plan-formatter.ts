/** Human rendering of repair plans and their outcome. JSON output is the plan itself. */
import {type RepairPlan, type Step, planCounts, stepSql, writeSteps} from '../repairs/plan.js'
import {renderTable} from './table.js'
import {humanText} from './terminal.js'
import {theme} from './theme.js'

const VERB: Record<Step['op'], string> = {check: 'lock+check', delete: 'DELETE', update: 'UPDATE', insert: 'INSERT', restore: 'RESTORE'}

function expectedRows(s: Step): string {
  if (s.op === 'check') return String(s.rows.length)
  return '1'
}

/** Every step: database, statement, parameters, rows expected, why. `verbose` also shows the lock/check steps. */
export function renderPlan(plan: RepairPlan, opts: {verbose?: boolean; apply?: boolean} = {}): string {
  const c = theme()
  const out: string[] = []
  const writes = writeSteps(plan)
  out.push(c.bold(`Repair plan: ${plan.kind}${opts.apply ? '' : ' (dry run)'}`))
  if (plan.findings.length > 0) {
    out.push(`Findings addressed (${plan.findings.length}):`)
    for (const f of plan.findings) out.push(`  ${f.code}  ${f.subject}`)
  }
  if (writes.length === 0)
    out.push(plan.skipped.length === 0 ? c.green('Nothing to do.') : c.yellow('Nothing to do that this command may do on its own: the findings under "Not repaired" need you.'))
  else {
    const checks = plan.steps.length - writes.length
    out.push(`${writes.length} write(s) in ${plan.db_order.map((d) => plan.db_labels[d] ?? d).join(' -> ')} (commit order); ${checks} lock/check step(s) re-validate each finding inside the transaction.`)
    const shown = opts.verbose ? plan.steps : writes
    out.push(
      renderTable(
        ['#', 'database', 'statement', 'parameters', 'rows', 'why'],
        shown.map((s) => {
          const {sql, params} = stepSql(s)
          return [plan.steps.indexOf(s) + 1, plan.db_labels[s.db] ?? s.db, `${VERB[s.op] === sql.split(' ')[0] ? '' : `[${VERB[s.op]}] `}${sql}`, JSON.stringify(params), expectedRows(s), s.why]
        }),
        {wrap: [2, 3, 5]},
      ),
    )
    out.push('Summary:')
    for (const line of countLines(plan)) out.push(`  ${line}`)
  }
  if (plan.skipped.length > 0) {
    out.push(c.yellow(`Not repaired (${plan.skipped.length}):`))
    for (const s of plan.skipped) out.push(`  ${s.code}  ${s.subject}: ${s.reason}`)
  }
  // When applying, the notes (restart this service, ...) follow the outcome instead: they are about afterwards.
  if (!opts.apply || writes.length === 0) for (const n of plan.notes) out.push(`Note: ${n}`)
  if (plan.partial) out.push(c.yellow('More to do beyond --max-count: run again until it exits 0.'))
  if (writes.length > 0 && !opts.apply) out.push('Dry run: nothing was written. Re-run with --apply to execute (exit 3 = something to do).')
  return out.join('\n')
}

/** Also the confirmation prompt's text, which no base-command output path sees: made terminal-safe here. */
export function countLines(plan: RepairPlan): string[] {
  return planCounts(plan).map((x) => humanText(`${x.db}: ${x.op} ${x.count} ${x.table} row(s)`))
}

export function renderApplied(plan: RepairPlan, result: {committed: string[]; undo_file: string; rows_changed: number; rows_already?: number; records?: ReadonlyArray<{db: string}>}): string {
  const c = theme()
  const label = (d: string) => plan.db_labels[d] ?? d
  const perDb = new Map<string, number>()
  for (const r of result.records ?? []) perDb.set(r.db, (perDb.get(r.db) ?? 0) + 1)
  const where = perDb.size > 0 ? ` (${[...perDb].map(([d, n]) => `${label(d)}: ${n}`).join(', ')})` : ''
  const out = [c.green(`Applied: ${result.rows_changed} row(s) changed${where}.`), `Committed, in order: ${result.committed.map(label).join(', ')}.`]
  if (result.rows_already) out.push(`${result.rows_already} row(s) were already in their target state.`)
  if (result.rows_changed > 0) out.push(`Undo file: ${result.undo_file}  (cloudctl repair undo ${result.undo_file})`)
  for (const n of plan.notes) out.push(`Note: ${n}`)
  return out.join('\n')
}
