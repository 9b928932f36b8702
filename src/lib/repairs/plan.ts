/**
 * A repair plan: row-level steps, each naming its database, table, primary key, the values it
 * observed (the guard) and why. Steps are data, not SQL text, so that the one executor can lock the
 * exact rows, re-check the observed values inside the transaction, record before-images for the undo
 * file and render the statement for the dry run. Planners (this directory) are pure.
 */
import type {Severity} from '../domain/finding.js'
import type {RepairKind} from './kinds.js'
import {GENERATIONS, type StepAbout} from './step-about.js'
export type {RepairKind, RepairKinds} from './kinds.js'
export {GENERATIONS, type StepAbout} from './step-about.js'

/** 'placement', 'nova_api', or 'cell:<cell uuid>'. */
export type DbKey = 'placement' | 'nova_api' | `cell:${string}`

/** A scalar as MySQL returns it with dateStrings; NOW is written by the executor as UTC_TIMESTAMP(). */
export type Scalar = string | number | null
export const NOW = {$now: true} as const
/** Another column of the same row: nova's soft delete sets deleted = id. */
export interface ColumnRef {
  $col: string
}
export const col = (name: string): ColumnRef => ({$col: name})
export type Value = Scalar | typeof NOW | ColumnRef
export type Row = Record<string, Scalar>
export type WriteRow = Record<string, Value>

export const isNow = (v: unknown): v is typeof NOW => typeof v === 'object' && v !== null && (v as {$now?: unknown}).$now === true
export const isColumnRef = (v: unknown): v is ColumnRef => typeof v === 'object' && v !== null && typeof (v as {$col?: unknown}).$col === 'string'

interface StepBase {
  db: DbKey
  table: string
  /** One line: why this step exists (the finding it answers). */
  why: string
  /** Finding code this step answers, when it answers one. */
  code?: string
  /** Plain words (see StepAbout); a step added without its own takes the subject the planner last named (PlanBuilder.about). */
  about?: StepAbout
}

/** Lock the rows matching `where` and require exactly `rows` (each a subset of columns, in primary-key order); [] = no row. */
export interface CheckStep extends StepBase {
  op: 'check'
  where: Row
  rows: Row[]
}

/** Delete one row by primary key, guarded by the observed values. */
export interface DeleteStep extends StepBase {
  op: 'delete'
  key: Row
  expect: Row
}

/** Update one row by primary key, guarded by the observed values. */
export interface UpdateStep extends StepBase {
  op: 'update'
  key: Row
  expect: Row
  set: WriteRow
}

/**
 * Every row matching `where`, however many there are (none is fine): the snapshot does not hold these
 * tables, so the rows are only known inside the transaction. Each is locked, written and recorded in
 * the undo file like any other row. Only for rows that hang off a row another step of the same
 * transaction guards (an instance's faults and metadata, soft-deleted with it as nova's
 * instance_destroy does): that step's guard is what makes writing them right.
 */
export interface UpdateAllStep extends StepBase {
  op: 'update-all'
  where: Row
  set: WriteRow
}

/** Delete every row matching `where` (none is fine), each recorded in the undo file; see UpdateAllStep. */
export interface DeleteAllStep extends StepBase {
  op: 'delete-all'
  where: Row
}

/** Insert one row; `unique` names the natural key that must not exist yet. */
export interface InsertStep extends StepBase {
  op: 'insert'
  unique: Row
  values: WriteRow
}

/** Undo only: put one row back to `before` (null = absent) from `after` (null = absent). A row already at `before` is left alone (undo also finishes a partly committed plan), and so is one at `origin`: set for a row the repair wrote several times, the row before the first write (a second undo changes nothing). */
export interface RestoreStep extends StepBase {
  op: 'restore'
  key: Row
  before: Row | null
  after: Row | null
  origin?: Row | null
}

export type Step = CheckStep | DeleteStep | UpdateStep | UpdateAllStep | DeleteAllStep | InsertStep | RestoreStep

