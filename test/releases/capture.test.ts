/**
 * Capture from the real schemas of each supported release, created by that release's own
 * nova-manage / placement-manage (schemas.py): Zed from the host's Debian 12 packages, 2025.1 from
 * the Debian 13 chroot (epoxy-chroot.sh). The sample cloud is loaded into both; capture must read it
 * back exactly, name the release, and use Epoxy's compute_id where nova set it.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {captureLive} from '../../src/lib/db/capture.js'
import {closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudctlError} from '../../src/lib/errors.js'
import {cloudctl} from '../support/cli.js'
import {capturedCells, seedSnapshot, type TestCloud} from '../support/db.js'
import {CELL1_UUID, sampleSnapshot} from '../support/builders.js'
import {createReleaseCloud, releaseUnavailable, type TestRelease} from './support.js'

const savedEnv = {...process.env}
beforeAll(() => {
  process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cloudctl-cfg-'))
  for (const k of Object.keys(process.env))
    if (k.startsWith('CLOUDCTL_') && k !== 'CLOUDCTL_TEST_DSN' && !/^CLOUDCTL_[A-Z]+_CHROOT$/.test(k)) delete process.env[k]
})
afterAll(() => {
  process.env = savedEnv
})

/** The alembic heads each release's tools leave (read from their migration directories). */
const HEADS: Record<TestRelease, {nova_api: string; nova: string; placement: string}> = {
  zed: {nova_api: 'b30f573d3377', nova: 'ccb0fa1a2252', placement: '422ece571366'},
  '2025.1': {nova_api: 'cdeec0c85668', nova: '2903cd72dc14', placement: 'a082b8bb98d0'},
  // nova 33 / placement 15 add no migration: 2025.1's heads
  '2026.1': {nova_api: 'cdeec0c85668', nova: '2903cd72dc14', placement: 'a082b8bb98d0'},
  // nova 34 adds ab450ba04102 (two indexes on migrations); placement 16 none
  '2026.2': {nova_api: 'cdeec0c85668', nova: 'ab450ba04102', placement: 'a082b8bb98d0'},
}

/**
 * The release each schema is named without a service: only a cell's services narrow a head that
 * several releases share (2903cd72dc14 is 2025.1's, 2025.2's and 2026.1's), and the newest head
 * is also that of any newer release that adds no migration.
 */
const NAMED: Record<TestRelease, string> = {zed: 'zed', '2025.1': '2025.1-2026.1', '2026.1': '2025.1-2026.1', '2026.2': '2026.2 or later'}
/** services.version the release's nova-compute writes (its nova/objects/service.py SERVICE_VERSION). */
const SERVICE_VERSION: Record<TestRelease, number> = {zed: 64, '2025.1': 68, '2026.1': 72, '2026.2': 74}

const RELEASES: TestRelease[] = ['zed', '2025.1', '2026.1', '2026.2']
const why = Object.fromEntries(RELEASES.map((r) => [r, releaseUnavailable(r)])) as Record<TestRelease, string | undefined>
for (const r of RELEASES) if (why[r] !== undefined && process.env.CI !== 'true') console.warn(why[r])

describe.runIf(process.env.CI === 'true')('release test prerequisites on CI', () => {
  it.each(RELEASES)('%s: real schemas can be built (.ci/run prepares them)', (r) => {
    expect(why[r]).toBeUndefined()
  })
})

