/**
 * A repair plan in plain words: what it does, grouped by whom it acts for (an instance, a provider, a
 * compute node, a host), with the rows of each action counted and why in the finding's own words.
 * The per-statement SQL is the table that -v/--verbose adds (plan-formatter.ts).
 */
import {FINDING_CODES} from '../checks/index.js'
import {GENERATIONS, type RepairPlan, type Step, isColumnRef, writeSteps} from '../repairs/plan.js'

/** Row names as nova and placement speak of them; a table not listed is named as it is, "<table> row". */
const NOUN: Record<string, string> = {
  allocations: 'allocation',
  consumers: 'consumer',
  resource_providers: 'resource provider',
  inventories: 'inventory',
  resource_provider_traits: 'trait',
  resource_provider_aggregates: 'aggregate link',
  placement_aggregates: 'placement aggregate',
  instance_mappings: 'instance mapping',
  host_mappings: 'host mapping',
  compute_nodes: 'compute_nodes row',
  instances: 'instances row',
  instance_extra: 'instance_extra row',
}

const noun = (table: string) => NOUN[table] ?? `${table} row`

function plural(word: string, n: number): string {
  if (n === 1) return word
  return /[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}s`
}

/** At most this many details per action; the rest are counted ("and 4 more"). */
const DETAILS = 8

function verbOf(s: Step): string {
  switch (s.op) {
    case 'check':
      return 'check'
    case 'insert':
      return 'create'
    case 'delete':
    case 'delete-all':
      return 'delete'
    case 'restore':
      return s.before === null ? 'delete' : s.after === null ? 're-create' : 'restore'
    case 'update':
    case 'update-all': {
      const cols = Object.keys(s.set).filter((c) => c !== 'updated_at')
      if (cols.length === 1 && cols[0] === 'generation') return 'bump the generation of'
      if (isColumnRef(s.set.deleted)) return 'soft-delete'
      if (s.table === 'allocations' && 'resource_provider_id' in s.set) return 'move'
      return 'update'
    }
  }
}

interface Action {
  verb: string
  noun: string
  /** null: rows matching a condition, known only inside the transaction (update-all / delete-all). */
  count: number | null
  details: string[]
  tables: string[]
}

interface Group {
  subject: string
  actions: Map<string, Action>
  codes: string[]
}

function actionText(a: Action, where: string): string {
  if (a.count === null) return `${a.verb} its rows in ${a.tables.join(', ')}${where}`
  const shown = a.details.slice(0, DETAILS)
  const more = a.details.length > DETAILS ? `, and ${a.details.length - DETAILS} more` : ''
  return `${a.verb} ${a.count} ${plural(a.noun, a.count)}${where}${shown.length > 0 ? `: ${shown.join(', ')}${more}` : ''}`
}

/** Why a group's rows change: the summary of each finding code its steps answer (cloudctl explain CODE). */
function whyText(g: Group): string | undefined {
  if (g.subject === GENERATIONS) return "placement's guard against concurrent writers, bumped once per provider or consumer written"
  const parts = g.codes.map((c) => {
    const summary = FINDING_CODES[c]?.summary
    return summary ? `${summary} (${c})` : c
  })
  return parts.length > 0 ? parts.join('; ') : undefined
}

/**
 * One line per subject, then one per action (indented; lines wrap at the display width when printed),
 * then why. Steps without plain words (a plan from an older file) are grouped by database.
 */
export function planWords(plan: RepairPlan): string[] {
  const label = (d: string) => plan.db_labels[d] ?? d
  const writes = writeSteps(plan)
  const manyDbs = new Set(writes.map((s) => s.db)).size > 1
  const groups = new Map<string, Group>()
  for (const s of writes) {
    const subject = s.about?.subject ?? `rows of ${label(s.db)}`
    let g = groups.get(subject)
    if (!g) groups.set(subject, (g = {subject, actions: new Map(), codes: []}))
    if (s.code && !g.codes.includes(s.code)) g.codes.push(s.code)
    const all = s.op === 'update-all' || s.op === 'delete-all'
    const verb = verbOf(s)
    const key = `${verb}\u0000${all ? '*' : s.table}\u0000${manyDbs ? s.db : ''}`
    let a = g.actions.get(key)
    if (!a) g.actions.set(key, (a = {verb, noun: noun(s.table), count: all ? null : 0, details: [], tables: []}))
    if (a.count !== null) a.count++
    if (!a.tables.includes(s.table)) a.tables.push(s.table)
    if (s.about?.detail) a.details.push(s.about.detail)
  }
  const out: string[] = []
  for (const g of groups.values()) {
    out.push(`  ${g.subject}:`)
    for (const [key, a] of g.actions) {
      const db = key.split('\u0000')[2]
      out.push(`    - ${actionText(a, db ? ` in ${label(db)}` : '')}`)
    }
    const why = whyText(g)
    if (why) out.push(`    why: ${why}`)
  }
  return out
}
