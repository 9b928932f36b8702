/**
 * Issue 9, secrets: passwords with @ / ? # : % never leave, and still work. Real MariaDB accounts
 * with such passwords; the built CLI run as an operator would (execa on bin/run.js); every stdout,
 * stderr, --json error, snapshot file, undo file, audit log and DEBUG=* trace grepped for every
 * password (and its encoded forms and telling fragments).
 *
 *  - cell A's cell_mappings.database_connection holds 'Zk/9?x#Q' raw, as SQLAlchemy accepts it:
 *    the cell must be read (available), not "bad port";
 *  - nova_api, placement, cell0 and (templated, filled from nova.conf [database]) cell B use an
 *    account whose password has @ / ? # : % in it, percent-encoded where nova needs it;
 *  - a repair (cells discover-hosts --apply --yes) writes through both, so undo files and the
 *    audit log are covered, and the templated cell is written to with the same URL it was read with;
 *  - a weak password ('nova') is redacted where it is a password and nowhere else.
 */
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gunzipSync} from 'node:zlib'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseDbUrl} from '../../src/lib/db/url.js'
import {CELL0_UUID} from '../../src/lib/domain/snapshot.js'
import {type CliResult, cloudctl, oneJsonDocument} from '../support/cli.js'
import {adminConnection, createTestCloud, seedSnapshot, type TestCloud, testDsn} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

const tag = process.pid.toString(36)
// Raw in a URL, as item 5 found it in cell_mappings: SQLAlchemy reads it (the password ends at '@').
const RAW_PW = 'Zk/9?x#Q'
const RAW_USER = `cc_sr_${tag}`
// Every character that needs care: @ and % must be encoded for nova; / ? # : may stay raw.
const HARD_PW = 'Qw@9/x?#:%Lm'
const HARD_USER = `cc_sh_${tag}`
const HARD_IN_URL = HARD_PW.replace(/%/g, '%25').replace(/@/g, '%40')
const WEAK_USER = `cc_sw_${tag}`
const WEAK_PW = 'nova'

/** Everything that must never be printed: the passwords, their URL forms and fragments of them. */
const LEAKS = [
  RAW_PW,
  HARD_PW,
  HARD_IN_URL,
  encodeURIComponent(HARD_PW),
  encodeURIComponent(RAW_PW),
  'Zk/9',
  'x#Q',
  'Qw@9',
  'Qw%409',
  '9/x?#',
  '%Lm',
  '%25Lm',
  'Sekr3tPw7731',
  'ss:w/rd%',
  'p@ss',
]

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-adv-secrets-'))
const runs: Array<{what: string; text: string}> = []

function record(what: string, r: CliResult): CliResult {
  runs.push({what: `${what} stdout`, text: r.stdout}, {what: `${what} stderr`, text: r.stderr})
  return r
}

function expectNoLeak(what: string, text: string): void {
  for (const leak of LEAKS) expect(text.includes(leak), `${what} contains '${leak}':\n${text.slice(0, 2000)}`).toBe(false)
}

function urlFor(user: string, passwordInUrl: string, database: string): string {
  const u = parseDbUrl(testDsn())
  return `mysql+pymysql://${user}:${passwordInUrl}@${u.host}:${u.port}/${database}?charset=utf8`
}