async function exec(url: string, sql: string | string[]): Promise<void> {
  const conn = await openConnection(url)
  try {
    for (const one of Array.isArray(sql) ? sql : [sql]) await conn.query(one)
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

/** Rows without the optional Epoxy columns, to compare with what the sample cloud holds. */
function withoutComputeIds(s: Snapshot): Snapshot {
  return {
    ...s,
    nova: {
      ...s.nova,
      instances: s.nova.instances.map(({compute_id: _c, ...rest}) => rest),
      migrations: s.nova.migrations.map(({dest_compute_id: _d, ...rest}) => rest),
    },
  }
}

/** The sample cloud as the release's own nova-compute would have written its services' version. */
function sampleOf(release: TestRelease): Snapshot {
  const s = sampleSnapshot()
  return {...s, nova: {...s.nova, services: s.nova.services.map((v) => (v.version === null ? v : {...v, version: SERVICE_VERSION[release]}))}}
}

describe.each(RELEASES)('capture from real %s schemas', (release) => {
  const skip = why[release] !== undefined
  let cloud: TestCloud
  const seeded = sampleOf(release)
  const src = (): string[] => ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]

  beforeAll(async () => {
    if (skip) return
    cloud = await createReleaseCloud(release, `rel_${release.replace('.', '')}`, ['cell1', 'cell2'])
    await seedSnapshot(seeded, cloud)
  }, 900_000)
  afterAll(async () => {
    await cloud?.drop()
  })

  it.skipIf(skip)(`reads every seeded row back and names the release ${release}`, async () => {
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, requestSpecs: true})
    expect(snap.release?.name).toBe(release)
    expect(snap.release?.open).toBeUndefined()
    expect(snap.release?.nova_api.alembic_version).toBe(HEADS[release].nova_api)
    expect(snap.release?.placement.alembic_version).toBe(HEADS[release].placement)
    for (const c of snap.cells) {
      expect(c.status).toBe('available')
      // a cell whose services carry no version (cell0's conductor) is what its schema says
      const versioned = seeded.nova.services.some((v) => v.cell_uuid === c.uuid && v.deleted === 0 && v.version !== null)
      expect(snap.release?.cells[c.uuid]).toMatchObject({alembic_version: HEADS[release].nova, name: versioned ? release : NAMED[release]})
    }
    // Epoxy's extra tables and columns (share_mapping, console_auth_tokens.tls_port...) are fine;
    // the optional columns cloudctl reads appear exactly where the schema has them.
    const epoxy = release !== 'zed'
    expect(snap.nova.instances.every((i) => 'compute_id' in i === epoxy && (i.compute_id ?? null) === null)).toBe(true)
    expect(snap.nova.migrations.every((m) => 'dest_compute_id' in m === epoxy)).toBe(true)
    expect(withoutComputeIds(snap)).toEqual({
      ...seeded,
      captured_at: snap.captured_at,
      source: snap.source,
      release: snap.release,
      cells: await capturedCells(seeded.cells, cloud),
    })
  })

  it.skipIf(skip)(
    `without a live service names what the schema alone says (${NAMED[release]}); a service version newer than cloudctl knows does not narrow it`,
    async () => {
      const cells = Object.values(cloud.cellUrls)
      for (const c of cells) await exec(c, 'UPDATE services SET deleted = deleted + 1000000')
      try {
        const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
        expect(snap.release?.name).toBe(NAMED[release])
        for (const c of snap.cells) expect(snap.release?.cells[c.uuid]).toMatchObject({alembic_version: HEADS[release].nova, name: NAMED[release]})
      } finally {
        for (const c of cells) await exec(c, 'UPDATE services SET deleted = deleted - 1000000')
      }
      if (release === 'zed') return
      for (const c of cells) await exec(c, 'UPDATE services SET version = 99 WHERE version IS NOT NULL')
      try {
        const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
        expect(snap.release?.name).toBe(NAMED[release])
      } finally {
        for (const c of cells) await exec(c, `UPDATE services SET version = ${SERVICE_VERSION[release]} WHERE version IS NOT NULL`)
      }
    },
  )

  it.skipIf(skip)('names the release in snapshot show, cells list and every --json result, and stores it in the snapshot file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-rel-'))
    const file = join(dir, 'snap.json.gz')
    const cap = await cloudctl(['snapshot', 'capture', '-o', file, ...src(), '--json'])
    expect(cap.exitCode, cap.stderr).toBe(0)
    expect((JSON.parse(cap.stdout) as {release: {name: string}}).release.name).toBe(release)

    const show = await cloudctl(['snapshot', 'show', file])
    expect(show.exitCode, show.stderr).toBe(0)
    expect(show.stdout).toContain(`Release ${release} (nova_api`)
    const showJson = JSON.parse((await cloudctl(['snapshot', 'show', file, '--json'])).stdout) as {
      release: {name: string; cells: Record<string, {alembic_version: string}>}
    }
    expect(showJson.release.name).toBe(release)
    expect(showJson.release.cells[CELL1_UUID].alembic_version).toBe(HEADS[release].nova)

    const cells = await cloudctl(['cells', 'list', ...src(), '--json'])
    const doc = JSON.parse(cells.stdout) as {cells: Array<{name: string; release: string | null}>; release: {name: string}}
    expect(doc.release.name).toBe(release)
    // cell0 (its conductor writes no service version) is what its schema says
    expect(doc.cells.map((c) => c.release)).toEqual(doc.cells.map((c) => (c.name === 'cell0' ? NAMED[release] : release)))
    const human = await cloudctl(['cells', 'list', ...src()])
    expect(human.stdout).toMatch(new RegExp(`cell1.*${release.replace('.', '\\.')}`))

    const audit = await cloudctl(['audit', 'all', '--snapshot', file, '--json'])
    expect([0, 3]).toContain(audit.exitCode)
    expect((JSON.parse(audit.stdout) as {release: {name: string}}).release.name).toBe(release)
  })
})

