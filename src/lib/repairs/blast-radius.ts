/**
 * The blast-radius limit (docs/repairs.md): whatever made a plan, one run never deletes more than a
 * small share of a cloud's allocations, resource providers or host mappings, nor remaps more than
 * that share of its host or instance mappings, unless the operator names a higher limit
 * (--max-delete N). A wrong cell database, a bug or a half-read cloud makes a plan that takes
 * everything; an honest repair of an ordinary cloud takes a few rows (or runs in batches).
 */
import type {CloudModel} from '../domain/model.js'
import type {RepairPlan, Step} from './plan.js'

/** The default limit per kind: this share of the cloud's rows of that kind... */
export const MAX_DELETE_PERCENT = 10
/** ...but never less than this many rows, so that small clouds still repair. */
export const MAX_DELETE_FLOOR = 100

interface Kind {
  what: string
  verb: string
  total: (model: CloudModel) => number
  counts: (step: Step) => boolean
}

const KINDS: readonly Kind[] = [
  {
    what: 'allocations',
    verb: 'deletes',
    total: (m) => m.snapshot.placement.allocations.length,
    counts: (s) => s.db === 'placement' && s.table === 'allocations' && s.op === 'delete',
  },
  {
    what: 'resource providers',
    verb: 'deletes',
    total: (m) => m.snapshot.placement.resource_providers.length,
    counts: (s) => s.db === 'placement' && s.table === 'resource_providers' && s.op === 'delete',
  },
  {
    what: 'host mappings',
    verb: 'deletes or remaps',
    total: (m) => m.snapshot.nova_api.host_mappings.length,
    counts: (s) => s.db === 'nova_api' && s.table === 'host_mappings' && (s.op === 'delete' || s.op === 'update'),
  },
  {
    what: 'instance mappings',
    verb: 'deletes or remaps',
    total: (m) => m.snapshot.nova_api.instance_mappings.length,
    counts: (s) => s.db === 'nova_api' && s.table === 'instance_mappings' && (s.op === 'delete' || s.op === 'update'),
  },
]

export interface BlastCount {
  /** 'allocations', 'resource providers', 'host mappings', 'instance mappings' */
  what: string
  verb: string
  /** Rows of this kind the plan deletes (or remaps). */
  planned: number
  /** Rows of this kind in the cloud when it was read. */
  total: number
  limit: number
  /** The limit came from --max-delete. */
  explicit: boolean
}

/** The default limit for a kind with `total` rows: 10 %, rounded up, and at least 100. */
export function defaultLimit(total: number): number {
  return Math.max(Math.ceil((total * MAX_DELETE_PERCENT) / 100), MAX_DELETE_FLOOR)
}

/** Per kind the plan touches: how many rows, of how many, and the limit (--max-delete, else the default). */
export function blastRadius(model: CloudModel, plan: RepairPlan, maxDelete?: number): BlastCount[] {
  const out: BlastCount[] = []
  for (const k of KINDS) {
    const planned = plan.steps.filter(k.counts).length
    if (planned === 0) continue
    const total = k.total(model)
    out.push({what: k.what, verb: k.verb, planned, total, limit: maxDelete ?? defaultLimit(total), explicit: maxDelete !== undefined})
  }
  return out
}

/** The kinds over their limit ([] = within it). */
export function overLimit(model: CloudModel, plan: RepairPlan, maxDelete?: number): BlastCount[] {
  return blastRadius(model, plan, maxDelete).filter((c) => c.planned > c.limit)
}

const n = (x: number): string => x.toLocaleString('en-US')
const pct = (part: number, whole: number): string => {
  if (whole === 0) return 'of none read'
  const p = (100 * part) / whole
  return `${p >= 10 || Number.isInteger(p) ? Math.round(p) : p.toFixed(1)} %`
}

/** "the plan deletes 1,050 of 1,050 allocations (100 %); the limit is 105 (10 % of 1,050, at least 100)" */
export function describeOverLimit(c: BlastCount): string {
  const limit = c.explicit ? `${n(c.limit)} (--max-delete)` : `${n(c.limit)} (${MAX_DELETE_PERCENT} % of ${n(c.total)}, at least ${MAX_DELETE_FLOOR})`
  return `the plan ${c.verb} ${n(c.planned)} of ${n(c.total)} ${c.what} (${pct(c.planned, c.total)}); the limit is ${limit}`
}