describe('adversarial: secrets never leave (built CLI, real MariaDB)', () => {
  let cloud: TestCloud
  let rawCell: string
  let templatedCell: string
  let api: string
  let placement: string
  let novaConf: string
  const env = {XDG_CONFIG_HOME: dir, HOME: dir, CLOUDCTL_UNDO_DIR: join(dir, 'undo'), CLOUDCTL_AUDIT_LOG: join(dir, 'audit.log')}

  beforeAll(async () => {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
    const generated = generateCloud({seed: 91, cells: 2, hostsPerCell: 4, now, faults: {'cell.host-unmapped': 1}})
    // database names with 'nova' in them, as in production: a weak password 'nova' must not rewrite them
    cloud = await createTestCloud('nova', {cells: ['cell1', 'cell2']})
    await seedSnapshot(generated.snapshot, cloud)
    const unmappedHost = generated.planted.find((p) => p.code === 'cell.host-unmapped')!.subject.host!
    const hostCell = generated.snapshot.nova.compute_nodes.find((cn) => cn.host === unmappedHost)!.cell_uuid
    templatedCell = generated.snapshot.cells.find((c) => c.uuid === hostCell)!.name!
    rawCell = templatedCell === 'cell1' ? 'cell2' : 'cell1'

    const admin = await adminConnection()
    try {
      const host = parseDbUrl(testDsn()).host
      for (const [user, pw] of [
        [RAW_USER, RAW_PW],
        [HARD_USER, HARD_PW],
        [WEAK_USER, WEAK_PW],
      ]) {
        await admin.query('DROP USER IF EXISTS ?@?', [user, host])
        await admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, host, pw])
        for (const db of cloud.allDatabases()) await admin.query(`GRANT ALL ON \`${db}\`.* TO ?@?`, [user, host])
      }
      const setCell = (where: string, arg: string, url: string) =>
        admin.query(`UPDATE \`${cloud.databases.api}\`.cell_mappings SET database_connection = ? WHERE ${where} = ?`, [url, arg])
      await setCell('name', rawCell, urlFor(RAW_USER, RAW_PW, cloud.databases.cells[rawCell]))
      await setCell('name', templatedCell, `{scheme}://{username}:{password}@{hostname}:{port}/${cloud.databases.cells[templatedCell]}?{query}`)
      await setCell('uuid', CELL0_UUID, urlFor(HARD_USER, HARD_IN_URL, cloud.databases.cell0))
    } finally {
      await admin.end()
    }
    api = urlFor(HARD_USER, HARD_IN_URL, cloud.databases.api)
    placement = urlFor(HARD_USER, HARD_IN_URL, cloud.databases.placement)
    novaConf = join(dir, 'nova.conf')
    // nova fills the template from [database] connection with urllib, which stops the user info at
    // a raw / ? or #: there the password must be fully encoded. It goes into the template as written.
    writeFileSync(novaConf, `[database]\nconnection = ${urlFor(HARD_USER, encodeURIComponent(HARD_PW), 'nova')}\n`, {mode: 0o600})
  }, 120_000)

  afterAll(async () => {
    const admin = await adminConnection()
    try {
      for (const user of [RAW_USER, HARD_USER, WEAK_USER]) await admin.query('DROP USER IF EXISTS ?@?', [user, parseDbUrl(testDsn()).host])
    } finally {
      await admin.end()
    }
    await cloud?.drop()
  })

  const source = (): string[] => ['--api-db', api, '--placement-db', placement, '--nova-conf', novaConf]

  it('reads every cell through those passwords: the raw-password cell is available, not "bad port"', async () => {
    const r = record('cells list --json', await cloudctl(['cells', 'list', '--json', ...source()], {env}))
    expect(r.exitCode, r.stderr).toBe(0)
    const {cells} = oneJsonDocument(r.stdout) as {cells: Array<{name: string; state: string; error: string | null; database_connection: string}>}
    expect(cells.map((c) => [c.name, c.state, c.error])).toEqual([
      ['cell0', 'available', null],
      ['cell1', 'available', null],
      ['cell2', 'available', null],
    ])
    expect(cells.find((c) => c.name === rawCell)!.database_connection).toBe(
      `mysql+pymysql://${RAW_USER}:***@${parseDbUrl(testDsn()).host}:${parseDbUrl(testDsn()).port}/${cloud.databases.cells[rawCell]}?charset=utf8`,
    )

    const human = record('cells list', await cloudctl(['cells', 'list', ...source()], {env}))
    expect(human.exitCode, human.stderr).toBe(0)
    expect(human.stdout).not.toContain('UNAVAILABLE')
  })

  it('audits the cloud and captures a snapshot file with every cell available and no password in it', async () => {
    const audit = record('audit all', await cloudctl(['audit', 'all', ...source()], {env}))
    expect([0, 3], audit.stderr).toContain(audit.exitCode)
    const json = record('audit all --json', await cloudctl(['audit', 'all', '--json', ...source()], {env}))
    const doc = oneJsonDocument(json.stdout) as {unavailable_cells?: unknown[]; findings?: Array<{code: string}>}
    expect(JSON.stringify(doc)).not.toMatch(/unavailable.*bad port/i)
    expect(doc.findings?.map((f) => f.code)).toContain('cell.host-unmapped')

    const file = join(dir, 'snap.json.gz')
    const cap = record('snapshot capture', await cloudctl(['snapshot', 'capture', ...source(), '-o', file], {env}))
    expect(cap.exitCode, cap.stderr).toBe(0)
    const text = gunzipSync(readFileSync(file)).toString('utf8')
    runs.push({what: 'snapshot file', text})
    const snap = JSON.parse(text) as {cells: Array<{name: string; status: string; database_connection: string}>}
    expect(snap.cells.map((c) => c.status)).toEqual(['available', 'available', 'available'])
    expect(text).toContain(`${RAW_USER}:***@`)
    expect(text).toContain(`${HARD_USER}:***@`)
  })

  it('applies a repair through those passwords, into the templated cell; undo file and audit log stay clean', async () => {
    const r = record('cells discover-hosts --apply', await cloudctl(['cells', 'discover-hosts', '--apply', '--yes', ...source()], {env}))
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(4)
    const undoFiles = readdirSync(join(dir, 'undo'))
    expect(undoFiles.length).toBeGreaterThan(0)
    for (const f of undoFiles) runs.push({what: `undo file ${f}`, text: readFileSync(join(dir, 'undo', f), 'utf8')})
    runs.push({what: 'audit.log', text: readFileSync(join(dir, 'audit.log'), 'utf8')})
    const again = record('audit cells', await cloudctl(['audit', 'cells', '--json', ...source()], {env}))
    expect((oneJsonDocument(again.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)).not.toContain('cell.host-unmapped')
  })

  it('DEBUG=* shows argv and everything else with the passwords masked', async () => {
    const r = record(
      'DEBUG=* audit cells',
      await cloudctl(['audit', 'cells', ...source(), '--cell-db', `${rawCell}=${urlFor(RAW_USER, RAW_PW, cloud.databases.cells[rawCell])}`], {
        env: {...env, DEBUG: '*'},
      }),
    )
    expect([0, 3], r.stderr.slice(-2000)).toContain(r.exitCode)
    expect(r.stderr).toMatch(/argv/)
    expect(r.stderr).toContain(`${HARD_USER}:***@`)
  })

  it.each([
    ['a URL without scheme', 'rsec:Sekr3tPw7731@127.0.0.1/nova_api', /is not a URL/],
    ['a raw @ in the password', 'mysql://rtest:p@ss:w/rd%@127.0.0.1/db', /cannot be parsed|'@' outside the user info/],
    ['a raw @ that still parses', `mysql+pymysql://${HARD_USER}:${HARD_PW}@127.0.0.1/db`, /'@' outside the user info|cannot be parsed/],
  ])('refuses %s with exit 2, and echoes nothing of it (human, --json, DEBUG, audit log)', async (_what, bad, message) => {
    const human = record(`bad --api-db ${_what}`, await cloudctl(['audit', 'all', '--api-db', bad, '--placement-db', placement], {env}))
    expect(human.exitCode).toBe(2)
    expect(human.stderr).toMatch(message)
    const json = record(`bad --api-db ${_what} --json`, await cloudctl(['audit', 'all', '--json', '--api-db', bad, '--placement-db', placement], {env}))
    expect(json.exitCode).toBe(2)
    const dbg = record(
      `bad --api-db ${_what} DEBUG`,
      await cloudctl(['audit', 'all', '--api-db', bad, '--placement-db', placement], {env: {...env, DEBUG: '*'}}),
    )
    expect(dbg.exitCode).toBe(2)
    const repair = record(
      `bad --api-db ${_what} repair`,
      await cloudctl(['repair', 'aggregates', '--apply', '--yes', '--api-db', bad, '--placement-db', placement], {env}),
    )
    expect(repair.exitCode).toBe(2)
    if (existsSync(join(dir, 'audit.log'))) runs.push({what: 'audit.log after refused runs', text: readFileSync(join(dir, 'audit.log'), 'utf8')})
  })

  it("a weak password ('nova') is hidden where it is a password, and 'nova' stays readable everywhere else", async () => {
    const weakApi = urlFor(WEAK_USER, WEAK_PW, cloud.databases.api)
    const r = await cloudctl(
      [
        'cells',
        'list',
        '--json',
        '--api-db',
        weakApi,
        '--placement-db',
        urlFor(WEAK_USER, WEAK_PW, cloud.databases.placement),
        '--cell-db',
        `cell0=${urlFor(WEAK_USER, WEAK_PW, cloud.databases.cell0)}`,
        '--nova-conf',
        novaConf,
      ],
      {env},
    )
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).not.toContain(`${WEAK_USER}:${WEAK_PW}@`)
    // every '***' is a password position, and the database names keep their 'nova'
    expect(r.stdout.replace(/:\*\*\*@/g, '')).not.toContain('***')
    expect(r.stdout).toContain(cloud.databases.cell0)

    // the lock a repair takes is named after the real nova_api database, not a redacted one
    const dry = await cloudctl(
      ['repair', 'aggregates', '--api-db', weakApi, '--placement-db', urlFor(WEAK_USER, WEAK_PW, cloud.databases.placement), '--nova-conf', novaConf],
      {env},
    )
    expect([0, 3], dry.stderr).toContain(dry.exitCode)
    expect(`${dry.stdout}${dry.stderr}`.replace(/:\*\*\*@/g, '')).not.toContain('***')
  })

  it('takes the password from a my.cnf option file (read_default_file), keeping it out of argv', async () => {
    const cnf = join(dir, 'my.cnf')
    const u = parseDbUrl(testDsn())
    writeFileSync(cnf, `[client]\nuser = ${HARD_USER}\npassword = "${HARD_PW}"\nhost = ${u.host}\nport = ${u.port}\n`, {mode: 0o600})
    const viaFile = (db: string): string => `mysql+pymysql:///${db}?read_default_file=${cnf}&charset=utf8`
    const args = [
      'cells',
      'list',
      '--json',
      '--api-db',
      viaFile(cloud.databases.api),
      '--placement-db',
      viaFile(cloud.databases.placement),
      '--nova-conf',
      novaConf,
    ]
    for (const arg of args) expect(arg).not.toContain(HARD_PW)
    const r = record('cells list via option file', await cloudctl(args, {env}))
    expect(r.exitCode, r.stderr).toBe(0)
    const {cells} = oneJsonDocument(r.stdout) as {cells: Array<{state: string}>}
    expect(cells.map((c) => c.state)).toEqual(['available', 'available', 'available'])
    const missing = record(
      'option file missing',
      await cloudctl(['cells', 'list', '--api-db', `mysql+pymysql:///x?read_default_file=${join(dir, 'nope.cnf')}`, '--placement-db', placement], {env}),
    )
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/cannot read option file .*nope\.cnf/)
  })

  it('nothing anywhere contains any of the passwords', () => {
    expect(runs.length).toBeGreaterThan(20)
    for (const {what, text} of runs) expectNoLeak(what, text)
  })
})
