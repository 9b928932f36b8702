/**
 * Every wait on a database is bounded (docs/repairs.md "Timeouts"). A server's own defaults wait a
 * day for a table lock (lock_wait_timeout 86,400 s) and forever for a server that stopped answering
 * (SIGSTOP, a hung disk, a network path that drops packets): one stalled cell must not hang an audit
 * or keep a repair's row locks on placement, which every scheduler decision writes.
 *
 * Reads and repairs need different bounds. An audit's reads of a big cloud stream for minutes, so no
 * statement limit applies to them: only the time to wait for a lock (DDL, LOCK TABLES) and for the
 * next row. A repair's statements are point reads and writes by key: each gets a statement limit on
 * the server and a slightly longer one in the client, which also covers a server that is frozen.
 *
 * The environment can change each bound (seconds); a bad value is a usage error (exit 2).
 */
import {CloudctlError, ExitCode} from '../errors.js'

export interface DbTimeouts {
  /** TCP connect and handshake (a URL's connect_timeout parameter wins for that URL). */
  connectMs: number
  /** Reads: lock_wait_timeout of a read session (a metadata lock: LOCK TABLES, DDL). */
  readLockWaitS: number
  /** Reads: the longest silence of the server while a read is running (no row, no column definition). */
  readIdleMs: number
  /** Repairs: lock_wait_timeout and innodb_lock_wait_timeout of a repair session. */
  repairLockWaitS: number
  /** Repairs: max_statement_time (MariaDB) / max_execution_time (MySQL) of a repair session. */
  repairStatementS: number
}

export const TIMEOUT_ENV = {
  connectMs: 'CLOUDCTL_DB_CONNECT_TIMEOUT',
  readLockWaitS: 'CLOUDCTL_DB_READ_LOCK_TIMEOUT',
  readIdleMs: 'CLOUDCTL_DB_READ_IDLE_TIMEOUT',
  repairLockWaitS: 'CLOUDCTL_DB_LOCK_TIMEOUT',
  repairStatementS: 'CLOUDCTL_DB_STATEMENT_TIMEOUT',
} as const satisfies Record<keyof DbTimeouts, string>

/** Defaults in seconds. */
export const TIMEOUT_DEFAULTS: Record<keyof DbTimeouts, number> = {
  connectMs: 10,
  readLockWaitS: 30,
  // Longer than the read lock wait, so that a lock names itself before the silence is called a stall.
  readIdleMs: 60,
  repairLockWaitS: 10,
  repairStatementS: 30,
}

/**
 * While placement holds the repair's rows, the other databases are re-read once more before the
 * COMMIT: a conflicting lock there means someone is writing a row the plan relies on, and waiting for
 * them would keep placement's rows locked. They wait this long, then the repair aborts.
 */
export const REVALIDATE_LOCK_WAIT_S = 1

/** How much longer the client waits than the server's own statement limit before it gives up. */
export const CLIENT_MARGIN_MS = 5_000

const MAX_S = 86_400

function seconds(name: string, raw: string): number {
  const s = raw.trim()
  const n = Number(s)
  if (s === '' || !/^\d+(\.\d+)?$/.test(s) || !(n > 0) || n > MAX_S)
    throw new CloudctlError(`${name}=${JSON.stringify(raw.slice(0, 40))} is not a number of seconds between 0 and ${MAX_S}`, {
      exitCode: ExitCode.CONFIG,
      code: 'BadTimeout',
      hint: `Set ${name} to seconds (e.g. ${name}=30), or unset it for the default.`,
    })
  return n
}

let cached: {env: string; value: DbTimeouts} | undefined

/** The bounds in force: the defaults, each replaced by its environment variable when set. */
export function dbTimeouts(env: NodeJS.ProcessEnv = process.env): DbTimeouts {
  const key = Object.values(TIMEOUT_ENV)
    .map((n) => env[n] ?? '')
    .join('\u0000')
  if (cached?.env === key) return cached.value
  const s = (k: keyof DbTimeouts): number => {
    const raw = env[TIMEOUT_ENV[k]]
    return raw === undefined || raw === '' ? TIMEOUT_DEFAULTS[k] : seconds(TIMEOUT_ENV[k], raw)
  }
  const value: DbTimeouts = {
    connectMs: Math.round(s('connectMs') * 1000),
    readLockWaitS: Math.max(1, Math.round(s('readLockWaitS'))),
    readIdleMs: Math.round(s('readIdleMs') * 1000),
    repairLockWaitS: Math.max(1, Math.round(s('repairLockWaitS'))),
    repairStatementS: s('repairStatementS'),
  }
  cached = {env: key, value}
  return value
}

/** "30 s", "1.5 s": a bound as the messages and the docs give it. */
export function showSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`
}

/** A driver-like error of our own: the server said nothing for `ms` (mapDbError names the database). */
export function noAnswerError(ms: number): Error {
  return Object.assign(new Error(`no answer within ${showSeconds(ms)}`), {code: 'CLOUDCTL_NO_ANSWER', timeoutMs: ms})
}
