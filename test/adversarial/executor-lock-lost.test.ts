/**
 * Issue 9 item 4: the repair lock can be lost while the repair runs. GET_LOCK belongs to the lock
 * connection; after a KILL CONNECTION of that session the lock is free and a second repair takes it
 * while the first still holds open transactions. The first must notice before it commits and abort
 * (exit 5, nothing committed); the second, which waited for the first's row locks, then applies alone.
 */
import {mkdtempSync, readFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {repairLockName} from '../../src/lib/db/repair/targets.js'
import {cloudctl} from '../support/cli.js'
import {baseCloud} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {changedTables, checksums, paused, startCli, waitFor} from './executor-support.js'

describe('the repair lock lost while the repair runs (CLI, MariaDB)', {timeout: 240_000}, () => {
  let world: RepairWorld
  let src: string[]
  let tmp: string
  let lockName: string

  beforeAll(async () => {
    const {b} = baseCloud(92)
    b.addInstance('compute1', 'm1.small')
    const gone = b.addInstance('compute2', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    world = await repairWorld('xlocklost', b.build())
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-locklost-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    lockName = repairLockName({apiDb: world.cloud.apiUrl})
  })
  afterAll(async () => {
    await world?.drop()
  })

  const stateFor = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]

  it('KILL CONNECTION of the lock session, a second repair takes the lock: the first aborts (exit 5) without committing, the second applies', async () => {
    const before = await checksums(world.cloud)
    const admin = await openConnection(world.cloud.apiUrl)
    try {
      const first = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('l1')], 'after-undo:30000')
      await paused(first)
      const [held] = await admin.query('SELECT IS_USED_LOCK(?) AS id', [lockName])
      const holder = (held as Array<{id: number | null}>)[0].id
      expect(holder, `the first repair holds ${lockName}`).not.toBeNull()
      await admin.query('KILL CONNECTION ?', [holder])

      // It waits for the rows the paused first repair still holds until that one aborts: longer
      // than a repair's default lock wait (docs/repairs.md, Timeouts).
      const second = startCli(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('l2')], undefined, {CLOUDCTL_DB_LOCK_TIMEOUT: '60'})
      const taker = await waitFor(async () => {
        const [rows] = await admin.query('SELECT IS_USED_LOCK(?) AS id', [lockName])
        const id = (rows as Array<{id: number | null}>)[0].id
        if (!second.running()) throw new Error(`the second repair ended before taking the lock: ${second.stderr()}`)
        return id !== null && id !== holder ? id : undefined
      })
      expect(taker).not.toBe(holder)
      expect(first.running(), 'the second repair must take the lock while the first is still paused').toBe(true)

      const r1 = await first.done
      expect(r1.exitCode, r1.stdout + r1.stderr).toBe(5)
      expect(r1.stderr).toMatch(/the repair lock .* (is no longer held by this repair|was lost with its connection)/)
      expect(r1.stderr).toMatch(/Nothing was written/)
      expect(JSON.parse(readFileSync(join(tmp, 'l1.log'), 'utf8').trim())).toMatchObject({kind: 'leaks', outcome: 'aborted', committed: []})

      const r2 = await second.done
      expect(r2.exitCode, r2.stdout + r2.stderr).toBe(4)
    } finally {
      await closeConnection(admin)
    }
    // Only the second repair's rows changed: its undo file alone restores every table.
    expect(changedTables(before, await checksums(world.cloud)).length).toBeGreaterThan(0)
    const undo = readdirSync(join(tmp, 'l2'))
    expect(undo).toHaveLength(1)
    const u = await cloudctl(['repair', 'undo', join(tmp, 'l2', undo[0]), ...src, '--apply', '--yes', ...stateFor('l2u')])
    expect(u.exitCode, u.stdout + u.stderr).toBe(4)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })
})
