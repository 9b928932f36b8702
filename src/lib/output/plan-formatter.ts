/** Human rendering of repair plans and their outcome. JSON output is the plan itself. */
import {needsAction} from '../domain/finding.js'
import {type RepairPlan, type Step, stepSql, writeSteps} from '../repairs/plan.js'
import {cpuRanges} from '../util/cpu-ranges.js'
import type {Display} from './display.js'
import {planWords} from './plan-words.js'
import {renderTable} from './table.js'
import {humanText} from './terminal.js'
import {theme} from './theme.js'

const VERB: Record<Step['op'], string> = {
  check: 'lock+check',
  delete: 'DELETE',
  update: 'UPDATE',
  'update-all': 'UPDATE',
  'delete-all': 'DELETE',
  insert: 'INSERT',
  restore: 'RESTORE',
}

/** pinned_cpus per NUMA cell id of a compute_nodes.numa_topology blob, or null when it is not one. */
function pinnedCpus(blob: unknown): Map<number, number[]> | null {
  if (typeof blob !== 'string' || !blob.includes('pinned_cpus')) return null
  try {
    const cells = (JSON.parse(blob) as {'nova_object.data'?: {cells?: Array<{'nova_object.data'?: {id?: number; pinned_cpus?: number[]}}>}})['nova_object.data']
      ?.cells
    if (!Array.isArray(cells)) return null
    return new Map(cells.map((c, i) => [c['nova_object.data']?.id ?? i, [...(c['nova_object.data']?.pinned_cpus ?? [])].sort((a, b) => a - b)]))
  } catch {
    return null
  }
}

function pinnedText(cpus: number[]): string {
  return cpus.length === 0 ? '(none)' : cpuRanges(cpus)
}

/**
 * The parameters column. A numa_topology rewrite is a diff of pinned_cpus per NUMA cell: the blob
 * itself runs to kilobytes (twice: the value written and the value expected), and only that array
 * changes. --json and the undo file keep both blobs whole.
 */
function paramsText(s: Step): string {
  const {params} = stepSql(s)
  if (s.op === 'update') {
    const before = pinnedCpus(s.expect.numa_topology)
    const after = pinnedCpus(s.set.numa_topology)
    if (before && after) {
      const cells = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) => a - b)
      const diff = cells.map((id) => `NUMA cell ${id}: ${pinnedText(before.get(id) ?? [])} -> ${pinnedText(after.get(id) ?? [])}`)
      const rest = params.filter((p) => p !== s.expect.numa_topology && p !== s.set.numa_topology)
      return [`pinned_cpus (numa_topology otherwise unchanged):`, ...diff, `other parameters: ${JSON.stringify(rest)}`].join('\n')
    }
  }
  return JSON.stringify(params)
}

function expectedRows(s: Step): string {
  if (s.op === 'check') return String(s.rows.length)
  // The rows are only known inside the transaction (each is recorded in the undo file).
  if (s.op === 'update-all' || s.op === 'delete-all') return 'any'
  return '1'
}

/**
 * A step's statement, parameters and expected rows as the plan table shows them: also the columns of
 * a repair's csv/value listing (src/lib/output/listings.ts).
 */
export function stepCells(s: Step): {statement: string; parameters: string; rows: string} {
  const {sql} = stepSql(s)
  return {statement: `${VERB[s.op] === sql.split(' ')[0] ? '' : `[${VERB[s.op]}] `}${sql}`, parameters: paramsText(s), rows: expectedRows(s)}
}

/**
 * The plan in plain words (plan-words.ts), then, with `verbose`, every step as its SQL statement with
 * its parameters, the rows it expects and why (the lock/check steps included).
 */