export interface RepairPlan {
  plan_version: 1
  kind: RepairKind
  created_at: string
  /** Finding codes (with subjects) the plan answers. */
  findings: Array<{code: string; subject: string; message: string}>
  /** Databases in commit order: a failure between two commits leaves a state the audit reports. */
  db_order: DbKey[]
  steps: Step[]
  /** Human names of the databases ('cell cell1'). */
  db_labels: Record<string, string>
  /** Things the operator must do afterwards (restart services) and caveats. */
  notes: string[]
  /** Findings seen but not repaired, with the reason; only those that needsAction(severity) exit 3. */
  skipped: Array<{code: string; subject: string; reason: string; severity: Severity}>
  /** More work exists beyond --max-count. */
  partial?: boolean
}

/** Primary keys of the tables repairs touch. */
export const PRIMARY_KEYS: Record<string, string[]> = {
  resource_provider_traits: ['resource_provider_id', 'trait_id'],
  resource_provider_aggregates: ['resource_provider_id', 'aggregate_id'],
  tags: ['resource_id', 'tag'],
}
export const primaryKeyOf = (table: string): string[] => PRIMARY_KEYS[table] ?? ['id']

export function cellDb(cellUuid: string): DbKey {
  return `cell:${cellUuid}`
}

export function isWrite(step: Step): boolean {
  return step.op !== 'check'
}

export function writeSteps(plan: RepairPlan): Step[] {
  return plan.steps.filter(isWrite)
}

export function isEmptyPlan(plan: RepairPlan): boolean {
  return writeSteps(plan).length === 0
}

/** Collects steps per database and bumps each placement generation once, as placement would. */
export class PlanBuilder {
  private readonly byDb = new Map<DbKey, Step[]>()
  private readonly bumps = new Map<DbKey, Step[]>()
  private readonly bumped = new Set<string>()
  readonly findings: RepairPlan['findings'] = []
  readonly notes: string[] = []
  readonly skipped: RepairPlan['skipped'] = []
  readonly labels: Record<string, string> = {placement: 'placement', nova_api: 'nova_api'}

  /** Units of work taken so far (see unit), and whether one was turned away by the limit. */
  private units = 0
  private unitDepth = 0
  private limited = false

