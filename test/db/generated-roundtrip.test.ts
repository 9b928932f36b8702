import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {captureLive} from '../../src/lib/db/capture.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {capturedCells, createTestCloud, seedSnapshot, sortLikeCapture, type TestCloud} from '../support/db.js'
import {FAULT_CODES, generateCloud} from '../support/generator.js'

const savedEnv = {...process.env}
beforeAll(() => {
  process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cloudctl-cfg-'))
  for (const k of Object.keys(process.env)) if (k.startsWith('CLOUDCTL_') && k !== 'CLOUDCTL_TEST_DSN') delete process.env[k]
})
afterAll(() => {
  process.env = savedEnv
})

describe('generated cloud: seed -> capture round trip', () => {
  let cloud: TestCloud
  let seeded: Snapshot
  beforeAll(async () => {
    // every planted fault too: broken clouds must load and read back exactly as well
    seeded = generateCloud({
      seed: 7,
      cells: 2,
      hostsPerCell: 30,
      requestSpecs: true,
      migrationsInProgress: 2,
      completedMigrations: 2,
      faults: Object.fromEntries(FAULT_CODES.map((c) => [c, 1])),
    }).snapshot
    const names = seeded.cells.filter((c) => !c.is_cell0).map((c) => c.name as string)
    cloud = await createTestCloud('gen_rt', {cells: names})
    await seedSnapshot(seeded, cloud)
  })
  afterAll(async () => cloud?.drop())

  it('captures exactly the generated snapshot (rows in capture order: by cell, then primary key)', async () => {
    expect(seeded.nova.instances.length).toBeGreaterThan(50)
    const snap = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, requestSpecs: true})
    expect(snap).toEqual({
      ...sortLikeCapture(seeded),
      captured_at: snap.captured_at,
      source: snap.source,
      release: snap.release,
      cells: await capturedCells(sortLikeCapture(seeded).cells, cloud),
    })
  })
})
