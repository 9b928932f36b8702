/**
 * The database servers operators run (issue 26 "Done when"): MySQL 9.7 from Debian sid (Canonical's
 * charms deploy MySQL) and MariaDB 11.8 from Debian 13, each started from its chroot
 * (test/topology/server-chroot.sh) on a port of its own, with the real Zed schemas
 * (test/support/schema.ts). On each, through the built CLI and accounts with passwords that need
 * URL-encoding (MySQL: caching_sha2_password, its default): audits and a capture as a SELECT-only
 * account; every repair refused to it before prompt and lock; a repair and its undo as the repair
 * account with CHECKSUM TABLE of every table before and after; roles that count only when active on
 * login; on MySQL, a partial revoke.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {type Connection, closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {type CliResult, cloudctl, oneJsonDocument} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'
import {CHROOT_SERVERS, type RunningServer, startChrootServer, unavailable} from './servers-support.js'

const HOST = '127.0.0.1'
const USERS = {
  repair: ['cc_repair', 'Rp@ir/x-3'],
  ro: ['cc_audit', 'Au@dit/7'],
  role: ['cc_role', 'Ro@le/5'],
  partial: ['cc_partial', 'Pa@rt/1'],
  lock: ['cc_lock', 'Lo@ck/2'],
} as const
type Who = keyof typeof USERS

async function withDsn<T>(dsn: string, fn: () => Promise<T>): Promise<T> {
  const saved = process.env.CLOUDCTL_TEST_DSN
  process.env.CLOUDCTL_TEST_DSN = dsn
  try {
    return await fn()
  } finally {
    if (saved === undefined) delete process.env.CLOUDCTL_TEST_DSN
    else process.env.CLOUDCTL_TEST_DSN = saved
  }
}

for (const spec of CHROOT_SERVERS) {
  const why = unavailable(spec)
  describe.skipIf(why !== undefined)(`${spec.name}${why === undefined ? '' : `: skipped, ${why}`}`, () => {
    let srv: RunningServer | undefined
    let cloud: TestCloud
    let admin: Connection
    const dir = mkdtempSync(join(tmpdir(), `cloudctl-${spec.kind}-`))
    const mysql = spec.kind === 'mysql'

    const url = (who: Who, db: string) => `mysql+pymysql://${USERS[who][0]}:${encodeURIComponent(USERS[who][1])}@${HOST}:${srv?.port}/${db}?charset=utf8`
    const run = (who: Who, argv: string[]): Promise<CliResult> =>
      cloudctl(
        [...argv, '--api-db', url(who, cloud.databases.api), '--placement-db', url(who, cloud.databases.placement), '--nova-conf', join(dir, `${who}.conf`)],
        {
          // COLUMNS: the notes matched below stay on one line (human output wraps at the width, 120 when piped)
          env: {
            COLUMNS: '10000',
            HOME: dir,
            XDG_CONFIG_HOME: dir,
            CLOUDCTL_UNDO_DIR: join(dir, `undo-${who}`),
            CLOUDCTL_AUDIT_LOG: join(dir, `audit-${who}.log`),
          },
          timeout: 300_000,
        },
      )

    async function checksums(): Promise<Record<string, string>> {
      const [tables] = (await admin.query('SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (?) ORDER BY 1, 2', [
        cloud.allDatabases(),
      ])) as unknown as [Array<{s: string; t: string}>]
      const [rows] = (await admin.query(`CHECKSUM TABLE ${tables.map((x) => `\`${x.s}\`.\`${x.t}\``).join(', ')}`)) as unknown as [
        Array<{Table: string; Checksum: string | number | null}>,
      ]
      expect(rows.length).toBeGreaterThan(40)
      return Object.fromEntries(rows.map((r) => [r.Table, String(r.Checksum)]))
    }

    beforeAll(async () => {
      srv = await startChrootServer(spec, mysql ? ['--partial-revokes=ON'] : [])
      const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
      const g = generateCloud({seed: 97, cells: 1, hostsPerCell: 4, now, faults: {'allocation.consumer-deleted': 2, 'cell.host-unmapped': 1}})
      cloud = await withDsn(srv.dsn, async () => {
        const c = await createTestCloud(spec.kind, {cells: ['cell1']})
        await seedSnapshot(g.snapshot, c)
        return c
      })
      admin = await openConnection(`${srv.dsn}/`, {label: spec.name})
      // Each account reads and writes the cells as itself: nova's template, filled from its nova.conf.
      for (const [name, db] of [
        ['cell0', cloud.databases.cell0],
        ['cell1', cloud.databases.cells.cell1],
      ])
        await admin.query(`UPDATE \`${cloud.databases.api}\`.cell_mappings SET database_connection = ? WHERE name = ?`, [
          `{scheme}://{username}:{password}@{hostname}:{port}/${db}?{query}`,
          name,
        ])
      const grant = async (privs: string, who: Who) => {
        for (const db of cloud.allDatabases()) await admin.query(`GRANT ${privs} ON \`${db}\`.* TO ?@?`, [USERS[who][0], HOST])
      }
      for (const who of Object.keys(USERS) as Who[]) {
        await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [USERS[who][0], HOST, USERS[who][1]])
        writeFileSync(join(dir, `${who}.conf`), `[database]\nconnection = ${url(who, 'nova')}\n`, {mode: 0o600})
      }
      await grant('SELECT, INSERT, UPDATE, DELETE', 'repair')
      await grant('SELECT', 'ro')
      // The role user's writes come from a role that is granted but not (yet) active on login.
      await grant('SELECT', 'role')
      await admin.query('CREATE ROLE cc_writer')
      for (const db of cloud.allDatabases()) await admin.query(`GRANT INSERT, UPDATE, DELETE ON \`${db}\`.* TO cc_writer`)
      await admin.query('GRANT cc_writer TO ?@?', [USERS.role[0], HOST])
      // Writes only where the leak repair writes (placement); elsewhere it only reads and locks rows.
      await grant('SELECT', 'lock')
      await admin.query(`GRANT INSERT, UPDATE, DELETE ON \`${cloud.databases.placement}\`.* TO ?@?`, [USERS.lock[0], HOST])
      if (mysql) {
        // Partial revokes (MySQL 8.0.16+): everything on every database, except DELETE on placement's.
        await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO ?@?', [USERS.partial[0], HOST])
        await admin.query(`REVOKE DELETE ON \`${cloud.databases.placement}\`.* FROM ?@?`, [USERS.partial[0], HOST])
      }
    }, 600_000)

    afterAll(async () => {
      await closeConnection(admin)
      // The datadir goes with the server: no database or account outlives the test.
      await srv?.stop()
    }, 120_000)

    it('is the server it says, and the accounts use its default authentication', async () => {
      const [[v]] = (await admin.query('SELECT VERSION() AS v')) as unknown as [[{v: string}]]
      expect(v.v).toMatch(spec.version)
      if (mysql) {
        const [rows] = (await admin.query('SELECT plugin FROM mysql.user WHERE user = ?', [USERS.repair[0]])) as unknown as [Array<{plugin: string}>]
        expect(rows.map((r) => r.plugin)).toEqual(['caching_sha2_password'])
      }
    })

    it.each([
      [['cells', 'list']],
      [['hosts', 'list']],
      [['simulate', 'capacity']],
      [['simulate', 'boot', '--flavor', 'm1.small']],
      [['repair', 'providers']],
      [['repair', 'aggregates']],
      [['repair', 'usage']],
      [['repair', 'pinning']],
      [['cells', 'map-instances']],
    ])('reads the live databases as the SELECT-only account: %j', async (argv) => {
      const r = await run('ro', argv)
      expect([0, 3], `${r.stdout}\n${r.stderr}`).toContain(r.exitCode)
      expect(r.stderr).not.toMatch(/^Error:/m)
    })

    it('a SELECT-only account audits and captures', async () => {
      const audit = await run('ro', ['audit', 'all', '--json'])
      expect(audit.exitCode, audit.stderr).toBe(3)
      const codes = (oneJsonDocument(audit.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)
      expect(codes).toEqual(expect.arrayContaining(['allocation.consumer-deleted', 'cell.host-unmapped']))
      const cap = await run('ro', ['snapshot', 'capture', '-o', join(dir, 'snap.json.gz')])
      expect(cap.exitCode, cap.stderr).toBe(0)
    })

    it.each([
      ['repair', 'leaks'],
      ['cells', 'discover-hosts'],
    ])('a SELECT-only account is refused %s %s --apply before prompt and lock, nothing written', async (topic, verb) => {
      const before = await checksums()
      const r = await run('ro', [topic, verb, '--apply', '--yes'])
      expect(r.exitCode, r.stderr).toBe(2)
      // MySQL also refuses a SELECT-only account the locking reads (LOCK TABLES names what allows them).
      expect(r.stderr).toMatch(
        new RegExp(
          `refusing to apply: the database account '${USERS.ro[0]}'@'${HOST}' of .* lacks (DELETE|INSERT|UPDATE|LOCK TABLES) on .*nothing was locked or written`,
        ),
      )
      expect(r.stderr).not.toContain(USERS.ro[1])
      expect(await checksums()).toEqual(before)
    })

    it('the repair account applies repairs (placement, nova_api) and their undo; CHECKSUM TABLE is back where it started', async () => {
      const original = await checksums()
      const r = await run('repair', ['repair', 'leaks', '--apply', '--yes', '--json'])
      expect(r.exitCode, r.stderr).toBe(4)
      const applied = (oneJsonDocument(r.stdout) as {applied: {undo_file: string; rows_changed: number}}).applied
      expect(applied.rows_changed).toBeGreaterThan(0)
      expect(await checksums()).not.toEqual(original)
      const after = await run('repair', ['audit', 'leaks', '--json'])
      expect((oneJsonDocument(after.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)).not.toContain('allocation.consumer-deleted')
      const undo = await run('repair', ['repair', 'undo', applied.undo_file, '--apply', '--yes'])
      expect(undo.exitCode, undo.stderr).toBe(4)
      expect(await checksums()).toEqual(original)
      // nova_api and the cells too: discover-hosts writes host_mappings (and compute_nodes.mapped).
      const hosts = await run('repair', ['cells', 'discover-hosts', '--apply', '--yes', '--json'])
      expect(hosts.exitCode, hosts.stderr).toBe(4)
      expect(await checksums()).not.toEqual(original)
      const hostsUndo = await run('repair', [
        'repair',
        'undo',
        (oneJsonDocument(hosts.stdout) as {applied: {undo_file: string}}).applied.undo_file,
        '--apply',
        '--yes',
      ])
      expect(hostsUndo.exitCode, hostsUndo.stderr).toBe(4)
      expect(await checksums()).toEqual(original)
    })

    it('a role counts once it is active on login (default role), not before', async () => {
      const inactive = await run('role', ['repair', 'leaks'])
      expect(inactive.exitCode, inactive.stderr).toBe(3)
      expect(`${inactive.stdout}${inactive.stderr}`).toMatch(/--apply would be refused: .* lacks/)
      await admin.query(mysql ? 'SET DEFAULT ROLE cc_writer TO ?@?' : 'SET DEFAULT ROLE cc_writer FOR ?@?', [USERS.role[0], HOST])
      const active = await run('role', ['repair', 'leaks'])
      expect(active.exitCode, active.stderr).toBe(3)
      expect(`${active.stdout}${active.stderr}`).not.toMatch(/would be refused|could not be checked/)
    })

    it(`a writer of placement alone may repair leaks${mysql ? ' once it has LOCK TABLES where the repair only locks rows (MySQL)' : ''}`, async () => {
      const dry = await run('lock', ['repair', 'leaks'])
      expect(dry.exitCode, dry.stderr).toBe(3)
      const text = `${dry.stdout}${dry.stderr}`
      if (!mysql) {
        expect(text).not.toMatch(/would be refused/)
        return
      }
      // MySQL's locking reads (SELECT ... FOR UPDATE) of the rows the repair relies on need more than SELECT.
      expect(text).toMatch(/--apply would be refused: .* lacks LOCK TABLES on /)
      for (const db of cloud.allDatabases()) await admin.query(`GRANT LOCK TABLES ON \`${db}\`.* TO ?@?`, [USERS.lock[0], HOST])
      const granted = await run('lock', ['repair', 'leaks'])
      expect(`${granted.stdout}${granted.stderr}`).not.toMatch(/would be refused|could not be checked/)
    })

    it.skipIf(!mysql)('a partial revoke of DELETE on placement refuses the leak repair, naming it', async () => {
      const before = await checksums()
      const r = await run('partial', ['repair', 'leaks', '--apply', '--yes'])
      expect(r.exitCode, r.stderr).toBe(2)
      expect(r.stderr).toContain(`lacks DELETE on ${cloud.databases.placement}.`)
      expect(await checksums()).toEqual(before)
    })
  })
}
