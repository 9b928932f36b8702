import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProgressEvent} from '../../src/lib/snapshot/source.js'
import {captureLive} from '../../src/lib/db/capture.js'
import {closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {parseDbUrl, withDatabase} from '../../src/lib/db/url.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudctlError} from '../../src/lib/errors.js'
import {capturedCells, createTestCloud, seedSnapshot, type TestCloud, testDsn} from '../support/db.js'
import {CELL1_UUID, CELL2_UUID, F09, sampleSnapshot} from '../support/builders.js'

// No developer's ~/.config/cloudctl/config.yaml or CLOUDCTL_* variable may leak into these tests.
const savedEnv = {...process.env}
beforeAll(() => {
  process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cloudctl-cfg-'))
  for (const k of Object.keys(process.env)) if (k.startsWith('CLOUDCTL_') && k !== 'CLOUDCTL_TEST_DSN') delete process.env[k]
})
afterAll(() => {
  process.env = savedEnv
})

/** What a capture of the seeded cloud must return: the seeded rows, cells pointing at the test databases, each with the database it was read from. */
async function expected(seeded: Snapshot, cloud: TestCloud, captured: Snapshot): Promise<Snapshot> {
  return {
    ...seeded,
    captured_at: captured.captured_at,
    source: captured.source,
    // the release read from the schema (test/releases asserts it; these hand-written schemas have no alembic_version)
    release: captured.release,
    cells: await capturedCells(seeded.cells, cloud),
  }
}

async function exec(url: string, sql: string | string[], params: unknown[] = []): Promise<void> {
  const conn = await openConnection(url)
  try {
    for (const one of Array.isArray(sql) ? sql : [sql]) await conn.query(one, params)
  } finally {
    await closeConnection(conn)
  }
}

async function captureError(p: Promise<unknown>): Promise<CloudctlError> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(CloudctlError)
    return error as CloudctlError
  }
  throw new Error('expected captureLive to fail')
}