describe('real 2025.1 schemas: compute_id, missing columns, old schemas', () => {
  const skip = why['2025.1'] !== undefined
  let cloud: TestCloud
  beforeAll(async () => {
    if (skip) return
    cloud = await createReleaseCloud('2025.1', 'rel_epx', ['cell1', 'cell2'])
    await seedSnapshot(sampleOf('2025.1'), cloud)
  }, 900_000)
  afterAll(async () => {
    await cloud?.drop()
  })

  it.skipIf(skip)('captures compute_id / dest_compute_id as nova 2025.1 sets them and links by id after the hypervisor renames itself', async () => {
    const cell = cloud.cellUrls.cell1
    // What nova 2025.1 writes: the id of the node the instance (or the move's destination) is on.
    await exec(cell, [
      'UPDATE instances i JOIN compute_nodes cn ON cn.host = i.host AND cn.hypervisor_hostname = i.node AND cn.deleted = 0 SET i.compute_id = cn.id',
      'UPDATE migrations m JOIN compute_nodes cn ON cn.host = m.dest_compute AND cn.hypervisor_hostname = m.dest_node AND cn.deleted = 0 SET m.dest_compute_id = cn.id',
    ])
    const before = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
    const linked = before.nova.instances.filter((i) => i.cell_uuid === CELL1_UUID && i.compute_id !== null)
    expect(linked.length).toBeGreaterThan(0)
    const cn = before.nova.compute_nodes.find(
      (n) => n.cell_uuid === CELL1_UUID && n.deleted === 0 && linked.some((i) => i.compute_id === n.id && i.deleted === 0 && !i.hidden),
    )
    expect(cn).toBeDefined()
    const node = cn!
    const onNode = buildModel(before)
      .instancesOnNode(node.host, node.hypervisor_hostname)
      .map((i) => i.uuid)
    expect(onNode.length).toBeGreaterThan(0)

    // The hypervisor now reports its FQDN: the instances' node column keeps the short name.
    await exec(cell, `UPDATE compute_nodes SET hypervisor_hostname = CONCAT(hypervisor_hostname, '.example.org') WHERE id = ${node.id}`)
    try {
      const after = buildModel(await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
      expect(after.instancesOnNode(node.host, `${node.hypervisor_hostname}.example.org`).map((i) => i.uuid)).toEqual(onNode)
      expect(after.instancesOnNode(node.host, node.hypervisor_hostname)).toEqual([])
      // NULL compute_id (rows an older nova wrote): the names decide again
      await exec(cell, `UPDATE instances SET compute_id = NULL WHERE compute_id = ${node.id}`)
      const older = buildModel(await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
      expect(older.instancesOnNode(node.host, node.hypervisor_hostname).map((i) => i.uuid)).toEqual(onNode)
      const m = older.snapshot.nova.migrations.find((x) => x.dest_compute_id === node.id)
      if (m) expect(older.migrationDestNode(m)?.id).toBe(node.id)
    } finally {
      await exec(cell, `UPDATE compute_nodes SET hypervisor_hostname = '${node.hypervisor_hostname}' WHERE id = ${node.id}`)
    }
  })

  it.skipIf(skip)('an unknown extra column is fine; a column cloudctl needs that is gone is exit 2 naming the schema found', async () => {
    await exec(cloud.apiUrl, 'ALTER TABLE flavors ADD COLUMN from_the_future INT NULL')
    expect((await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})).release?.name).toBe('2025.1')
    await exec(cloud.apiUrl, ['ALTER TABLE flavors DROP COLUMN from_the_future', 'ALTER TABLE flavors DROP COLUMN description'])
    try {
      const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
      expect(e.exitCode).toBe(2)
      expect(e.message).toMatch(/flavors\.description is missing in the nova_api database.*\(schema found: 2023\.2 or later, alembic cdeec0c85668\)/)
      // a head cloudctl does not know (a newer nova) that lacks a needed column
      await exec(cloud.apiUrl, "UPDATE alembic_version SET version_num = 'f00dfeedbeef'")
      const r = await cloudctl(['audit', 'all', '--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl])
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toMatch(/^Error: flavors\.description is missing in the nova_api database .*unknown \(alembic f00dfeedbeef, newer than 2026\.2\?\)\)$/m)
      expect(r.stderr).not.toMatch(/\n\s+at /)
    } finally {
      await exec(cloud.apiUrl, ["UPDATE alembic_version SET version_num = 'cdeec0c85668'", 'ALTER TABLE flavors ADD COLUMN description TEXT NULL'])
    }
  })
})

describe('real Zed schemas: a schema older than Zed is refused', () => {
  const skip = why.zed !== undefined
  let cloud: TestCloud
  beforeAll(async () => {
    if (skip) return
    cloud = await createReleaseCloud('zed', 'rel_old', ['cell1', 'cell2'])
    await seedSnapshot(sampleSnapshot(), cloud)
  }, 900_000)
  afterAll(async () => {
    await cloud?.drop()
  })

  it.skipIf(skip)('a Yoga cell database (alembic 16f1fbcab42b) is exit 2, not an unavailable cell', async () => {
    await exec(cloud.cellUrls.cell1, "UPDATE alembic_version SET version_num = '16f1fbcab42b'")
    try {
      const e = await captureError(captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}))
      expect(e.exitCode).toBe(2)
      expect(e.code).toBe('ReleaseTooOld')
      const r = await cloudctl(['cells', 'list', '--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl, '--json'])
      expect(r.exitCode, r.stdout + r.stderr).toBe(2)
      const doc = JSON.parse(r.stdout) as {error: {message: string; hint: string}}
      expect(doc.error.message).toBe('the cell1 database schema is yoga (alembic 16f1fbcab42b): cloudctl reads Zed (nova 26, placement 8) and newer')
      expect(doc.error.hint).toMatch(/nova-manage db sync/)
    } finally {
      await exec(cloud.cellUrls.cell1, "UPDATE alembic_version SET version_num = 'ccb0fa1a2252'")
    }
  })

  it.skipIf(skip)('a nova_api from before alembic (sqlalchemy-migrate only) is exit 2', async () => {
    await exec(cloud.apiUrl, ['RENAME TABLE alembic_version TO migrate_version'])
    try {
      const r = await cloudctl(['snapshot', 'show', 'live', '--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl])
      expect(r.exitCode, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/^Error: the nova_api database schema is older than Xena \(sqlalchemy-migrate schema\): cloudctl reads Zed/m)
    } finally {
      await exec(cloud.apiUrl, ['RENAME TABLE migrate_version TO alembic_version'])
    }
  })
})