export function renderPlan(plan: RepairPlan, d: Display, opts: {verbose?: boolean; apply?: boolean} = {}): string {
  const c = theme()
  const out: string[] = []
  const writes = writeSteps(plan)
  out.push(c.bold(`Repair plan: ${plan.kind}${opts.apply ? '' : ' (dry run)'}`))
  if (opts.verbose && plan.findings.length > 0) {
    out.push(`Findings addressed (${plan.findings.length}):`)
    for (const f of plan.findings) out.push(`  ${f.code}  ${f.subject}`)
  }
  if (writes.length === 0)
    out.push(
      plan.skipped.some((s) => needsAction(s.severity))
        ? c.yellow('Nothing to do that this command may do on its own: the findings under "Not repaired" need you.')
        : c.green('Nothing to do.'),
    )
  else {
    const checks = plan.steps.length - writes.length
    // Only the databases this plan writes to, in the order their transactions commit.
    const writeDbs = plan.db_order.filter((d) => writes.some((w) => w.db === d))
    const label = (d: string) => plan.db_labels[d] ?? d
    out.push(
      `${writes.length} write(s) in ${writeDbs.length === 1 ? label(writeDbs[0]) : `${writeDbs.map(label).join(', ')} (committed in this order)`}; ${checks} lock/check step(s) re-validate each finding inside the transaction${writeDbs.length === 1 ? '' : 's'}${opts.verbose ? '' : ' (-v shows every SQL statement)'}.`,
    )
    out.push(...planWords(plan))
    if (opts.verbose)
      out.push(
        renderTable(
          d,
          // --verbose numbers every step (checks too), in the order the executor runs them.
          ['#', 'database', 'statement', 'parameters', 'rows', 'why'],
          plan.steps.map((s, i) => {
            const cells = stepCells(s)
            return [i + 1, label(s.db), cells.statement, cells.parameters, cells.rows, s.why]
          }),
          {wrap: [2, 3, 5]},
        ),
      )
    out.push('Summary:')
    for (const line of countLines(plan)) out.push(`  ${line}`)
  }
  if (plan.skipped.length > 0) {
    out.push(c.yellow(`Not repaired (${plan.skipped.length}):`))
    for (const s of plan.skipped) out.push(`  ${s.code}${needsAction(s.severity) ? '' : ' (info)'}  ${s.subject}: ${s.reason}`)
  }
  // When applying, the notes (restart this service, ...) follow the outcome instead: they are about afterwards.
  if (!opts.apply || writes.length === 0) for (const n of plan.notes) out.push(`Note: ${n}`)
  // The planner's own --max-count note says it already (with the exit code); said once.
  if (plan.partial && !plan.notes.some((n) => n.startsWith('--max-count'))) out.push(c.yellow('More to do beyond --max-count: run again until it exits 0.'))
  if (writes.length > 0 && !opts.apply) out.push('Dry run: nothing was written. Re-run with --apply to execute (exit 3 = something to do).')
  return out.join('\n')
}

/** Counts of write steps by database label and by kind ('delete allocations'), for the prompt and summary. */
function planCounts(plan: RepairPlan): Array<{db: string; op: string; table: string; count: number}> {
  const m = new Map<string, {db: string; op: string; table: string; count: number}>()
  for (const s of writeSteps(plan)) {
    const k = `${s.db}\u0000${s.op}\u0000${s.table}`
    const e = m.get(k)
    if (e) e.count++
    else m.set(k, {db: plan.db_labels[s.db] ?? s.db, op: s.op, table: s.table, count: 1})
  }
  return [...m.values()]
}

/** Also the confirmation prompt's text, which no base-command output path sees: made terminal-safe here. */
export function countLines(plan: RepairPlan): string[] {
  // An update-all / delete-all step takes every matching row, known only inside the transaction: not "1 row".
  return planCounts(plan).map((x) =>
    humanText(x.op.endsWith('-all') ? `${x.db}: ${x.op.slice(0, -4)} every matching ${x.table} row` : `${x.db}: ${x.op} ${x.count} ${x.table} row(s)`),
  )
}

export function renderApplied(
  plan: RepairPlan,
  result: {committed: string[]; undo_file: string; rows_changed: number; rows_already?: number; records?: ReadonlyArray<{db: string}>},
): string {
  const c = theme()
  const label = (d: string) => plan.db_labels[d] ?? d
  const perDb = new Map<string, number>()
  for (const r of result.records ?? []) perDb.set(r.db, (perDb.get(r.db) ?? 0) + 1)
  const where = perDb.size > 0 ? ` (${[...perDb].map(([d, n]) => `${label(d)}: ${n}`).join(', ')})` : ''
  // Only the databases that were written to: an empty transaction is not news.
  const written = result.committed.filter((d) => perDb.size === 0 || perDb.has(d))
  const out = [
    c.green(`Applied: ${result.rows_changed} row(s) changed${where}.`),
    written.length === 1 ? `Committed in ${label(written[0])}.` : `Committed, in order: ${written.map(label).join(', ')}.`,
  ]
  if (result.rows_already) out.push(`${result.rows_already} row(s) were already in their target state.`)
  if (result.rows_changed > 0) out.push(`Undo file: ${result.undo_file}  (cloudctl repair undo ${result.undo_file})`)
  for (const n of plan.notes) out.push(`Note: ${n}`)
  return out.join('\n')
}
