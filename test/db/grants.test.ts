/**
 * Least privilege (issue 26 item 7, issue 29 item 18) with real accounts on the test MariaDB and the
 * built CLI: a SELECT-only account, a placement-only writer and a `<cloud>\_%` wildcard SELECT
 * account audit and capture; every repair they cannot write is refused with exit 2 naming database,
 * table and grant, before the prompt and before any lock or transaction (CHECKSUM TABLE of every
 * table unchanged, no audit-log line, no undo file); a dry run says what --apply would lack; a
 * wildcard-granted repair account whose password has @ and / applies, and its undo is refused to
 * the read-only account and applied by the repair account; a column grant short of one column is
 * named down to the column, and applies once that column is granted.
 *
 * The cells' database_connection is nova's template ({username}:{password}@...), filled from the
 * nova.conf each account's run is given, so every database is read and written as that account.
 */
import {mkdtempSync, readdirSync, writeFileSync, existsSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {checkGrants} from '../../src/lib/db/grants.js'
import {parseDbUrl} from '../../src/lib/db/url.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {type CliResult, cloudctl, oneJsonDocument} from '../support/cli.js'
import {adminConnection, createTestCloud, seedSnapshot, type TestCloud, testDsn} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-3)}`
const host = parseDbUrl(testDsn()).host
const port = parseDbUrl(testDsn()).port

interface Account {
  user: string
  password: string
  grants: (c: TestCloud, base: string) => string[]
}

const likeEscaped = (s: string) => s.replace(/[_%\\]/g, (ch) => `\\${ch}`)
const ACCOUNTS = {
  ro: {user: `cc_gro_${tag}`, password: 'ro-Pw@9/x', grants: (c: TestCloud) => c.allDatabases().map((db) => `GRANT SELECT ON \`${db}\`.* TO ?@?`)},
  placement: {
    user: `cc_gpl_${tag}`,
    password: 'pl-Pw-7',
    grants: (c: TestCloud) => [
      ...c.allDatabases().map((db) => `GRANT SELECT ON \`${db}\`.* TO ?@?`),
      `GRANT INSERT, UPDATE, DELETE ON \`${c.databases.placement}\`.* TO ?@?`,
    ],
  },
  wildRo: {user: `cc_gwr_${tag}`, password: 'wr-Pw-5', grants: (_c: TestCloud, base: string) => [`GRANT SELECT ON \`${likeEscaped(base)}\\_%\`.* TO ?@?`]},
  repair: {
    user: `cc_grp_${tag}`,
    password: 'Rp@ir/x-3',
    grants: (_c: TestCloud, base: string) => [`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${likeEscaped(base)}\\_%\`.* TO ?@?`],
  },
  // Column grants: INSERT into host_mappings of every column discover-hosts writes but updated_at.
  columns: {
    user: `cc_gcol_${tag}`,
    password: 'co-Pw-1',
    grants: (c: TestCloud) => [
      ...c.allDatabases().map((db) => `GRANT SELECT ON \`${db}\`.* TO ?@?`),
      `GRANT INSERT (created_at, cell_id, host) ON \`${c.databases.api}\`.host_mappings TO ?@?`,
    ],
  },
} satisfies Record<string, Account>
type Who = keyof typeof ACCOUNTS

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-grants-'))

