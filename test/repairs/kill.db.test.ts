/**
 * Fault tests with real processes and real connections (MariaDB):
 * - the CLI is SIGKILLed after its undo file is fsync'd, before any COMMIT: nothing changed, the
 *   undo file is complete, `repair undo` finds every row already at its before-image, the lock is free;
 * - the CLI is SIGKILLed between the nova_api and the cell COMMIT of a cross-database plan: the audit
 *   still reports the duplicate, `repair undo` restores the exact before-state, and a re-run finishes;
 * - the CLI's own placement connection is killed (KILL CONNECTION from a second connection) while its
 *   transaction is open: exit 5, nothing changed;
 * - a concurrent writer bumps a provider generation between the plan and the locking read: exit 5.
 * The pause points come from test/support/repair-pause.mjs, a hook the test loads into the CLI: it only sleeps.
 */
import {execa} from 'execa'
import {existsSync, mkdtempSync, readFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID} from '../../src/lib/domain/snapshot.js'
import {ROOT, cloudctl, pausedCli} from '../support/cli.js'
import {addAllocations, baseCloud} from './faults.js'
import {type RepairWorld, closeConnection, diffDumps, openConnection, repairWorld} from './support.js'

/** Polls until `probe` answers. Generous: on a loaded machine the CLI can take long to start. */
async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, ms = 90_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 25))
  }
}

/**
 * The thread id of another connection to this connection's database whose locking read has been running
 * for a second or more: on these tiny tables, that is a statement waiting for a row lock. (PROCESSLIST,
 * not INNODB_TRX: MariaDB does not always list a waiting transaction there.)
 */
async function lockWaiter(conn: Awaited<ReturnType<typeof openConnection>>): Promise<number | undefined> {
  const [rows] = await conn.query(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND INFO LIKE '%FOR UPDATE%' AND TIME >= 1",
  )
  return (rows as Array<{id: number}>)[0]?.id
}

