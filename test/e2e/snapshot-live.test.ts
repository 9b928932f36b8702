import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gunzipSync} from 'node:zlib'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseDbUrl} from '../../src/lib/db/url.js'
import {cloudctl, oneJsonDocument} from '../support/cli.js'
import {adminConnection, createTestCloud, seedSnapshot, type TestCloud, testDsn} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

// A dedicated MariaDB account with a password, so the test can prove it never leaks.
const PASSWORD = 'Sup3r-S3cret-pw'
const USER = `cc_e2e_${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'cloudctl-live-'))

function withUser(url: string, password = PASSWORD): string {
  return url.replace(/:\/\/[^@/]*@/, `://${USER}:${encodeURIComponent(password)}@`)
}

describe('snapshot capture / show against live databases (built CLI)', () => {
  let cloud: TestCloud
  let generated: ReturnType<typeof generateCloud>
  const env = {XDG_CONFIG_HOME: dir, HOME: dir}

  beforeAll(async () => {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
    generated = generateCloud({seed: 11, cells: 2, hostsPerCell: 6, now})
    cloud = await createTestCloud('e2e_live', {cells: ['cell1', 'cell2']})
    await seedSnapshot(generated.snapshot, cloud)
    const admin = await adminConnection()
    try {
      const host = parseDbUrl(testDsn()).host
      await admin.query(`CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?`, [USER, host, PASSWORD])
      for (const db of cloud.allDatabases()) await admin.query(`GRANT SELECT ON \`${db}\`.* TO ?@?`, [USER, host])
      // cells are reached through the URLs in cell_mappings: give them the password too
      for (const [name, url] of Object.entries(cloud.cellUrls)) {
        await admin.query(`UPDATE \`${cloud.databases.api}\`.cell_mappings SET database_connection = ? WHERE name = ?`, [withUser(url), name])
      }
      await admin.query(`UPDATE \`${cloud.databases.api}\`.cell_mappings SET database_connection = ? WHERE uuid = '00000000-0000-0000-0000-000000000000'`, [
        withUser(cloud.cell0Url),
      ])
    } finally {
      await admin.end()
    }
  })

  afterAll(async () => {
    const admin = await adminConnection()
    try {
      await admin.query(`DROP USER IF EXISTS ?@?`, [USER, parseDbUrl(testDsn()).host])
    } finally {
      await admin.end()
    }
    await cloud?.drop()
  })

  it('captures every cell with passwords redacted, and show reads the file back', async () => {
    const file = join(dir, 'snap.json.gz')
    const cap = await cloudctl(['snapshot', 'capture', '--api-db', withUser(cloud.apiUrl), '--placement-db', withUser(cloud.placementUrl), '-o', file], {env})
    expect(cap.exitCode, cap.stderr).toBe(0)
    const text = gunzipSync(readFileSync(file)).toString('utf8')
    for (const out of [text, cap.stdout, cap.stderr]) expect(out).not.toContain(PASSWORD)
    expect(text).toContain(`${USER}:***@`)

    const show = await cloudctl(['snapshot', 'show', file, '--json'], {env})
    expect(show.exitCode).toBe(0)
    const summary = oneJsonDocument(show.stdout) as {
      cells: Array<{name: string; status: string; hosts: number}>
      totals: {hosts: number; instances: number; allocations: number}
    }
    const s = generated.snapshot
    expect(summary.totals.hosts).toBe(s.nova.compute_nodes.filter((c) => c.deleted === 0).length)
    expect(summary.totals.allocations).toBe(s.placement.allocations.length)
    expect(summary.totals.instances).toBe(s.nova.instances.filter((i) => i.deleted === 0 && !i.hidden).length)
    expect(summary.cells.map((c) => [c.name, c.status])).toEqual([
      ['cell0', 'available'],
      ['cell1', 'available'],
      ['cell2', 'available'],
    ])
    expect(show.stdout).not.toContain(PASSWORD)
  })

  it('snapshot show live reads the databases directly and prints the summary table', async () => {
    const r = await cloudctl(['snapshot', 'show', 'live', '--api-db', withUser(cloud.apiUrl), '--placement-db', withUser(cloud.placementUrl)], {env})
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/cell1/)
    expect(r.stdout).toMatch(/hosts \(live compute nodes\)\s*│\s*12/)
    expect(r.stdout + r.stderr).not.toContain(PASSWORD)
  })

  it('a wrong password is one line, exit 2, and does not echo either password', async () => {
    const wrong = 'Wr0ng-pass-XYZ'
    const r = await cloudctl(['snapshot', 'show', 'live', '--api-db', withUser(cloud.apiUrl, wrong), '--placement-db', withUser(cloud.placementUrl, wrong)], {
      env,
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^Error: .*(denied|password|credentials)/im)
    expect(r.stderr).not.toContain(wrong)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('an unreachable cell is recorded as unavailable, not empty', async () => {
    const file = join(dir, 'partial.json')
    const r = await cloudctl(
      [
        'snapshot',
        'capture',
        '--api-db',
        withUser(cloud.apiUrl),
        '--placement-db',
        withUser(cloud.placementUrl),
        '--cell-db',
        `cell2=mysql+pymysql://nova:${PASSWORD}@127.0.0.1:1/nova`,
        '-o',
        file,
      ],
      {env},
    )
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/cell2 is UNAVAILABLE/)
    expect(r.stderr + r.stdout).not.toContain(PASSWORD)
    const show = await cloudctl(['snapshot', 'show', file], {env})
    expect(show.stdout).toMatch(/UNAVAILABLE/)
    expect(show.stdout).toMatch(/could not be read: their hosts and instances are unknown, not absent/)
  })

  it('nothing configured: a clear configuration error with a hint', async () => {
    const r = await cloudctl(['snapshot', 'show', 'live'], {env: {...env, XDG_CONFIG_HOME: dir, HOME: dir}})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^Hint: /m)
  })
})
