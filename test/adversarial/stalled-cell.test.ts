/**
 * Issue 25, item 5: a stalled cell hung `repair leaks --apply` (a LOCK TABLES ... WRITE on the cell's
 * instances: the server waits lock_wait_timeout, a day) and, taken while the repair held its locks,
 * kept placement's rows locked for 108 s. With real processes (the built CLI held at a point of the
 * executor by test/support/repair-pause.mjs) and CHECKSUM TABLE of every table:
 * - the cell's table locked before the repair locks anything: it gives up within its lock wait
 *   (exit 5, nothing changed), and while it waits a placement write on the very rows it will change
 *   goes through at once: cells are locked before placement;
 * - a cell row being written (uncommitted) while the repair holds placement's rows and re-checks the
 *   cell: it gives up after 1 s and releases placement (exit 5);
 * - the LOCK TABLES asked for while the repair holds the cell's rows: the repair is not held up by it;
 * - a frozen server (a second mariadbd, SIGSTOP'd) holding the cell's database: the repair gives up
 *   within its client bound (exit 5, placement free meanwhile; frozen while placement's rows are held,
 *   they are released within 6 s), and an audit reads the other databases and reports the cell
 *   unavailable within the connect bound.
 */
import {type ChildProcess, execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Connection} from '../../src/lib/db/connection.js'
import {cloudctl} from '../support/cli.js'
import {addAllocations, baseCloud} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {changedTables, checksums, paused, startCli, waitFor} from './executor-support.js'

const UNKNOWN = 'c0ffee00-0000-4000-8000-00000000beef'
const PAUSE_MS = 2500

function findBinary(name: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin']) if (existsSync(join(dir, name))) return join(dir, name)
  return undefined
}
const MARIADBD = findBinary('mariadbd')
const INSTALL_DB = findBinary('mariadb-install-db')