describe('captureLive: round trip', () => {
  let cloud: TestCloud
  const seeded = sampleSnapshot()
  beforeAll(async () => {
    cloud = await createTestCloud('cap_rt', {cells: ['cell1', 'cell2']})
    await seedSnapshot(seeded, cloud)
  })
  afterAll(async () => cloud?.drop())

  it('returns exactly the seeded rows (every table, soft-deleted rows, NULLs, blobs, FLOAT ratios)', async () => {
    const events: ProgressEvent[] = []
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, requestSpecs: true}, (e) => events.push(e))
    expect(snap).toEqual(await expected(seeded, cloud, snap))
    expect(snap.source.kind).toBe('live')
    expect(snap.source.description).toBe(parseDbUrl(cloud.apiUrl).display)
    expect(Number.isNaN(Date.parse(snap.captured_at))).toBe(false)
    // progress per table and per database, cells included
    for (const [database, table, rows] of [
      ['nova_api', 'instance_mappings', 6],
      ['placement', 'allocations', 8],
      ['cell1', 'instances', 5],
      ['cell0', 'instances', 1],
      ['cell2', 'compute_nodes', 1],
    ] as const) {
      expect(events).toContainEqual({database, table, rows, done: true})
    }
  })

  it('reads FLOAT columns as the widened single (0.9 -> 0.8999999761581421) and keeps only CUSTOM_* resource classes', async () => {
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    expect(snap.placement.inventories.find((i) => i.id === 3)?.allocation_ratio).toBe(F09)
    expect(F09).not.toBe(0.9)
    expect(snap.nova.compute_nodes.find((c) => c.cell_uuid === CELL1_UUID && c.id === 1)?.disk_allocation_ratio).toBe(F09)
    // the loader also wrote the 21 standard classes with their fixed ids, as placement's sync does
    expect(snap.placement.resource_classes.map((r) => r.name)).toEqual(['CUSTOM_BAREMETAL_SMALL', 'CUSTOM_GOLD'])
    // request_specs only on request
    expect(snap.nova_api.request_specs).toBeUndefined()
  })

  it('reads soft-deleted instances with their columns, and extra only from the live instance_extra row', async () => {
    // a soft-deleted instance_extra row must not be joined
    await exec(cloud.cellUrls.cell1, "INSERT INTO instance_extra (instance_uuid, flavor, deleted) VALUES ('aaaaaaaa-0000-4000-8000-000000000006', 'old', 5)")
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    const gone = snap.nova.instances.find((i) => i.uuid === 'aaaaaaaa-0000-4000-8000-000000000006')
    expect(gone).toMatchObject({deleted: 7, deleted_at: '2024-03-01 00:00:00', vm_state: 'deleted', extra: null})
    await exec(cloud.cellUrls.cell1, 'DELETE FROM instance_extra WHERE deleted = 5')
  })

  it('matches instance_extra to its instance by uuid: the lowest live id wins, orphans are ignored', async () => {
    const snap0 = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    const live = snap0.nova.instances.find((i) => i.cell_uuid === CELL1_UUID && i.deleted === 0 && i.extra !== null)
    expect(live).toBeDefined()
    // a second live row for the same instance (nova never writes one) and a row for no instance
    await exec(cloud.cellUrls.cell1, [
      // the orphan needs the foreign key off, as after a manual cleanup of instances
      'SET foreign_key_checks = 0',
      `INSERT INTO instance_extra (instance_uuid, flavor, deleted) VALUES ('${live?.uuid}', 'second', 0)`,
      "INSERT INTO instance_extra (instance_uuid, flavor, deleted) VALUES ('ffffffff-0000-4000-8000-00000000dead', 'orphan', 0)",
    ])
    try {
      const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
      expect(snap.nova.instances).toEqual(snap0.nova.instances)
    } finally {
      await exec(cloud.cellUrls.cell1, "DELETE FROM instance_extra WHERE flavor IN ('second', 'orphan')")
    }
  })

  it('matches instance_extra rows written in another order than the instances (past the look-ahead, some missing)', async () => {
    const uuids = Array.from({length: 30}, (_, i) => `bbbbbbbb-0000-4000-8000-${String(i).padStart(12, '0')}`)
    await exec(
      cloud.cellUrls.cell2,
      uuids.map((u, i) => `INSERT INTO instances (uuid, host, node, vm_state, deleted, display_name) VALUES ('${u}', 'h', 'n', 'active', 0, 'order-${i}')`),
    )
    // Reversed, every third instance without a row: the cursor misses and the uuid map answers.
    const withExtra = uuids.filter((_, i) => i % 3 !== 0).reverse()
    await exec(
      cloud.cellUrls.cell2,
      withExtra.map((u) => `INSERT INTO instance_extra (instance_uuid, flavor, deleted) VALUES ('${u}', 'f-${u}', 0)`),
    )
    try {
      const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
      const got = snap.nova.instances.filter((i) => i.uuid.startsWith('bbbbbbbb'))
      expect(got.map((i) => i.uuid)).toEqual(uuids)
      expect(got.map((i) => i.extra?.flavor ?? null)).toEqual(uuids.map((u, i) => (i % 3 === 0 ? null : `f-${u}`)))
    } finally {
      await exec(cloud.cellUrls.cell2, ["DELETE FROM instance_extra WHERE instance_uuid LIKE 'bbbbbbbb%'", "DELETE FROM instances WHERE uuid LIKE 'bbbbbbbb%'"])
    }
  })

  it('reads a NULL deleted as 0', async () => {
    await exec(cloud.cellUrls.cell2, 'UPDATE services SET deleted = NULL WHERE id = 1')
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    expect(snap.nova.services.find((s) => s.cell_uuid === CELL2_UUID)?.deleted).toBe(0)
    await exec(cloud.cellUrls.cell2, 'UPDATE services SET deleted = 0 WHERE id = 1')
  })

  it('fails with exit 2 and a hint when the placement URL points at a database without placement tables', async () => {
    const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.cellUrls.cell1}))
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(/placement tables missing in this database \(resource_providers\)/)
    expect(e.message).toContain('--placement-db with the nova_api URL')
    expect(e.message).not.toContain('\n')
  })

  it('rejects a --cell-db override that names no cell, listing the known ones', async () => {
    const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, cellDb: [`cell9=${cloud.cellUrls.cell1}`]}))
    expect(e.exitCode).toBe(2)
    expect(e.message).toContain('cell9')
    expect(e.hint).toContain('cell1 (11111111-1111-4111-8111-111111111111)')
  })
})