describe('killed processes and connections (CLI, MariaDB)', {timeout: 180_000}, () => {
  let world: RepairWorld
  let src: string[]
  let tmp: string
  let dup: string

  beforeAll(async () => {
    const {b} = baseCloud(81)
    b.addInstance('compute1', 'm1.small')
    const gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    dup = b.addInstance('compute2', 'm1.small').row.uuid
    const s = b.build()
    addAllocations(s, 'deadbeef-0000-4000-8000-0000000000e1', 'compute2', {0: 1})
    // Seed 004: the failed build's copy in cell0 (ERROR), the mapping pointing there.
    const live = s.nova.instances.find((i) => i.uuid === dup)!
    s.nova.instances.push({...live, cell_uuid: CELL0_UUID, id: 1, host: null, node: null, vm_state: 'error', task_state: null})
    s.nova_api.instance_mappings.find((m) => m.instance_uuid === dup)!.cell_id = s.cells.find((c) => c.uuid === CELL0_UUID)!.id
    // compute2 never discovered: no host mapping, compute_nodes.mapped = 0.
    s.nova_api.host_mappings = s.nova_api.host_mappings.filter((h) => h.host !== 'compute2')
    for (const cn of s.nova.compute_nodes) if (cn.host === 'compute2') cn.mapped = 0
    world = await repairWorld('rkill', s)
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-kill-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
  })

  const stateFor = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]

  /** Starts the CLI paused at `point`, SIGKILLs it once it says so, returns the undo file it wrote. */
  async function killAt(point: 'after-undo' | 'after-first-commit', args: string[], name: string): Promise<string> {
    const run = pausedCli([...args, ...src, '--apply', '--yes', ...stateFor(name)], `${point}:30000`)
    const child = execa('node', run.argv, {cwd: ROOT, reject: false, env: {NO_COLOR: '1', ...run.env}})
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    await waitFor(() => (stderr.includes('REPAIR_PAUSE: paused') ? true : undefined))
    child.kill('SIGKILL')
    const r = await child
    expect(r.signal).toBe('SIGKILL')
    const files = readdirSync(join(tmp, name))
    expect(files).toHaveLength(1)
    return join(tmp, name, files[0])
  }

  it('SIGKILL after the undo file is written, before COMMIT: nothing changed; undo finds every row at its before-image; lock free', async () => {
    const before = await world.dump()
    const undoFile = await killAt('after-undo', ['repair', 'leaks'], 'k1')
    expect(diffDumps(before, await world.dump())).toEqual([])
    const undo = JSON.parse(readFileSync(undoFile, 'utf8')) as {records: unknown[]}
    expect(undo.records.length).toBeGreaterThan(0) // complete and parseable: it was fsync'd before the kill
    const r = await cloudctl(['repair', 'undo', undoFile, ...src, '--apply', '--yes', '--json', ...stateFor('k1u')])
    expect(r.exitCode, r.stderr).toBe(0) // every row already at its before-image: nothing to undo
    expect(JSON.parse(r.stdout)).toMatchObject({applied: {rows_changed: 0, rows_already: undo.records.length}})
    expect(diffDumps(before, await world.dump())).toEqual([])
    // The dead process's GET_LOCK went with its connection: the next repair runs.
    const again = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('k1r')])
    expect(again.exitCode, again.stderr).toBe(4)
    const undoAgain = readdirSync(join(tmp, 'k1r'))[0]
    expect((await cloudctl(['repair', 'undo', join(tmp, 'k1r', undoAgain), ...src, '--apply', '--yes', ...stateFor('k1ru')])).exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('SIGKILL between the nova_api and the cell COMMIT: the audit reports the half-done state; undo restores exactly; a re-run finishes', async () => {
    const before = await world.dump()
    const undoFile = await killAt('after-first-commit', ['cells', 'map-instances'], 'k2')
    const half = diffDumps(before, await world.dump())
    expect(new Set(half.map((c) => c.table))).toEqual(new Set(['nova_api/instance_mappings'])) // nova_api committed, cell0 rolled back
    const findings = runChecks(buildModel(await world.capture())).findings.filter((f) => f.subject.instance_uuid === dup)
    expect(findings.map((f) => f.code)).toContain('cell.instance-duplicate')

    const undo = await cloudctl(['repair', 'undo', undoFile, ...src, '--apply', '--yes', '--json', ...stateFor('k2u')])
    expect(undo.exitCode, undo.stderr).toBe(4)
    expect(JSON.parse(undo.stdout)).toMatchObject({applied: {rows_changed: 1}}) // the mapping; the cell0 rows were already back
    expect(diffDumps(before, await world.dump())).toEqual([])

    await killAt('after-first-commit', ['cells', 'map-instances'], 'k3')
    const rerun = await cloudctl(['cells', 'map-instances', ...src, '--apply', '--yes', ...stateFor('k3r')])
    expect(rerun.exitCode, rerun.stdout + rerun.stderr).toBe(4)
    expect(runChecks(buildModel(await world.capture())).findings.filter((f) => f.subject.instance_uuid === dup)).toEqual([])
    // Put the world back for the next test: both undo files, newest first.
    for (const name of ['k3r', 'k3']) {
      const f = readdirSync(join(tmp, name))[0]
      expect((await cloudctl(['repair', 'undo', join(tmp, name, f), ...src, '--apply', '--yes', ...stateFor(`${name}u`)])).exitCode).toBe(4)
    }
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('discover-hosts SIGKILLed between the nova_api and the cell COMMIT: the host is mapped, the flag is not; a re-run sets it', async () => {
    const before = await world.dump()
    await killAt('after-first-commit', ['cells', 'discover-hosts'], 'k7')
    const half = diffDumps(before, await world.dump())
    expect(half.map((c) => [c.table, (c.after as {host: string}).host])).toEqual([['nova_api/host_mappings', 'compute2']])
    const rerun = await cloudctl(['cells', 'discover-hosts', ...src, '--apply', '--yes', '--json', ...stateFor('k7r')])
    expect(rerun.exitCode, rerun.stderr).toBe(4)
    const done = diffDumps(before, await world.dump())
    expect(
      done.filter((c) => c.table.endsWith('/compute_nodes')).map((c) => [(c.before as {mapped: number}).mapped, (c.after as {mapped: number}).mapped]),
    ).toEqual([[0, 1]])
    expect((await cloudctl(['cells', 'discover-hosts', ...src])).exitCode).toBe(0)
    for (const name of ['k7r', 'k7']) {
      const f = readdirSync(join(tmp, name))[0]
      expect((await cloudctl(['repair', 'undo', join(tmp, name, f), ...src, '--apply', '--yes', ...stateFor(`${name}u`)])).exitCode).toBe(4)
    }
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('KILL CONNECTION of the CLI placement connection mid-transaction: exit 5, nothing changed', async () => {
    const before = await world.dump()
    const run = pausedCli(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('k4')], 'after-undo:3000')
    const child = execa('node', run.argv, {cwd: ROOT, reject: false, env: {NO_COLOR: '1', ...run.env}})
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    await waitFor(() => (stderr.includes('paused') ? true : undefined))
    // Its transaction on placement is open (rows locked, writes done): kill that connection from outside.
    const admin = await openConnection(world.cloud.placementUrl)
    const [rows] = await admin.query(
      'SELECT p.ID AS id FROM information_schema.PROCESSLIST p JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID WHERE p.DB = DATABASE() AND p.ID <> CONNECTION_ID()',
    )
    const ids = (rows as Array<{id: number}>).map((r) => r.id)
    expect(ids).toHaveLength(1)
    await admin.query(`KILL CONNECTION ${ids[0]}`)
    await closeConnection(admin)
    const r = await child // the pause ends, the COMMIT meets the dead connection
    expect(r.exitCode, r.stderr).toBe(5)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('KILL CONNECTION while the CLI waits for a row lock inside its transaction (no pause hook): exit 5, nothing changed', async () => {
    const before = await world.dump()
    // Hold the consumer row the plan locks, so the CLI blocks inside its transaction; kill it while it waits.
    const holder = await openConnection(world.cloud.placementUrl)
    await holder.query('START TRANSACTION')
    await holder.query("SELECT * FROM consumers WHERE uuid = 'deadbeef-0000-4000-8000-0000000000e1' FOR UPDATE")
    const child = cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('k5')])
    try {
      const victim = await waitFor(() => lockWaiter(holder))
      await holder.query(`KILL CONNECTION ${victim}`)
    } finally {
      await holder.query('ROLLBACK')
      await closeConnection(holder)
    }
    const r = await child
    expect(r.exitCode, r.stderr).toBe(5)
    expect(r.stderr).toMatch(/rolled back|Nothing was written/)
    expect(diffDumps(before, await world.dump())).toEqual([])
    // No undo file: it failed before writing one (the directory itself is made by the writability check).
    expect(existsSync(join(tmp, 'k5')) ? readdirSync(join(tmp, 'k5')) : []).toEqual([])
  })

  it('a concurrent writer bumps a provider generation between the plan and its apply: exit 5, nothing changed', async () => {
    const before = await world.dump()
    // The writer's bump is in flight (row locked, not committed) while the CLI plans from its snapshot
    // (consistent reads: old generation), and commits once the CLI waits for that row inside its transaction.
    const writer = await openConnection(world.cloud.placementUrl)
    await writer.query('START TRANSACTION')
    await writer.query("UPDATE resource_providers SET generation = generation + 1 WHERE name = 'compute2'")
    const child = cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', ...stateFor('k6')])
    try {
      await waitFor(() => lockWaiter(writer))
    } finally {
      await writer.query('COMMIT')
      await closeConnection(writer)
    }
    const mid = await world.dump()
    const r = await child
    expect(r.exitCode, r.stdout + r.stderr).toBe(5)
    expect(r.stderr).toMatch(/generation was \d+, now \d+/)
    expect(diffDumps(mid, await world.dump())).toEqual([])
    expect(JSON.parse(readFileSync(join(tmp, 'k6.log'), 'utf8').trim())).toMatchObject({kind: 'leaks', outcome: 'aborted', committed: [], undo_file: null})
    expect(diffDumps(before, mid).map((c) => c.table)).toEqual(['placement/resource_providers']) // the writer's own change
    const conn = await openConnection(world.cloud.placementUrl)
    await conn.query("UPDATE resource_providers SET generation = generation - 1 WHERE name = 'compute2'")
    await closeConnection(conn)
  })
})
