/**
 * What a repair plan asks of the database account, statement by statement (pure: db/grants.ts asks
 * the server). The executor locks every row it relies on with `SELECT * ... FOR UPDATE` and writes
 * with the statements of stepSql: those exact statements, one per shape, are what the account must
 * be allowed to run. The server answers for each (PREPARE checks privileges without running
 * anything), so roles, wildcard database grants (`nova\_%`), column grants and partial revokes
 * count exactly as they will when the plan runs.
 */
import {type DbKey, type Row, type Step, sameValue, stepSql} from './plan.js'

export type Privilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE'

export interface PrivilegeProbe {
  db: DbKey
  table: string
  /** The privilege the statement is for (the server may name another, e.g. MySQL's locking reads). */
  privilege: Privilege
  /** The statement as the executor runs it, with ? placeholders. */
  sql: string
}

const q = (c: string) => `\`${c.replace(/`/g, '``')}\``

/** The executor's locking read of `where` (steps.ts lockRows). */
function lockSql(table: string, where: Row): string {
  const w = Object.entries(where)
    .map(([c, v]) => (v === null ? `${q(c)} IS NULL` : `${q(c)} = ?`))
    .join(' AND ')
  return `SELECT * FROM ${q(table)} WHERE ${w} FOR UPDATE`
}

function writePrivilege(step: Step): Privilege | null {
  switch (step.op) {
    case 'check':
      return null
    case 'delete':
    case 'delete-all':
      return 'DELETE'
    case 'update':
    case 'update-all':
      return 'UPDATE'
    case 'insert':
      return 'INSERT'
    case 'restore':
      return step.before === null ? 'DELETE' : step.after === null ? 'INSERT' : 'UPDATE'
  }
}

function lockedBy(step: Step): Row {
  switch (step.op) {
    case 'check':
    case 'update-all':
    case 'delete-all':
      return step.where
    case 'insert':
      return step.unique
    default:
      return step.key
  }
}

/** Every distinct statement the plan runs per database, locking reads first; in plan order. */
export function planProbes(steps: readonly Step[]): PrivilegeProbe[] {
  const out = new Map<string, PrivilegeProbe>()
  const add = (p: PrivilegeProbe) => {
    const k = `${p.db}\u0000${p.sql}`
    if (!out.has(k)) out.set(k, p)
  }
  for (const step of steps) {
    add({db: step.db, table: step.table, privilege: 'SELECT', sql: lockSql(step.table, lockedBy(step))})
    const w = writePrivilege(step)
    // A restore of a row whose before- and after-image agree writes nothing (the executor finds it restored).
    if (
      step.op === 'restore' &&
      step.before !== null &&
      step.after !== null &&
      !Object.keys(step.before).some((c) => !sameValue(step.before?.[c] ?? null, step.after?.[c] ?? null))
    )
      continue
    if (w) add({db: step.db, table: step.table, privilege: w, sql: stepSql(step).sql})
  }
  return [...out.values()]
}

/** What MySQL's locking reads need beyond SELECT (granted per database: `ON db.*`). */
export const LOCKING_READ = 'LOCK TABLES'

/** What the server said is missing: ER_TABLEACCESS_DENIED_ERROR (1142) or ER_COLUMNACCESS_DENIED_ERROR (1143). */
export interface Denial {
  privilege: string
  column?: string
}

/**
 * The privilege (and column) a denial names. MariaDB and MySQL word it alike:
 * "DELETE command denied to user 'u'@'h' for table `db`.`t`" (MySQL 9: "... for table 't'"),
 * "UPDATE command denied to user 'u'@'h' for column 'c' in table 't'". MySQL (8.0.22 and later)
 * also refuses a locking read (SELECT ... FOR UPDATE, which the executor runs on every row it relies
 * on) to an account with SELECT alone: "SELECT with locking clause command denied"; any one of
 * LOCK TABLES (on the database), UPDATE or DELETE allows it, and LOCK TABLES is the one that writes nothing.
 */
export function parseDenial(message: string, fallback: Privilege): Denial {
  const m = /^(.+?) command denied to user /.exec(message)
  const column = /for column '((?:[^']|'')*)' in table/.exec(message)?.[1]?.replace(/''/g, "'")
  const named = m?.[1]
  const privilege = named === undefined ? fallback : /^SELECT with locking clause$/i.test(named) ? LOCKING_READ : named
  return {privilege, ...(column === undefined ? {} : {column})}
}

export interface MissingGrant {
  db: DbKey
  /** 'placement', 'nova_api', 'cell cell1'. */
  label: string
  /** The database's name on its server. */
  database: string
  table: string
  privilege: string
  column?: string
  /** CURRENT_USER() as the server matched the account: 'nova'@'%'. */
  account: string
}

const ident = (s: string) => `\`${s.replace(/`/g, '``')}\``

/** 'nova'@'10.%' from CURRENT_USER()'s nova@10.% (the host part follows the last @). */
export function accountSql(currentUser: string): string {
  const at = currentUser.lastIndexOf('@')
  const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
  return at < 0 ? lit(currentUser) : `${lit(currentUser.slice(0, at))}@${lit(currentUser.slice(at + 1))}`
}

/** The GRANT statements that would give the account what is missing, one per database table (per database for LOCK TABLES). */
export function grantStatements(missing: readonly MissingGrant[]): string[] {
  const byTable = new Map<string, {on: string; account: string; privs: Set<string>}>()
  for (const m of missing) {
    const on = m.privilege === LOCKING_READ ? `${ident(m.database)}.*` : `${ident(m.database)}.${ident(m.table)}`
    const k = `${m.account}\u0000${on}`
    const e = byTable.get(k) ?? {on, account: m.account, privs: new Set<string>()}
    for (const p of m.privilege.split(/,\s*/)) e.privs.add(m.column === undefined ? p : `${p} (${ident(m.column)})`)
    byTable.set(k, e)
  }
  return [...byTable.values()].map(({on, account, privs}) => `GRANT ${[...privs].join(', ')} ON ${on} TO ${accountSql(account)}`)
}

function what(m: MissingGrant): string {
  if (m.privilege === LOCKING_READ) return `LOCK TABLES on ${m.database} (MySQL's locking read of ${m.table} needs it, or UPDATE or DELETE on the table)`
  return `${m.privilege}${m.column === undefined ? '' : ` (column ${m.column})`} on ${m.database}.${m.table}`
}

/** One line: which database, table and grant are missing, the first in full, then how many more. */
export function describeMissing(missing: readonly MissingGrant[]): string {
  const [first] = missing
  const where = first.label === first.database ? first.label : `${first.label} (${first.database})`
  const short = (m: MissingGrant) => (m.privilege === LOCKING_READ ? `LOCK TABLES on ${m.database}` : `${m.privilege} on ${m.database}.${m.table}`)
  const others = [...new Set(missing.map(short))].filter((x) => x !== short(first))
  const more = others.length > 0 ? ` and ${others.length} more (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', ...' : ''})` : ''
  return `the database account ${accountSql(first.account)} of ${where} lacks ${what(first)}${more}`
}