describe('least privilege: the grants a plan needs are checked first (built CLI, real accounts)', () => {
  let cloud: TestCloud
  let base: string

  const url = (who: Who, db: string) => `mysql+pymysql://${ACCOUNTS[who].user}:${encodeURIComponent(ACCOUNTS[who].password)}@${host}:${port}/${db}?charset=utf8`
  const args = (who: Who) => [
    '--api-db',
    url(who, cloud.databases.api),
    '--placement-db',
    url(who, cloud.databases.placement),
    '--nova-conf',
    join(dir, `${who}.conf`),
  ]
  // COLUMNS: the notes matched below stay on one line (human output wraps at the width, 120 when piped).
  const env = (who: Who) => ({
    COLUMNS: '10000',
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    CLOUDCTL_UNDO_DIR: join(dir, `undo-${who}`),
    CLOUDCTL_AUDIT_LOG: join(dir, `audit-${who}.log`),
  })
  const run = (who: Who, argv: string[], input?: string): Promise<CliResult> => cloudctl([...argv, ...args(who)], {env: env(who), input})

  /** CHECKSUM TABLE of every table of every database of the cloud. */
  async function checksums(): Promise<Record<string, string>> {
    const admin = await adminConnection()
    try {
      const [tables] = (await admin.query('SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (?) ORDER BY 1, 2', [
        cloud.allDatabases(),
      ])) as unknown as [Array<{s: string; t: string}>]
      const [rows] = (await admin.query(`CHECKSUM TABLE ${tables.map((x) => `\`${x.s}\`.\`${x.t}\``).join(', ')}`)) as unknown as [
        Array<{Table: string; Checksum: string | number | null}>,
      ]
      return Object.fromEntries(rows.map((r) => [r.Table, String(r.Checksum)]))
    } finally {
      await admin.end()
    }
  }

  /** Nothing ran past the grant check: no audit-log line, no undo file. */
  function executorNeverRan(who: Who): void {
    const log = join(dir, `audit-${who}.log`)
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('')
    const undo = join(dir, `undo-${who}`)
    expect(existsSync(undo) ? readdirSync(undo).filter((f) => !f.startsWith('.')) : []).toEqual([])
  }

  beforeAll(async () => {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
    const g = generateCloud({
      seed: 26,
      cells: 1,
      hostsPerCell: 4,
      now,
      faults: {'allocation.consumer-deleted': 2, 'cell.instance-unmapped': 1, 'cell.host-unmapped': 1},
    })
    cloud = await createTestCloud('grants', {cells: ['cell1']})
    base = cloud.databases.api.replace(/_api$/, '')
    await seedSnapshot(g.snapshot, cloud)
    const admin = await adminConnection()
    try {
      for (const c of ['cell0', 'cell1'])
        await admin.query(`UPDATE \`${cloud.databases.api}\`.cell_mappings SET database_connection = ? WHERE name = ?`, [
          `{scheme}://{username}:{password}@{hostname}:{port}/${c === 'cell0' ? cloud.databases.cell0 : cloud.databases.cells.cell1}?{query}`,
          c,
        ])
      for (const [who, a] of Object.entries(ACCOUNTS) as Array<[Who, Account]>) {
        await admin.query('DROP USER IF EXISTS ?@?', [a.user, host])
        await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [a.user, host, a.password])
        for (const g of a.grants(cloud, base)) await admin.query(g, [a.user, host])
        writeFileSync(join(dir, `${who}.conf`), `[database]\nconnection = ${url(who, 'nova')}\n`, {mode: 0o600})
      }
    } finally {
      await admin.end()
    }
  }, 180_000)

  afterAll(async () => {
    const admin = await adminConnection()
    try {
      for (const a of Object.values(ACCOUNTS)) await admin.query('DROP USER IF EXISTS ?@?', [a.user, host])
    } finally {
      await admin.end()
    }
    await cloud?.drop()
  })

  it.each(['ro', 'placement', 'wildRo'] as const)('%s: audits and captures work', async (who) => {
    const audit = await run(who, ['audit', 'all', '--json'])
    expect(audit.exitCode, audit.stderr).toBe(3)
    const codes = (oneJsonDocument(audit.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)
    expect(codes).toEqual(expect.arrayContaining(['allocation.consumer-deleted', 'cell.instance-unmapped', 'cell.host-unmapped']))
    const cap = await run(who, ['snapshot', 'capture', '-o', join(dir, `${who}.json.gz`)])
    expect(cap.exitCode, cap.stderr).toBe(0)
  })

  it.each([
    ['ro', ['repair', 'leaks'], 'placement', 'DELETE', 'allocations'],
    ['wildRo', ['repair', 'leaks'], 'placement', 'DELETE', 'allocations'],
    ['ro', ['cells', 'discover-hosts'], 'api', 'INSERT', 'host_mappings'],
    ['placement', ['cells', 'map-instances'], 'api', 'INSERT', 'instance_mappings'],
    ['placement', ['cells', 'discover-hosts'], 'api', 'INSERT', 'host_mappings'],
  ] as const)('%s: %j --apply is refused before the prompt and the lock, naming database, table and grant', async (who, cmd, dbKey, privilege, table) => {
    const database = dbKey === 'api' ? cloud.databases.api : cloud.databases.placement
    const before = await checksums()
    const r = await run(who, [...cmd, '--apply', '--yes'])
    expect(r.exitCode, r.stderr).toBe(2)
    expect(r.stderr).toContain(`lacks ${privilege} on ${database}.${table}`)
    expect(r.stderr).toContain(`'${ACCOUNTS[who].user}'@'${host}'`)
    expect(r.stderr).toMatch(/nothing was locked or written/)
    expect(r.stderr).toMatch(new RegExp(`GRANT [A-Z, ]*${privilege}[A-Z, ]* ON \`${database}\`\\.\`${table}\``))
    expect(r.stderr).not.toContain(ACCOUNTS[who].password)
    // Without --yes and without a terminal: the grant refusal still comes first, no prompt is shown.
    const asked = await run(who, [...cmd, '--apply'], 'y\n')
    expect(asked.exitCode).toBe(2)
    expect(asked.stderr).toContain(`lacks ${privilege} on ${database}.${table}`)
    expect(asked.stderr).not.toMatch(/Apply these changes|without confirmation/)
    expect(await checksums()).toEqual(before)
    executorNeverRan(who)
  })

  it('a dry run keeps its plan and says what --apply would lack', async () => {
    const r = await run('ro', ['repair', 'leaks'])
    expect(r.exitCode, r.stderr).toBe(3)
    expect(`${r.stdout}${r.stderr}`).toMatch(
      new RegExp(
        `--apply would be refused: the database account '${ACCOUNTS.ro.user}'@'${host}' of placement \\(${cloud.databases.placement}\\) lacks DELETE on ${cloud.databases.placement}\\.allocations`,
      ),
    )
    const ok = await run('repair', ['repair', 'leaks'])
    expect(ok.exitCode, ok.stderr).toBe(3)
    expect(`${ok.stdout}${ok.stderr}`).not.toMatch(/would be refused|grants could not be checked/)
  })

  it('the wildcard-granted repair account (password with @ and /) applies; undo is refused to the read-only account and applied by it', async () => {
    const original = await checksums()
    const r = await run('repair', ['repair', 'leaks', '--apply', '--yes', '--json'])
    expect(r.exitCode, r.stderr).toBe(4)
    const undoFile = (oneJsonDocument(r.stdout) as {applied: {undo_file: string}}).applied.undo_file
    const repaired = await checksums()
    expect(repaired).not.toEqual(original)
    expect(r.stderr).not.toContain(ACCOUNTS.repair.password)

    const refused = await run('ro', ['repair', 'undo', undoFile, '--apply', '--yes'])
    expect(refused.exitCode, refused.stderr).toBe(2)
    // The undo re-inserts the allocations the repair deleted (and puts the generations back).
    expect(refused.stderr).toMatch(/refusing to apply: the database account .* lacks /)
    expect(refused.stderr).toContain(`INSERT on ${cloud.databases.placement}.allocations`)
    expect(await checksums()).toEqual(repaired)
    executorNeverRan('ro')

    const undone = await run('repair', ['repair', 'undo', undoFile, '--apply', '--yes'])
    expect(undone.exitCode, undone.stderr).toBe(4)
    expect(await checksums()).toEqual(original)
  })
  it('a database that cannot be asked is left unchecked, never allowed or denied; a locked table does not hold the check up', async () => {
    const plan: RepairPlan = {
      plan_version: 1,
      kind: 'leaks',
      created_at: new Date().toISOString(),
      findings: [],
      db_order: ['cell:c1', 'placement'],
      steps: [
        {db: 'cell:c1', table: 'instances', op: 'check', where: {uuid: 'x'}, rows: [], why: 'check'},
        {db: 'placement', table: 'allocations', op: 'delete', key: {id: 1}, expect: {consumer_id: 'x'}, why: 'leak'},
      ],
      db_labels: {'cell:c1': 'cell cell1', placement: 'placement'},
      notes: [],
      skipped: [],
    }
    const locker = await openConnection(cloud.placementUrl, {label: 'locker'})
    try {
      await locker.query('LOCK TABLES allocations WRITE')
      const t0 = Date.now()
      const r = await checkGrants(plan, async (db) => {
        if (db === 'placement') return openConnection(url('repair', cloud.databases.placement), {label: 'placement'})
        throw new Error('cell1 does not answer')
      })
      expect(r.missing).toEqual([])
      expect(r.unchecked.map((u) => [u.label, u.reason])).toEqual([['cell cell1', 'cell1 does not answer']])
      // PREPARE checks privileges without waiting for a table another session holds locked.
      expect(Date.now() - t0).toBeLessThan(20_000)
    } finally {
      await locker.query('UNLOCK TABLES')
      await closeConnection(locker)
    }
    // Unlocked, the same account is denied the DELETE: the denial is the server's answer.
    const denied = await checkGrants(plan, async (db) =>
      openConnection(db === 'placement' ? url('ro', cloud.databases.placement) : url('ro', cloud.databases.cells.cell1), {label: db}),
    )
    expect(denied.unchecked).toEqual([])
    expect(denied.missing.map((m) => [m.database, m.table, m.privilege])).toEqual([[cloud.databases.placement, 'allocations', 'DELETE']])
  })
  it('column grants count: INSERT of one column missing is named, and once granted the repair applies', async () => {
    const api = cloud.databases.api
    const dry = await run('columns', ['cells', 'discover-hosts'])
    expect(dry.exitCode, dry.stderr).toBe(3)
    expect(`${dry.stdout}${dry.stderr}`).toContain(`lacks INSERT (column updated_at) on ${api}.host_mappings`)
    expect(`${dry.stdout}${dry.stderr}`).toContain(`GRANT INSERT (\`updated_at\`) ON \`${api}\`.\`host_mappings\``)
    const admin = await adminConnection()
    try {
      await admin.query(`GRANT INSERT (updated_at) ON \`${api}\`.host_mappings TO ?@?`, [ACCOUNTS.columns.user, host])
    } finally {
      await admin.end()
    }
    const before = await checksums()
    const r = await run('columns', ['cells', 'discover-hosts', '--apply', '--yes'])
    expect(r.exitCode, r.stderr).toBe(4)
    expect(await checksums()).not.toEqual(before)
  })
})
