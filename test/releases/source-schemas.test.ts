/**
 * 2023.1-2024.2, which no Debian package carries: their schemas made by their own migrations, nova
 * 27-30 and placement 9-12 at their release tags run from source inside the 2025.1 chroot
 * (schemas.py SOURCE_TAGS; the code comes from git directories fetched beside the project,
 * $CLOUDCTL_NOVA_GIT / $CLOUDCTL_PLACEMENT_GIT, and is never kept). The sample cloud is loaded into
 * each and captured back row for row, and the release is named from the heads those migrations
 * leave and the services version that release's nova-compute writes. Without the fetched code the
 * releases skip with one line (CI has none: these stay "schema verified" by a developer's run).
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {captureLive} from '../../src/lib/db/capture.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {capturedCells, seedSnapshot, type TestCloud} from '../support/db.js'
import {sampleSnapshot} from '../support/builders.js'
import {createReleaseCloud, sourceUnavailable, type SourceRelease} from './support.js'

const savedEnv = {...process.env}
beforeAll(() => {
  process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cloudctl-cfg-'))
  for (const k of Object.keys(process.env))
    if (k.startsWith('CLOUDCTL_') && k !== 'CLOUDCTL_TEST_DSN' && !/^CLOUDCTL_[A-Z]+_(CHROOT|GIT)$/.test(k)) delete process.env[k]
})
afterAll(() => {
  process.env = savedEnv
})

/** Heads the tags' migrations leave (nova_api, cell, placement) and the service version of that nova. */
const EXPECTED: Record<SourceRelease, {nova_api: string; nova: string; placement: string; service: number; computeId: boolean}> = {
  '2023.1': {nova_api: 'b30f573d3377', nova: '960aac0e09ea', placement: '422ece571366', service: 66, computeId: false},
  '2023.2': {nova_api: 'cdeec0c85668', nova: '1acf2c98e646', placement: 'a082b8bb98d0', service: 66, computeId: true},
  '2024.1': {nova_api: 'cdeec0c85668', nova: '13863f4e1612', placement: 'a082b8bb98d0', service: 66, computeId: true},
  // nova 30 adds no cell migration: 2024.1's head, told apart by the services (67)
  '2024.2': {nova_api: 'cdeec0c85668', nova: '13863f4e1612', placement: 'a082b8bb98d0', service: 67, computeId: true},
}

function sampleOf(release: SourceRelease): Snapshot {
  const s = sampleSnapshot()
  return {...s, nova: {...s.nova, services: s.nova.services.map((v) => (v.version === null ? v : {...v, version: EXPECTED[release].service}))}}
}

const RELEASES = Object.keys(EXPECTED) as SourceRelease[]
const why: Partial<Record<SourceRelease, string>> = {}
for (const r of RELEASES) {
  why[r] = await sourceUnavailable(r)
  if (why[r] !== undefined) console.warn(`nova ${r} schema tests skipped: ${why[r]}`)
}

describe.each(RELEASES)('capture from %s schemas made by its own migrations', (release) => {
  const skip = why[release] !== undefined
  let cloud: TestCloud
  const seeded = sampleOf(release)

  beforeAll(async () => {
    if (skip) return
    cloud = await createReleaseCloud(release, `src_${release.replace('.', '')}`, ['cell1', 'cell2'])
    await seedSnapshot(seeded, cloud)
  }, 900_000)
  afterAll(async () => {
    await cloud?.drop()
  })

  it.skipIf(skip)(`reads every seeded row back and names the release ${release}`, async () => {
    const e = EXPECTED[release]
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, requestSpecs: true})
    expect(snap.release?.name).toBe(release)
    expect(snap.release?.nova_api.alembic_version).toBe(e.nova_api)
    expect(snap.release?.placement.alembic_version).toBe(e.placement)
    for (const c of snap.cells) expect(snap.release?.cells[c.uuid]?.alembic_version).toBe(e.nova)
    // compute_id / dest_compute_id came with 2023.2 (1acf2c98e646): read where the schema has them
    expect(snap.nova.instances.every((i) => 'compute_id' in i === e.computeId)).toBe(true)
    expect(snap.nova.migrations.every((m) => 'dest_compute_id' in m === e.computeId)).toBe(true)
    const plain: Snapshot = {
      ...snap,
      nova: {
        ...snap.nova,
        instances: snap.nova.instances.map(({compute_id: _c, ...rest}) => rest),
        migrations: snap.nova.migrations.map(({dest_compute_id: _d, ...rest}) => rest),
      },
    }
    expect(plain).toEqual({
      ...seeded,
      captured_at: snap.captured_at,
      source: snap.source,
      release: snap.release,
      cells: await capturedCells(seeded.cells, cloud),
    })
  })
})
