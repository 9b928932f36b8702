/**
 * Undo: the plan that puts every row an applied repair touched back to its before-image. Databases
 * are undone in reverse commit order and rows in reverse write order (children re-inserted after
 * their parents are, deleted before them). Each step is guarded by the after-image; a row already at
 * its before-image is left alone, so an undo also completes a repair that was only partly committed.
 */
import type {DbKey, RepairPlan, RestoreStep, Row} from './plan.js'

/** One row the plan touched: enough to put it back. */
export interface UndoRecordLike {
  db: DbKey
  table: string
  key: Row
  before: Row | null
  after: Row | null
  step: number
}

export interface UndoFileLike {
  undo_version: 1
  plan_id: string
  kind: RepairPlan['kind']
  created_at: string
  db_order: DbKey[]
  db_labels: Record<string, string>
  records: UndoRecordLike[]
}

export function validateUndoFile(data: unknown): UndoFileLike {
  const d = data as Partial<UndoFileLike> | null
  if (!d || d.undo_version !== 1 || !Array.isArray(d.records) || !Array.isArray(d.db_order) || typeof d.plan_id !== 'string')
    throw new Error('not a cloudctl undo file (undo_version 1 with records and db_order expected)')
  for (const [i, r] of d.records.entries()) {
    if (!r || typeof r.table !== 'string' || typeof r.db !== 'string' || typeof r.key !== 'object' || r.key === null || !('before' in r) || !('after' in r))
      throw new Error(`undo record ${i + 1} is malformed`)
    if (!/^[a-z_]+$/.test(r.table)) throw new Error(`undo record ${i + 1} names an invalid table`)
    for (const col of [...Object.keys(r.key), ...Object.keys(r.before ?? {}), ...Object.keys(r.after ?? {})])
      if (!/^[a-z_0-9]+$/.test(col)) throw new Error(`undo record ${i + 1} names an invalid column ${JSON.stringify(col)}`)
  }
  return d as UndoFileLike
}

/** One row of one database: the records of a row written twice (insert, then update) share it. */
const rowId = (r: UndoRecordLike): string =>
  JSON.stringify([
    r.db,
    r.table,
    Object.keys(r.key)
      .sort()
      .map((k) => [k, String(r.key[k])]),
  ])

export function planUndo(undo: UndoFileLike, now = new Date().toISOString()): RepairPlan {
  const dbOrder = [...undo.db_order].reverse()
  // The first record of a row (in write order) holds the row as it was before the repair touched it.
  const first = new Map<string, UndoRecordLike>()
  const count = new Map<string, number>()
  for (const r of undo.records) {
    const id = rowId(r)
    if (!first.has(id)) first.set(id, r)
    count.set(id, (count.get(id) ?? 0) + 1)
  }
  const steps: RestoreStep[] = []
  for (const db of dbOrder) {
    const recs = undo.records.filter((r) => r.db === db).reverse()
    for (const r of recs) {
      const what =
        r.before === null
          ? 'delete the row the repair inserted'
          : r.after === null
            ? 're-insert the row the repair deleted'
            : 'restore the values the repair changed'
      const step: RestoreStep = {
        db,
        table: r.table,
        op: 'restore',
        key: r.key,
        before: r.before,
        after: r.after,
        why: `undo of repair ${undo.plan_id} step ${r.step}: ${what}`,
        about: {subject: `the rows repair ${undo.kind} (${undo.plan_id}) wrote`},
      }
      const id = rowId(r)
      if ((count.get(id) ?? 0) > 1) step.origin = first.get(id)?.before ?? null
      steps.push(step)
    }
  }
  return {
    plan_version: 1,
    kind: 'undo',
    created_at: now,
    findings: [],
    db_order: dbOrder.filter((db) => steps.some((s) => s.db === db)),
    steps,
    db_labels: undo.db_labels,
    notes: [`Restores the before-images recorded by repair ${undo.plan_id} (${undo.kind}, ${undo.created_at}).`],
    skipped: [],
  }
}
