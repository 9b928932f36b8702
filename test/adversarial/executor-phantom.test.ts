/**
 * Issue 9 item 3: a row inserted while a repair holds its locks. The repair runs with READ COMMITTED,
 * which takes no gap locks: the `check` step that locked a consumer's allocations by consumer_id does
 * not stop a new allocation row for that consumer from being inserted and committed afterwards. The
 * real CLI is held between its undo file and its first COMMIT (test/support/repair-pause.mjs) while a
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

  async function sql(url: string, statement: string, params: unknown[]): Promise<Array<Record<string, unknown>>> {
    const conn = await openConnection(url)
    try {
      // A write that had to wait for the repair's locks would not be concurrent: fail instead.
      await conn.query('SET SESSION innodb_lock_wait_timeout = 5')
      const [rows] = await conn.query(statement, params)
      return rows as Array<Record<string, unknown>>
    } finally {
      await closeConnection(conn)
    }
  }

  /**
   * Holds `repair leaks --apply` between its undo file and its first COMMIT, commits `insert` from
   * another connection meanwhile, and requires exit 5 with every table as the inserter left it; then
   * runs `cleanup` and requires every table as before.
   */
  async function insertDuringPause(
    name: string,
    url: string,
    insert: [string, unknown[]],
    cleanup: [string, unknown[]],
    table: string,
    message: RegExp,
  ): Promise<void> {
    const before = await checksums(world.cloud)
    const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor(name)], 'after-undo:10000')
    await paused(cli)
    await sql(url, ...insert)
    expect(cli.running(), 'the CLI must still be paused when the row is committed').toBe(true)
    const mid = await checksums(world.cloud)
    expect(changedTables(before, mid)).toEqual([table]) // the inserter's row only

    const r = await cli.done
    expect(r.exitCode, r.stdout + r.stderr).toBe(5)
    expect(r.stderr).toMatch(message)
    expect(r.stderr).toMatch(/Nothing was written/)
    expect(changedTables(mid, await checksums(world.cloud))).toEqual([])
    const [{n}] = await sql(world.cloud.placementUrl, 'SELECT COUNT(*) AS n FROM consumers WHERE uuid = ?', [gone])
    expect(Number(n)).toBe(1)
    expect(JSON.parse(readFileSync(join(tmp, `${name}.log`), 'utf8').trim())).toMatchObject({kind: 'leaks', outcome: 'aborted', committed: []})
    // The undo file was written before the pause; nothing it describes was committed.
    expect(readdirSync(join(tmp, name)).filter((f) => f.endsWith('.json'))).toHaveLength(1)

    await sql(url, ...cleanup)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  }

  it('an allocation of the consumer being removed, inserted between the undo write and the COMMIT: exit 5, every table as the inserter left it', async () => {
    const [{n}] = await sql(world.cloud.placementUrl, 'SELECT COUNT(*) AS n FROM allocations WHERE consumer_id = ?', [gone])
    expect(Number(n)).toBeGreaterThan(0)
    // The plan deletes every allocation of `gone` and then its consumers row; a new allocation of the
    // same consumer (another provider, as a concurrent claim would write it) commits meanwhile.
    await insertDuringPause(
      'p1',
      world.cloud.placementUrl,
      [
        'INSERT INTO allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used) VALUES (UTC_TIMESTAMP(), ?, ?, 0, 1)',
        [otherRp, gone],
      ],
      ['DELETE FROM allocations WHERE consumer_id = ? AND resource_provider_id = ?', [gone, otherRp]],
      `${world.cloud.databases.placement}.allocations`,
      /allocations\): rows where .* changed while the repair held its locks/,
    )
  })

  it('a build request for the deleted instance, inserted in nova_api (the last database to commit) during the same window: exit 5, nothing committed anywhere', async () => {
    // The premise "no build request for this instance" is a check that expects no row: it locks
    // nothing, so only reading it again can see the new one.
    await insertDuringPause(
      'p2',
      world.cloud.apiUrl,
      ['INSERT INTO build_requests (created_at, project_id, instance_uuid) VALUES (UTC_TIMESTAMP(), ?, ?)', ['p', gone]],
      ['DELETE FROM build_requests WHERE instance_uuid = ?', [gone]],
      `${world.cloud.databases.api}.build_requests`,
      /nova_api build_requests\): rows where .* changed while the repair held its locks/,
    )
  })
})
