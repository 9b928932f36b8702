/**
 * The rule every repair command shares: a plan made while a cell could not be read never reads as
 * "nothing to do". Each unreadable cell the planner did not already list is added to `skipped`, so the
 * dry run names it and exits 3 (runPlan: an empty plan with skipped entries is exit 3, never 0).
 */
import type {CloudModel} from '../domain/model.js'
import type {RepairPlan} from './plan.js'

export function listUnreadCells(model: CloudModel, plan: RepairPlan): RepairPlan {
  for (const c of model.unavailableCells) {
    const subject = `cell=${c.name ?? c.uuid}`
    if (plan.skipped.some((s) => s.subject.split(' ').includes(subject))) continue
    plan.skipped.push({code: 'cell.undecided', subject, reason: unreadCellReason(c.error), severity: 'unknown'})
  }
  return plan
}

export function unreadCellReason(error: string | null | undefined): string {
  return `cell could not be read (${error ?? 'unavailable'}): its hosts and instances were not examined`
}