describe('a stalled or frozen cell (CLI, MariaDB)', {timeout: 300_000}, () => {
  let world: RepairWorld
  let src: string[]
  let tmp: string
  let gone: string
  let cell1Db: string

  beforeAll(async () => {
    const {b} = baseCloud(95)
    b.addInstance('compute1', 'm1.small')
    gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    const s = b.build()
    // A consumer no instance or migration is: the plan re-checks "no such row" in every cell.
    addAllocations(s, UNKNOWN, 'compute2', {0: 1, 1: 512})
    world = await repairWorld('xstall', s)
    cell1Db = world.cloud.databases.cells.cell1
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-stall-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
    if (tmp) rmSync(tmp, {recursive: true, force: true})
  })

  const state = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]

  /**
   * A placement write on the rows the repair changes (the consumers' allocation and consumer rows;
   * same values, rolled back), from another connection: how long it waited for their locks. It fails
   * when it had to wait more than `maxS` seconds.
   */
  async function placementWrite(maxS: number): Promise<number> {
    const conn = await openConnection(world.cloud.placementUrl)
    try {
      await conn.query('SET SESSION innodb_lock_wait_timeout = ?', [maxS])
      const t0 = Date.now()
      await conn.query('START TRANSACTION')
      await conn.query('UPDATE allocations SET used = used WHERE consumer_id IN (?)', [[gone, UNKNOWN]])
      await conn.query('UPDATE consumers SET generation = generation WHERE uuid IN (?)', [[gone, UNKNOWN]])
      const ms = Date.now() - t0
      await conn.query('ROLLBACK')
      return ms
    } finally {
      await closeConnection(conn)
    }
  }

  async function sessionOn(url: string): Promise<Connection> {
    return openConnection(url)
  }

  it('LOCK TABLES on the cell before the repair locks anything: exit 5 within the lock wait; placement writable all along', async () => {
    const before = await checksums(world.cloud)
    const locker = await sessionOn(world.cloud.cellUrls.cell1)
    try {
      const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...state('a')], `after-begin:${PAUSE_MS}`, {CLOUDCTL_DB_LOCK_TIMEOUT: '4'})
      await paused(cli)
      await locker.query('LOCK TABLES instances WRITE, migrations WRITE')
      // The repair is now waiting for the cell's table: the server says so.
      const admin = await sessionOn(world.cloud.apiUrl)
      try {
        await waitFor(async () => {
          const [rows] = await admin.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND STATE LIKE 'Waiting for table metadata lock'",
            [cell1Db],
          )
          return Number((rows as Array<{n: number}>)[0].n) > 0 ? true : undefined
        }, 20_000)
      } finally {
        await closeConnection(admin)
      }
      const waitingSince = Date.now()
      expect(await placementWrite(1)).toBeLessThan(1000)
      expect(cli.running(), 'the repair is still waiting for the cell').toBe(true)
      const r = await cli.done
      const waited = Date.now() - waitingSince
      expect(r.exitCode, r.stdout + r.stderr).toBe(5)
      expect(r.stderr).toMatch(/gave up: timed out waiting for a lock in the cell cell1 database at mysql\+pymysql:\/\/\S+ on (instances|migrations)/)
      expect(r.stderr).toMatch(/Nothing was written/)
      expect(waited).toBeLessThan(4000 + 5000)
    } finally {
      await locker.query('UNLOCK TABLES')
      await closeConnection(locker)
    }
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })

  it("a cell row being written while the repair holds placement's rows: it gives up after 1 s and releases them (exit 5)", async () => {
    const before = await checksums(world.cloud)
    const writer = await sessionOn(world.cloud.cellUrls.cell1)
    try {
      const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...state('b')], `after-undo:${PAUSE_MS}`)
      await paused(cli)
      // A migration of the unknown consumer, not committed: the re-check of "no such migration" meets its lock.
      await writer.query('START TRANSACTION')
      await writer.query('INSERT INTO migrations (created_at, uuid, deleted) VALUES (UTC_TIMESTAMP(), ?, 0)', [UNKNOWN])
      await sleep(PAUSE_MS + 200)
      // Before the change, placement stayed locked for as long as the cell row was (50 s for InnoDB's
      // default wait); this write would time out after 5 s.
      const ms = await placementWrite(5)
      expect(ms).toBeLessThan(3000)
      const r = await cli.done
      expect(r.exitCode, r.stdout + r.stderr).toBe(5)
      expect(r.stderr).toMatch(/timed out waiting for a lock in the cell cell1 database at \S+ on migrations/)
    } finally {
      await writer.query('ROLLBACK')
      await closeConnection(writer)
    }
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })

  describe.skipIf(!MARIADBD || !INSTALL_DB)(`a frozen server${MARIADBD && INSTALL_DB ? '' : ' (skipped: mariadbd / mariadb-install-db not installed)'}`, () => {
    let server: ChildProcess | undefined
    let dir: string
    const port = 33_000 + (process.pid % 900)
    let frozenUrl: string
    let frozen = false

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cloudctl-frozen-'))
      execFileSync(
        INSTALL_DB as string,
        ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--user=root', '--auth-root-authentication-method=normal', '--skip-test-db'],
        {stdio: 'ignore'},
      )
      server = spawn(
        MARIADBD as string,
        [
          '--no-defaults',
          `--datadir=${join(dir, 'data')}`,
          `--port=${port}`,
          '--bind-address=127.0.0.1',
          `--socket=${join(dir, 'sock')}`,
          `--pid-file=${join(dir, 'pid')}`,
          '--user=root',
          '--skip-grant-tables',
          '--innodb-buffer-pool-size=16M',
          `--log-error=${join(dir, 'error.log')}`,
        ],
        {stdio: 'ignore'},
      )
      const base = `mysql+pymysql://root@127.0.0.1:${port}`
      const probe = await waitFor(async () => {
        try {
          return await openConnection(`${base}/mysql`)
        } catch {
          return undefined
        }
      }, 60_000)
      // The cell's database, copied to the second server: the CLI is pointed at it with --cell-db.
      const from = await openConnection(world.cloud.cellUrls.cell1)
      try {
        await probe.query(`CREATE DATABASE \`${cell1Db}\` DEFAULT CHARACTER SET utf8`)
        await probe.query(`USE \`${cell1Db}\``)
        await probe.query('SET FOREIGN_KEY_CHECKS = 0')
        const [tables] = await from.query('SHOW FULL TABLES WHERE Table_type = ?', ['BASE TABLE'])
        for (const t of (tables as Array<Record<string, string>>).map((r) => Object.values(r)[0])) {
          const [[create]] = (await from.query(`SHOW CREATE TABLE \`${t}\``)) as unknown as [[Record<string, string>]]
          await probe.query(create['Create Table'])
          const [rows] = await from.query(`SELECT * FROM \`${t}\``)
          const list = rows as Array<Record<string, unknown>>
          if (list.length > 0)
            await probe.query(
              `INSERT INTO \`${t}\` (${Object.keys(list[0])
                .map((c) => `\`${c}\``)
                .join(', ')}) VALUES ?`,
              [list.map((r) => Object.values(r))],
            )
        }
      } finally {
        await closeConnection(from)
        await closeConnection(probe)
      }
      frozenUrl = `${base}/${cell1Db}`
    }, 120_000)

    afterAll(async () => {
      if (server?.pid !== undefined) {
        if (frozen) process.kill(server.pid, 'SIGCONT')
        process.kill(server.pid, 'SIGTERM')
        await new Promise((r) => (server?.exitCode !== null ? r(undefined) : server?.once('exit', r)))
      }
      if (dir) rmSync(dir, {recursive: true, force: true})
    }, 60_000)

    const freeze = () => {
      process.kill(server?.pid as number, 'SIGSTOP')
      frozen = true
    }
    const thaw = () => {
      process.kill(server?.pid as number, 'SIGCONT')
      frozen = false
    }

    async function frozenChecksums(): Promise<Map<string, string>> {
      const conn = await openConnection(frozenUrl)
      try {
        const out = new Map<string, string>()
        const [tables] = await conn.query('SHOW FULL TABLES WHERE Table_type = ?', ['BASE TABLE'])
        for (const t of (tables as Array<Record<string, string>>).map((r) => Object.values(r)[0])) {
          const [rows] = await conn.query(`CHECKSUM TABLE \`${t}\``)
          out.set(t, String((rows as Array<{Checksum: unknown}>)[0].Checksum))
        }
        return out
      } finally {
        await closeConnection(conn)
      }
    }

    it('the repair reads the cell there and plans the same repair (the copy is the cell)', async () => {
      const r = await cloudctl(['repair', 'leaks', ...src, '--cell-db', `cell1=${frozenUrl}`])
      expect(r.exitCode, r.stdout + r.stderr).toBe(3)
      expect(r.stdout).toContain(gone)
    })

    it('SIGSTOP once the repair has begun: exit 5 within its client bound, placement writable meanwhile, nothing changed anywhere', async () => {
      const before = await checksums(world.cloud)
      const beforeFrozen = await frozenChecksums()
      // Client bound: the statement limit (2 s) and 5 s more.
      const cli = startCli(['repair', 'leaks', ...src, '--cell-db', `cell1=${frozenUrl}`, '--apply', '--yes', ...state('c')], `after-begin:${PAUSE_MS}`, {
        CLOUDCTL_DB_STATEMENT_TIMEOUT: '2',
      })
      try {
        await paused(cli)
        freeze()
        await sleep(PAUSE_MS + 500)
        const since = Date.now()
        expect(await placementWrite(1)).toBeLessThan(1000)
        const r = await cli.done
        expect(r.exitCode, r.stdout + r.stderr).toBe(5)
        expect(r.stderr).toMatch(
          new RegExp(`gave up: the cell cell1 database at mysql\\+pymysql://root@127\\.0\\.0\\.1:${port}/\\S+ did not answer within 7 s \\(instances\\)`),
        )
        expect(Date.now() - since).toBeLessThan(7000 + 3000)
      } finally {
        thaw()
        await cli.done
      }
      expect(changedTables(before, await checksums(world.cloud))).toEqual([])
      expect(changedTables(beforeFrozen, await frozenChecksums())).toEqual([])
    })

    it("SIGSTOP while the repair holds placement's rows (before its re-checks): it gives up within 6 s and releases them (exit 5)", async () => {
      const before = await checksums(world.cloud)
      const beforeFrozen = await frozenChecksums()
      const cli = startCli(['repair', 'leaks', ...src, '--cell-db', `cell1=${frozenUrl}`, '--apply', '--yes', ...state('c2')], `after-undo:${PAUSE_MS}`)
      try {
        await paused(cli)
        freeze()
        await sleep(PAUSE_MS + 200)
        // The re-check of the cell waits at most 1 s for a lock and 6 s for an answer; this write on
        // the rows the repair holds in placement waits for it, and would fail after 10 s.
        const ms = await placementWrite(10)
        expect(ms).toBeLessThan(6000 + 2000)
        const r = await cli.done
        expect(r.exitCode, r.stdout + r.stderr).toBe(5)
        expect(r.stderr).toMatch(/gave up: the cell cell1 database at \S+ did not answer within 6 s/)
      } finally {
        thaw()
        await cli.done
      }
      expect(changedTables(before, await checksums(world.cloud))).toEqual([])
      expect(changedTables(beforeFrozen, await frozenChecksums())).toEqual([])
    })

    it('an audit while the server is frozen: the cell is reported unavailable within the connect bound, never read as empty', async () => {
      freeze()
      try {
        const t0 = Date.now()
        const r = await cloudctl(['audit', 'leaks', ...src, '--cell-db', `cell1=${frozenUrl}`, '--json'], {
          env: {CLOUDCTL_DB_CONNECT_TIMEOUT: '3'},
          timeout: 60_000,
        })
        expect(Date.now() - t0).toBeLessThan(3000 + 15_000)
        expect(r.exitCode, r.stderr).toBe(3)
        const doc = JSON.parse(r.stdout) as {cells?: Array<{name: string; status: string; error?: string}>; findings: Array<{code: string}>}
        expect(JSON.stringify(doc)).toMatch(/cell1[^}]*unavailable|unavailable[^}]*cell1/)
        expect(r.stdout).toMatch(/ETIMEDOUT/)
        expect(doc.findings.map((f) => f.code)).not.toContain('allocation.consumer-deleted')
      } finally {
        thaw()
      }
    })
  })

  it('LOCK TABLES asked for while the repair holds the cell rows: the repair is not held up by it and applies (exit 4)', async () => {
    const locker = await sessionOn(world.cloud.cellUrls.cell1)
    try {
      const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...state('d')], `after-undo:${PAUSE_MS}`)
      await paused(cli)
      const t0 = Date.now()
      // Waits for the repair's transaction on the cell: the repair holds the table's metadata lock.
      const locked = locker.query('LOCK TABLES instances WRITE').then(() => Date.now())
      const r = await cli.done
      expect(r.exitCode, r.stdout + r.stderr).toBe(4)
      const ended = Date.now()
      expect(ended - t0).toBeLessThan(PAUSE_MS + 5000)
      expect(await locked).toBeGreaterThanOrEqual(ended - 1000)
    } finally {
      await locker.query('UNLOCK TABLES')
      await closeConnection(locker)
    }
  })
})
