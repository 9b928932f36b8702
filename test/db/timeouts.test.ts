import {describe, expect, it} from 'vitest'

import {TIMEOUT_DEFAULTS, dbTimeouts} from '../../src/lib/db/timeouts.js'
import {CloudctlError} from '../../src/lib/errors.js'

describe('dbTimeouts', () => {
  it('defaults: reads wait 30 s for a lock and 60 s for a row; repairs 10 s for a lock, 30 s per statement; connect 10 s', () => {
    expect(dbTimeouts({})).toEqual({connectMs: 10_000, readLockWaitS: 30, readIdleMs: 60_000, repairLockWaitS: 10, repairStatementS: 30})
    expect(TIMEOUT_DEFAULTS.readIdleMs).toBeGreaterThan(TIMEOUT_DEFAULTS.readLockWaitS)
  })

  it('each variable replaces its default (seconds)', () => {
    const t = dbTimeouts({
      CLOUDCTL_DB_CONNECT_TIMEOUT: '2.5',
      CLOUDCTL_DB_LOCK_TIMEOUT: '3',
      CLOUDCTL_DB_STATEMENT_TIMEOUT: '0.5',
      CLOUDCTL_DB_READ_IDLE_TIMEOUT: '120',
      CLOUDCTL_DB_READ_LOCK_TIMEOUT: '5',
    })
    expect(t).toEqual({connectMs: 2500, readLockWaitS: 5, readIdleMs: 120_000, repairLockWaitS: 3, repairStatementS: 0.5})
  })

  it.each(['abc', '-1', '0', '1e3', '90000', ' '])('refuses %j with exit 2 naming the variable', (bad) => {
    let e: unknown
    try {
      dbTimeouts({CLOUDCTL_DB_LOCK_TIMEOUT: bad})
    } catch (error) {
      e = error
    }
    expect(e).toBeInstanceOf(CloudctlError)
    expect((e as CloudctlError).exitCode).toBe(2)
    expect((e as CloudctlError).message).toMatch(/^CLOUDCTL_DB_LOCK_TIMEOUT=".*" is not a number of seconds/)
  })
})
