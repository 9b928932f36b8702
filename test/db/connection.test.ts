import {describe, expect, it} from 'vitest'

import {closeConnection, mapDbError, openConnection} from '../../src/lib/db/connection.js'
import {eachRow} from '../../src/lib/db/row-stream.js'
import {parseDbUrl, withDatabase} from '../../src/lib/db/url.js'
import {CloudctlError} from '../../src/lib/errors.js'
import {testDsn} from '../support/db.js'

const url = parseDbUrl('mysql+pymysql://nova:Mapper-Secret1@db7:3306/nova_api')
const driver = (code: string, sqlMessage?: string, message = sqlMessage ?? code): Error => Object.assign(new Error(message), {code, sqlMessage})

describe('mapDbError', () => {
  it.each([
    [
      driver('ECONNREFUSED', undefined, 'connect ECONNREFUSED 10.0.0.7:3306'),
      {},
      2,
      'DbUnreachable',
      /cannot reach the nova_api database at mysql\+pymysql:\/\/nova:\*\*\*@db7:3306\/nova_api: ECONNREFUSED/,
      /firewall/,
    ],
    [driver('ETIMEDOUT'), {}, 2, 'DbUnreachable', /ETIMEDOUT/, /server running/],
    [driver('ENOTFOUND'), {}, 2, 'DbUnreachable', /ENOTFOUND \(unknown host name\)/, /host name/],
    [driver('ENOENT'), {}, 2, 'DbUnreachable', /ENOENT/, /unix_socket/],
    [
      driver('ER_ACCESS_DENIED_ERROR', "Access denied for user 'nova'@'10.0.0.1' (using password: YES)"),
      {},
      2,
      'DbAccessDenied',
      /access denied to the nova_api database .*wrong user name or password/,
      /password/,
    ],
    [
      driver('ER_BAD_DB_ERROR', "Unknown database 'nova_apx'"),
      {},
      2,
      'DbUnknownDatabase',
      /unknown database at .*Unknown database 'nova_apx'/,
      /database name/,
    ],
    [
      driver('ER_NO_SUCH_TABLE', "Table 'nova_api.cell_mappings' doesn't exist"),
      {},
      2,
      'DbMissingTable',
      /table cell_mappings is missing in the nova_api database .*not a nova_api database\?/,
      /api_db sync/,
    ],
    [
      driver('ER_NO_SUCH_TABLE', "Table 'nova_api.resource_providers' doesn't exist"),
      {label: 'placement'},
      2,
      'DbMissingTable',
      /placement tables missing in this database \(resource_providers\).*--placement-db with the nova_api URL/,
      /Stein/,
    ],
    [
      driver('ER_BAD_FIELD_ERROR', "Unknown column 'mapped' in 'field list'"),
      {label: 'cell1', table: 'compute_nodes'},
      2,
      'DbMissingColumn',
      /compute_nodes\.mapped is missing in the cell1 database .*older than Ocata\?/,
      /db sync/,
    ],
    [
      driver('ER_BAD_FIELD_ERROR', "Unknown column 'i.hidden' in 'field list'"),
      {label: 'cell1', table: 'instances'},
      2,
      'DbMissingColumn',
      /instances\.hidden is missing .*older than Stein\?/,
      /Zed/,
    ],
    [
      driver('ER_BAD_FIELD_ERROR', "Unknown column 'frob' in 'field list'"),
      {table: 'flavors'},
      2,
      'DbMissingColumn',
      /flavors\.frob is missing .*older than Zed\?/,
      /Zed/,
    ],
    [driver('PROTOCOL_CONNECTION_LOST'), {table: 'instances'}, 1, 'DbConnectionLost', /lost the connection .* while reading instances/, /Re-run/],
    [
      driver('ER_LOCK_DEADLOCK', 'Deadlock found'),
      {},
      1,
      'DbDeadlock',
      /the nova_api database at \S+ rolled back this transaction: a concurrent write touched the same rows \(error 1213: deadlock\)/,
      /audit again/,
    ],
    [
      driver('ER_LOCK_DEADLOCK', 'Deadlock found'),
      {label: 'placement', node: 'galera-2', table: 'allocations'},
      1,
      'DbDeadlock',
      /the placement database \(node galera-2\) at \S+ rolled back this transaction \(on allocations\): a concurrent write, possibly on another Galera node, touched/,
      /audit again/,
    ],
    [
      driver('ER_LOCK_WAIT_TIMEOUT', 'Lock wait timeout exceeded; try restarting transaction'),
      {label: 'placement', node: 'galera-3'},
      1,
      'DbLockTimeout',
      /timed out in the placement database \(node galera-3\) at \S+: either this Galera node did not catch up with the cluster within repl\.causal_read_timeout/,
      /wsrep_local_state_comment/,
    ],
    [
      driver('ER_OPTION_PREVENTS_STATEMENT', 'The MariaDB server is running with the --read-only option'),
      {label: 'nova_api', node: 'galera-2'},
      2,
      'DbReadOnly',
      /the nova_api database \(node galera-2\) at \S+ is read-only/,
      /primary/,
    ],
    [
      driver('ER_LOCK_WAIT_TIMEOUT', 'Lock wait timeout exceeded; try restarting transaction'),
      {label: 'cell cell1', table: 'instances'},
      1,
      'DbLockTimeout',
      /timed out waiting for a lock in the cell cell1 database at mysql\+pymysql:\/\/nova:\*\*\*@db7:3306\/nova_api on instances/,
      /CLOUDCTL_DB_LOCK_TIMEOUT/,
    ],
    [
      Object.assign(driver('CLOUDCTL_NO_ANSWER'), {timeoutMs: 35_000}),
      {label: 'cell cell1', table: 'instances'},
      1,
      'DbTimeout',
      /the cell cell1 database at \S+ did not answer within 35 s \(instances\)/,
      /Timeouts/,
    ],
    [
      Object.assign(new Error('Query execution was interrupted (max_statement_time exceeded)'), {
        errno: 1969,
        sqlMessage: 'Query execution was interrupted (max_statement_time exceeded)',
      }),
      {},
      1,
      'DbStatementTimeout',
      /a statement ran out of time in the nova_api database/,
      /CLOUDCTL_DB_STATEMENT_TIMEOUT/,
    ],
  ] as const)('%s', (error, ctx, exitCode, code, message, hint) => {
    const e = mapDbError(error, {label: 'nova_api', url, ...ctx})
    expect(e).toBeInstanceOf(CloudctlError)
    expect(e.exitCode).toBe(exitCode)
    expect(e.code).toBe(code)
    expect(e.message).toMatch(message)
    expect(e.message).not.toContain('\n')
    if (hint) expect(e.hint).toMatch(hint)
    expect(`${e.message} ${e.hint ?? ''}`).not.toContain('Mapper-Secret1')
  })

  it('scrubs a password the driver echoes verbatim', () => {
    const e = mapDbError(driver('ER_SOMETHING', 'bad value near Mapper-Secret1'), {url})
    expect(e.message).toContain('bad value near ***')
  })

  it('passes CloudctlErrors through', () => {
    const original = new CloudctlError('already mapped')
    expect(mapDbError(original)).toBe(original)
  })

  it('an error nothing names says "the database", never "the database database"', () => {
    const e = mapDbError(driver('ER_SOMETHING', 'odd'))
    expect(e.message).toBe('error from the database: ER_SOMETHING: odd')
  })
})