describe('captureLive: placement tables inside nova_api (pre-Stein layout)', () => {
  let cloud: TestCloud
  const seeded = sampleSnapshot()
  beforeAll(async () => {
    cloud = await createTestCloud('cap_inapi', {cells: ['cell1', 'cell2'], placementInApi: true})
    await seedSnapshot(seeded, cloud)
  })
  afterAll(async () => cloud?.drop())

  it('reads both from the same URL', async () => {
    expect(cloud.placementUrl).toBe(cloud.apiUrl)
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.apiUrl, requestSpecs: true})
    expect(snap).toEqual(await expected(seeded, cloud, snap))
  })
})

describe('captureLive: broken cells and databases', () => {
  let cloud: TestCloud
  const seeded = sampleSnapshot()
  const secret = 'Cell-S3cret'
  beforeAll(async () => {
    cloud = await createTestCloud('cap_bad', {cells: ['cell1', 'cell2']})
    await seedSnapshot(seeded, cloud)
    const missingDb = withDatabase(testDsn(), `${cloud.databases.api}_nope`)
    await exec(cloud.apiUrl, 'INSERT INTO cell_mappings (id, uuid, name, transport_url, database_connection, disabled) VALUES ?', [
      [
        [10, '99999999-0000-4000-8000-000000000010', 'closed', null, `mysql+pymysql://nova:${secret}@127.0.0.1:1/nova_cell9?charset=utf8`, 0],
        [11, '99999999-0000-4000-8000-000000000011', 'nodb', null, missingDb, 0],
        [12, '99999999-0000-4000-8000-000000000012', 'badport', null, `mysql+pymysql://nova:${secret}@db1:33o6/nova_cell9`, 0],
        [13, '99999999-0000-4000-8000-000000000013', 'empty', null, null, 0],
      ],
    ])
  })
  afterAll(async () => cloud?.drop())

  it('records unreachable cells as unavailable with a redacted reason and no rows; other cells are complete', async () => {
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    const bad = snap.cells.filter((c) => c.id >= 10)
    expect(bad.map((c) => [c.name, c.status])).toEqual([
      ['closed', 'unavailable'],
      ['nodb', 'unavailable'],
      ['badport', 'unavailable'],
      ['empty', 'unavailable'],
    ])
    for (const c of bad) {
      expect(c.error).toBeTruthy()
      expect(c.error).not.toContain(secret)
      expect(JSON.stringify(c)).not.toContain(secret)
    }
    expect(bad[0].error).toMatch(/cannot reach the closed database.*ECONNREFUSED/)
    expect(bad[0].database_connection).toBe('mysql+pymysql://nova:***@127.0.0.1:1/nova_cell9?charset=utf8')
    expect(bad[1].error).toMatch(/unknown database/i)
    expect(bad[2].error).toMatch(/bad port '33o6'/)
    expect(bad[3].error).toMatch(/database_connection is empty/)
    const badUuids = new Set(bad.map((c) => c.uuid))
    for (const table of ['services', 'compute_nodes', 'instances', 'migrations'] as const) {
      expect(snap.nova[table].some((r) => badUuids.has(r.cell_uuid))).toBe(false)
      expect(snap.nova[table]).toEqual(seeded.nova[table])
    }
    expect(snap.cells.filter((c) => c.id < 10).every((c) => c.status === 'available')).toBe(true)
    expect(JSON.stringify(snap)).not.toContain(secret)
  })

  it('reads a cell through a --cell-db override (by name) instead of its unreachable mapping', async () => {
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, cellDb: [`closed=${cloud.cellUrls.cell2}`]})
    const closed = snap.cells.find((c) => c.name === 'closed')
    expect(closed?.status).toBe('available')
    // the overridden cell reads cell2's database: its rows carry the override cell's uuid
    expect(snap.nova.compute_nodes.filter((r) => r.cell_uuid === closed?.uuid).map((r) => r.host)).toEqual(['cmp3'])
  })

  it('fills a templated database_connection from nova.conf [database] connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-novaconf-'))
    const conf = join(dir, 'nova.conf')
    const u = parseDbUrl(cloud.cellUrls.cell1)
    writeFileSync(
      conf,
      `[DEFAULT]\ndebug = true\n\n[database]\nconnection = ${withDatabase(testDsn(), 'nova')}\n\n[api_database]\nconnection = ${cloud.apiUrl}\n\n[placement_database]\nconnection = ${cloud.placementUrl}\n`,
    )
    // nova formats a missing password as 'None': {password} only when the test server has one
    const template = `{scheme}://{username}${u.password === undefined ? '' : ':{password}'}@{hostname}:{port}/${u.database}?{query}`
    await exec(cloud.apiUrl, 'UPDATE cell_mappings SET database_connection = ? WHERE id = 10', [template])
    try {
      const snap = await captureLive({novaConf: conf})
      const closed = snap.cells.find((c) => c.name === 'closed')
      // a template holds no password: it is kept as written
      expect(closed).toMatchObject({status: 'available', database_connection: template})
      expect(snap.nova.instances.filter((r) => r.cell_uuid === closed?.uuid).length).toBe(
        seeded.nova.instances.filter((r) => r.cell_uuid === CELL1_UUID).length,
      )
      // without nova.conf the template cannot be filled: unavailable, not empty
      const noConf = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
      expect(noConf.cells.find((c) => c.name === 'closed')).toMatchObject({status: 'unavailable', error: expect.stringMatching(/template/)})
    } finally {
      await exec(cloud.apiUrl, 'UPDATE cell_mappings SET database_connection = ? WHERE id = 10', [
        `mysql+pymysql://nova:${secret}@127.0.0.1:1/nova_cell9?charset=utf8`,
      ])
    }
  })

  it('names a missing column and the release it suggests, and keeps the cell unavailable', async () => {
    await exec(cloud.cellUrls.cell2, 'ALTER TABLE compute_nodes DROP COLUMN mapped')
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    const cell2 = snap.cells.find((c) => c.name === 'cell2')
    expect(cell2?.status).toBe('unavailable')
    expect(cell2?.error).toMatch(/compute_nodes\.mapped is missing.*older than Ocata\?/)
    expect(snap.nova.services.some((r) => r.cell_uuid === CELL2_UUID)).toBe(false)
  })

  it('names a missing nova_api table (hard error, exit 2)', async () => {
    await exec(cloud.apiUrl, 'DROP TABLE instance_group_member')
    const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(/table instance_group_member is missing in the nova_api database/)
  })

  it('names a missing placement table (hard error, exit 2)', async () => {
    // as on a placement older than Xena
    await exec(cloud.placementUrl, ['SET foreign_key_checks = 0', 'DROP TABLE consumer_types'])
    const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(/table consumer_types is missing in the placement database .*older than Xena/)
  })
})

