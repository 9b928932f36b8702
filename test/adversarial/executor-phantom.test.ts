/**
 * Issue 9 item 3: a row inserted while a repair holds its locks. The repair runs with READ COMMITTED,
 * which takes no gap locks: the `check` step that locked a consumer's allocations by consumer_id does
 * not stop a new allocation row for that consumer from being inserted and committed afterwards. The
 * real CLI is held between its undo file and its first COMMIT (CLOUDCTL_REPAIR_TEST_PAUSE) while a
 * second connection inserts such a row; the repair must notice it and abort (exit 5) with every table
 * as the inserter left it: no consumers row deleted under a live allocation.
 */
import {mkdtempSync, readFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {baseCloud, providerId} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {changedTables, checksums, paused, startCli} from './executor-support.js'

describe('a row inserted while the repair holds its locks (CLI, MariaDB)', {timeout: 180_000}, () => {
  let world: RepairWorld
  let src: string[]
  let tmp: string
  let gone: string
  let otherRp: number

  beforeAll(async () => {
    const {b} = baseCloud(91)
    b.addInstance('compute1', 'm1.small')
    gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    const s = b.build()
    otherRp = providerId(s, 'compute2')
    world = await repairWorld('xphantom', s)
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-phantom-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
  })

  const stateFor = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]

  async function allocationsOf(consumer: string): Promise<number> {
    const conn = await openConnection(world.cloud.placementUrl)
    try {
      const [rows] = await conn.query('SELECT COUNT(*) AS n FROM allocations WHERE consumer_id = ?', [consumer])
      return Number((rows as Array<{n: number}>)[0].n)
    } finally {
      await closeConnection(conn)
    }
  }

  it('an allocation of the consumer being removed, inserted between the undo write and the COMMIT: exit 5, every table as the inserter left it', async () => {
    const before = await checksums(world.cloud)
    expect(await allocationsOf(gone)).toBeGreaterThan(0)

    const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('p1')], 'after-undo:10000')
    await paused(cli)
    // The plan deletes every allocation of `gone` and then its consumers row; a new allocation of the
    // same consumer (another provider, as a concurrent claim would write it) commits meanwhile.
    const writer = await openConnection(world.cloud.placementUrl)
    try {
      await writer.query('SET SESSION innodb_lock_wait_timeout = 5')
      await writer.query('INSERT INTO allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used) VALUES (UTC_TIMESTAMP(), ?, ?, 0, 1)', [otherRp, gone])
    } finally {
      await closeConnection(writer)
    }
    expect(cli.running(), 'the CLI must still be paused when the row is committed').toBe(true)
    const mid = await checksums(world.cloud)
    expect(changedTables(before, mid)).toEqual([`${world.cloud.databases.placement}.allocations`]) // the writer's row only

    const r = await cli.done
    expect(r.exitCode, r.stdout + r.stderr).toBe(5)
    expect(r.stderr).toMatch(/allocations\): rows where .* changed while the repair held its locks/)
    expect(r.stderr).toMatch(/Nothing was written/)
    expect(changedTables(mid, await checksums(world.cloud))).toEqual([])
    const consumers = await openConnection(world.cloud.placementUrl)
    try {
      const [rows] = await consumers.query('SELECT COUNT(*) AS n FROM consumers WHERE uuid = ?', [gone])
      expect(Number((rows as Array<{n: number}>)[0].n)).toBe(1)
    } finally {
      await closeConnection(consumers)
    }
    const audit = JSON.parse(readFileSync(join(tmp, 'p1.log'), 'utf8').trim()) as Record<string, unknown>
    expect(audit).toMatchObject({kind: 'leaks', outcome: 'aborted', committed: []})
    // The undo file was written before the pause; nothing it describes was committed.
    expect(readdirSync(join(tmp, 'p1')).filter((f) => f.endsWith('.json'))).toHaveLength(1)

    // Put the world back: remove the writer's row; every table is as before the test.
    const conn = await openConnection(world.cloud.placementUrl)
    try {
      await conn.query('DELETE FROM allocations WHERE consumer_id = ? AND resource_provider_id = ?', [gone, otherRp])
    } finally {
      await closeConnection(conn)
    }
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })
})