  constructor(
    readonly kind: RepairKind,
    private readonly now: string = new Date().toISOString(),
    /** --max-count: at most this many units of work with writes per plan; the rest waits for a re-run. */
    private readonly maxUnits: number = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * One unit of work: everything `fn` adds for one finding (or for the findings it answers together),
   * taken whole or not at all. Once --max-count units with writes are in the plan, a further unit
   * with writes is taken back entirely, so a plan never holds half a finding's steps, and the plan
   * says it is partial. A unit that only reports (skips) always stays. Nested units count as one.
   */
  unit(fn: () => void): this {
    if (this.unitDepth > 0) {
      fn()
      return this
    }
    const mark = this.mark()
    this.unitDepth++
    try {
      fn()
    } finally {
      this.unitDepth--
    }
    if (!this.wroteSince(mark)) return this
    if (this.units >= this.maxUnits) {
      this.rollback(mark)
      this.limited = true
    } else this.units++
    return this
  }

  private mark() {
    const lengths = (m: Map<DbKey, Step[]>) => new Map([...m].map(([k, v]) => [k, v.length]))
    return {
      byDb: lengths(this.byDb),
      bumps: lengths(this.bumps),
      bumped: new Set(this.bumped),
      findings: this.findings.length,
      notes: this.notes.length,
      skipped: this.skipped.length,
      labels: {...this.labels},
    }
  }

  private wroteSince(mark: ReturnType<PlanBuilder['mark']>): boolean {
    const grew = (m: Map<DbKey, Step[]>, before: Map<DbKey, number>) => [...m].some(([k, v]) => v.slice(before.get(k) ?? 0).some(isWrite))
    return grew(this.byDb, mark.byDb) || grew(this.bumps, mark.bumps)
  }

  private rollback(mark: ReturnType<PlanBuilder['mark']>): void {
    const cut = (m: Map<DbKey, Step[]>, before: Map<DbKey, number>) => {
      for (const [k, v] of m) {
        const n = before.get(k)
        if (n === undefined) m.delete(k)
        else v.length = n
      }
    }
    cut(this.byDb, mark.byDb)
    cut(this.bumps, mark.bumps)
    this.bumped.clear()
    for (const k of mark.bumped) this.bumped.add(k)
    this.findings.length = mark.findings
    this.notes.length = mark.notes
    this.skipped.length = mark.skipped
    for (const k of Object.keys(this.labels)) if (!(k in mark.labels)) delete this.labels[k]
  }

  label(db: DbKey, name: string): this {
    this.labels[db] = name
    return this
  }

  /** Whom the steps added from now on act for, in plain words (StepAbout). */
  private subject?: string
  about(subject: string): this {
    this.subject = subject
    return this
  }

  /** `detail`: the row's own part of the plain words ('VCPU=2'), under the subject last named. */
  add(step: Step, detail?: string): this {
    if (!step.about && this.subject !== undefined && step.op !== 'check')
      step.about = detail === undefined ? {subject: this.subject} : {subject: this.subject, detail}
    const list = this.byDb.get(step.db)
    if (list) list.push(step)
    else this.byDb.set(step.db, [step])
    return this
  }

  finding(code: string, subject: string, message: string): this {
    if (!this.findings.some((f) => f.code === code && f.subject === subject)) this.findings.push({code, subject, message})
    return this
  }

  skip(code: string, subject: string, reason: string, severity: Severity = 'warning'): this {
    this.skipped.push({code, subject, reason, severity})
    return this
  }

  note(text: string): this {
    if (!this.notes.includes(text)) this.notes.push(text)
    return this
  }

  /** resource_providers.generation + 1, once per provider per plan, guarded by the observed generation. */
  bumpProvider(rp: {id: number; uuid: string; name?: string | null; generation: number | null}, why: string): this {
    return this.bump('resource_providers', rp.id, rp.generation, `generation of provider ${rp.uuid}: ${why}`, rp.name ?? rp.uuid)
  }

  /** consumers.generation + 1, once per consumer per plan. */
  bumpConsumer(c: {id: number; uuid: string; generation: number}, why: string): this {
    return this.bump('consumers', c.id, c.generation, `generation of consumer ${c.uuid}: ${why}`, c.uuid)
  }

  isBumped(table: string, id: number): boolean {
    return this.bumped.has(`${table}/${id}`)
  }

  private bump(table: string, id: number, generation: number | null, why: string, name: string): this {
    const k = `${table}/${id}`
    if (this.bumped.has(k)) return this
    this.bumped.add(k)
    const step: UpdateStep = {
      db: 'placement',
      table,
      op: 'update',
      key: {id},
      expect: {generation},
      set: {generation: (generation ?? 0) + 1, updated_at: NOW},
      why,
      about: {subject: GENERATIONS, detail: name},
    }
    const list = this.bumps.get('placement')
    if (list) list.push(step)
    else this.bumps.set('placement', [step])
    return this
  }

  /** Placement's own deletions remove a consumer in the same step; so do we, after its allocations. */
  build(order: DbKey[]): RepairPlan {
    const dbs = new Set<DbKey>([...this.byDb.keys(), ...this.bumps.keys()])
    const dbOrder = [...order.filter((d) => dbs.has(d)), ...[...dbs].filter((d) => !order.includes(d))]
    const steps: Step[] = []
    for (const db of dbOrder) {
      const own = this.byDb.get(db) ?? []
      // Checks first (lock what the plan relies on), then writes, then generation bumps.
      steps.push(...own.filter((s) => s.op === 'check'), ...own.filter((s) => s.op !== 'check'), ...(this.bumps.get(db) ?? []))
    }
    const plan: RepairPlan = {
      plan_version: 1,
      kind: this.kind,
      created_at: this.now,
      findings: this.findings,
      db_order: dbOrder,
      steps,
      db_labels: {...this.labels},
      notes: this.notes,
      skipped: this.skipped,
    }
    if (this.limited) {
      plan.partial = true
      plan.notes.push(`--max-count ${this.maxUnits} reached: more findings are left for the next run; run again until it exits 0 (exit 6 = partial).`)
    }
    return plan
  }
}

/** The statement a step runs, with its parameters: the dry run prints exactly what the executor sends. */
export function stepSql(step: Step): {sql: string; params: Scalar[]} {
  const q = (c: string) => `\`${c}\``
  const where = (row: Row, params: Scalar[]): string =>
    Object.entries(row)
      .map(([c, v]) => {
        if (v === null) return `${q(c)} IS NULL`
        params.push(v)
        return `${q(c)} = ?`
      })
      .join(' AND ')
  const params: Scalar[] = []
  switch (step.op) {
    case 'check': {
      const w = where(step.where, params)
      return {sql: `SELECT * FROM ${q(step.table)} WHERE ${w} FOR UPDATE`, params}
    }
    case 'delete': {
      const w = where({...step.key, ...step.expect}, params)
      return {sql: `DELETE FROM ${q(step.table)} WHERE ${w}`, params}
    }
    case 'update':
    case 'update-all': {
      const sets = Object.entries(step.set).map(([c, v]) => {
        if (isNow(v)) return `${q(c)} = UTC_TIMESTAMP()`
        if (isColumnRef(v)) return `${q(c)} = ${q(v.$col)}`
        params.push(v)
        return `${q(c)} = ?`
      })
      const w = where(step.op === 'update' ? {...step.key, ...step.expect} : step.where, params)
      return {sql: `UPDATE ${q(step.table)} SET ${sets.join(', ')} WHERE ${w}`, params}
    }
    case 'delete-all': {
      const w = where(step.where, params)
      return {sql: `DELETE FROM ${q(step.table)} WHERE ${w}`, params}
    }
    case 'insert': {
      const cols = Object.keys(step.values)
      const vals = cols.map((c) => {
        const v = step.values[c]
        if (isNow(v)) return 'UTC_TIMESTAMP()'
        if (isColumnRef(v)) throw new Error('an insert cannot refer to another column')
        params.push(v)
        return '?'
      })
      return {sql: `INSERT INTO ${q(step.table)} (${cols.map(q).join(', ')}) VALUES (${vals.join(', ')})`, params}
    }
    case 'restore': {
      if (step.before === null) {
        const w = where(step.key, params)
        return {sql: `DELETE FROM ${q(step.table)} WHERE ${w}`, params}
      }
      if (step.after === null) {
        const cols = Object.keys(step.before)
        params.push(...cols.map((c) => (step.before as Row)[c]))
        return {sql: `INSERT INTO ${q(step.table)} (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, params}
      }
      const changed = Object.keys(step.before).filter((c) => !sameValue(step.before?.[c] ?? null, step.after?.[c] ?? null))
      const sets = changed.map((c) => {
        params.push((step.before as Row)[c])
        return `${q(c)} = ?`
      })
      const w = where(step.key, params)
      return {sql: `UPDATE ${q(step.table)} SET ${sets.join(', ')} WHERE ${w}`, params}
    }
  }
}

/** MySQL FLOAT columns read back widened to double: compare at single precision when either side is fractional. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || a === undefined || b === undefined) return false
  if (typeof a === 'number' || typeof b === 'number') {
    const x = Number(a)
    const y = Number(b)
    if (Number.isNaN(x) || Number.isNaN(y)) return false
    return x === y || Math.fround(x) === Math.fround(y)
  }
  return String(a) === String(b)
}

export function rowMatches(actual: Record<string, unknown>, expected: Row): boolean {
  return Object.entries(expected).every(([c, v]) => sameValue(actual[c] ?? null, v))
}

/** 'allocations id=12 (consumer_id=..)' for messages. */
export function describeKey(table: string, key: Row): string {
  return `${table} ${Object.entries(key)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`
}