describe('captureLive: unreachable or refused nova_api / placement', () => {
  it('fails with exit 2 when nova_api is unreachable', async () => {
    const e = await captureError(
      captureLive({apiDb: 'mysql+pymysql://nova:Zz-unreach@127.0.0.1:1/nova_api', placementDb: 'mysql://nova:x@127.0.0.1:1/placement'}),
    )
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(/cannot reach the nova_api database at mysql\+pymysql:\/\/nova:\*\*\*@127\.0\.0\.1:1\/nova_api: ECONNREFUSED/)
    expect(e.hint).toMatch(/firewall/)
    expect(e.message).not.toContain('Zz-unreach')
  })

  it('refuses a wrong password with one line, exit 2, and never the password', async () => {
    const u = parseDbUrl(testDsn())
    const password = 'Wr0ng@Pass:word/1'
    const url = `mysql+pymysql://cloudctl_nobody:${encodeURIComponent(password)}@${u.host}:${u.port}/nova_api`
    const e = await captureError(captureLive({apiDb: url, placementDb: url}))
    expect(e.exitCode).toBe(2)
    expect(e.code).toBe('DbAccessDenied')
    expect(e.message).toMatch(/access denied to the (nova_api|placement) database .*wrong user name or password/)
    expect(e.message).not.toContain('\n')
    for (const text of [e.message, e.hint ?? '']) {
      expect(text).not.toContain(password)
      expect(text).not.toContain(encodeURIComponent(password))
    }
  })
})