describe('openConnection / eachRow (MariaDB)', () => {
  it('eachRow hands every row over in order, maps a query error, and rejects with a throwing handler', async () => {
    const conn = await openConnection(withDatabase(testDsn(), 'information_schema'), {label: 'probe'})
    try {
      const got: number[] = []
      const digits =
        '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)'
      const sql = `SELECT a.d * 1000 + b.d * 100 + c.d * 10 + e.d + ? AS n FROM ${digits} a, ${digits} b, ${digits} c, ${digits} e ORDER BY n`
      expect(await eachRow<{n: number}>(conn, sql, [1], (row) => got.push(Number(row.n)))).toBe(10_000)
      expect(got.every((n, i) => n === i + 1)).toBe(true)
      await expect(eachRow(conn, 'SELECT nope FROM TABLES', [], () => {}, {label: 'probe', table: 'TABLES'})).rejects.toThrow(
        /TABLES\.nope is missing in the probe database/,
      )
      let seen = 0
      const boom = eachRow(conn, sql, [1], () => {
        if (++seen === 3) throw new Error('handler broke')
      })
      await expect(boom).rejects.toThrow('handler broke')
      expect(seen).toBe(3)
      // the connection is still usable: the rest of the result was drained
      expect(await eachRow(conn, 'SELECT 1 AS one', [], () => {})).toBe(1)
    } finally {
      await closeConnection(conn)
    }
  })

  it('eachRow rejects (does not hang) when the connection is killed mid-query', async () => {
    const conn = await openConnection(withDatabase(testDsn(), 'information_schema'), {label: 'probe'})
    const killer = await openConnection(withDatabase(testDsn(), 'information_schema'), {label: 'killer'})
    try {
      const [[{id}]] = (await conn.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{id: number}]]
      const started = Date.now()
      const slow = expect(eachRow(conn, 'SELECT SLEEP(5) AS s', [], () => {}, {label: 'probe', table: 'TABLES'})).rejects.toMatchObject({
        code: 'DbConnectionLost',
      })
      await new Promise((r) => setTimeout(r, 200))
      await killer.query(`KILL CONNECTION ${Number(id)}`)
      await slow
      expect(Date.now() - started).toBeLessThan(3000)
    } finally {
      await closeConnection(conn)
      await closeConnection(killer)
    }
  })

  it('a read gives up when the server sends nothing for the idle bound, and no statement limit kills a read that streams', async () => {
    const saved = process.env.CLOUDCTL_DB_READ_IDLE_TIMEOUT
    process.env.CLOUDCTL_DB_READ_IDLE_TIMEOUT = '1'
    const conn = await openConnection(withDatabase(testDsn(), 'information_schema'), {label: 'probe'})
    try {
      const started = Date.now()
      await expect(eachRow(conn, 'SELECT SLEEP(30) AS s', [], () => {}, {label: 'probe', table: 'TABLES'})).rejects.toMatchObject({
        code: 'DbTimeout',
        exitCode: 1,
      })
      expect(Date.now() - started).toBeLessThan(5000)
      // Rows that keep coming for longer than the idle bound are not cut off.
      const slow = await openConnection(withDatabase(testDsn(), 'information_schema'), {label: 'probe'})
      try {
        let n = 0
        const t0 = Date.now()
        // Each row larger than the server's network buffer, so that it is sent as soon as it is made.
        await eachRow(
          slow,
          "SELECT SLEEP(0.4) AS s, REPEAT('x', 40000) AS pad FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) d",
          [],
          () => n++,
        )
        expect(n).toBe(6)
        expect(Date.now() - t0).toBeGreaterThan(1500)
      } finally {
        await closeConnection(slow)
      }
    } finally {
      if (saved === undefined) delete process.env.CLOUDCTL_DB_READ_IDLE_TIMEOUT
      else process.env.CLOUDCTL_DB_READ_IDLE_TIMEOUT = saved
      await closeConnection(conn)
    }
  })

  it('maps an unknown database on connect to exit 2', async () => {
    await expect(openConnection(withDatabase(testDsn(), 'cloudctl_no_such_db_x'), {label: 'nova_api'})).rejects.toMatchObject({
      exitCode: 2,
      code: 'DbUnknownDatabase',
    })
  })
})
