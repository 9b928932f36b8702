/**
 * What must hold before a plan is applied (docs/repairs.md), as one pure function of the plan, the
 * model it was made from and the snapshot read: the refusals, in the order an operator should fix
 * them. The repair command throws the first when --apply is given and notes them all on a dry run.
 */
import {unprovenCells} from '../checks/cells/identity.js'
import type {CloudModel} from '../domain/model.js'
import type {Snapshot} from '../domain/snapshot.js'
import {CloudctlError, ExitCode} from '../errors.js'
import {describeOverLimit, overLimit} from './blast-radius.js'
import {outageBlockedSteps} from './outage.js'
import type {RepairPlan} from './plan.js'

export interface PlanContext {
  /** The model the plan was made from; undo plans have none (an undo file restores exactly what a repair did). */
  model?: CloudModel
  /** The snapshot the plan was made from, when there is one. */
  snapshot: Snapshot | null
  /** --max-delete */
  maxDelete?: number
}

const refusal = (message: string, code: string, hint: string): CloudctlError => new CloudctlError(message, {exitCode: ExitCode.CONFIG, code, hint})

/** Applying needs a live read, and every cell a step depends on read (an unreadable cell is never empty). */
function sourceRefusals(plan: RepairPlan, {model, snapshot}: PlanContext): CloudctlError[] {
  if (snapshot && snapshot.source.kind !== 'live')
    return [
      refusal(
        `refusing to apply a plan made from a ${snapshot.source.kind} snapshot (${snapshot.source.description})`,
        'RepairNeedsLiveSource',
        'Repairs re-read and lock the live rows: run against the databases (--api-db / --nova-conf / a profile), not --snapshot.',
      ),
    ]
  const blocked = model ? outageBlockedSteps(model, plan) : []
  if (model && blocked.length > 0) {
    const names = [...new Set(blocked.flatMap((x) => x.cells))].map((u) => model.cellLabel(u))
    const first = blocked[0] as (typeof blocked)[number]
    return [
      refusal(
        `refusing to apply: ${blocked.length} step(s) depend on cell ${names.join(', ')}, which could not be read (first: ${first.step.op} ${first.step.table}: ${first.reason})`,
        'CellUnavailable',
        'An unreadable cell is never treated as empty. Make it reachable (or pass --cell-db NAME=URL), then re-run.',
      ),
    ]
  }
  const involved = new Set(plan.db_order.filter((d) => d.startsWith('cell:')).map((d) => d.slice(5)))
  const down = snapshot?.cells.filter((c) => c.status !== 'available' && involved.has(c.uuid)) ?? []
  if (down.length > 0)
    return [
      refusal(
        `refusing to apply: cell ${down.map((c) => c.name ?? c.uuid).join(', ')} could not be read (${down[0]?.error ?? 'unavailable'})`,
        'CellUnavailable',
        'An unreachable cell is never treated as empty. Make it reachable (or pass --cell-db NAME=URL), then re-run.',
      ),
    ]
  return []
}

/**
 * The guards on what a plan was made from and how much it takes, whatever its cause: every cell
 * proves it is the cell nova maps to, and the plan stays within the blast-radius limit. A dry run
 * shows the plan and says which of these would refuse it.
 */
export function guardRefusals(plan: RepairPlan, {model, maxDelete}: PlanContext): CloudctlError[] {
  if (!model) return []
  const out: CloudctlError[] = []
  const unproven = unprovenCells(model)
  if (unproven.length > 0)
    out.push(
      refusal(
        `refusing: ${[...new Set(unproven.flatMap((u) => u.reasons))].join('; ')}`,
        'CellIdentityUnproven',
        'Check --cell-db and cell_mappings.database_connection: each cell must be read from its own database (`cloudctl audit cells` shows the evidence as cell.identity-unproven).',
      ),
    )
  const over = overLimit(model, plan, maxDelete)
  if (over.length > 0)
    out.push(
      refusal(
        `refusing: ${over.map(describeOverLimit).join('; ')}`,
        'BlastRadius',
        over[0]?.explicit
          ? 'Raise --max-delete N if this many is meant, or run in batches with --max-count.'
          : 'Check the cell URLs, or raise it with --max-delete N.',
      ),
    )
  return out
}

/** Everything that refuses --apply of a non-empty plan, first the source, then the guards. */
export function applyRefusals(plan: RepairPlan, ctx: PlanContext): CloudctlError[] {
  return [...sourceRefusals(plan, ctx), ...guardRefusals(plan, ctx)]
}
