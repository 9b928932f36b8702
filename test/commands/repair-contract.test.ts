/**
 * The safety contract through the built CLI (bin/run.js): dry run exit 3, no TTY without --yes
 * refused (2), --apply --yes exit 4 with an undo file and an audit line, re-run exit 0, refusal on a
 * snapshot file and on an unavailable cell, repair undo, cells map-instances batching exit 6.
 */
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {execa} from 'execa'

import {BIN, ROOT, cloudctl} from '../support/cli.js'
import {addAllocations, baseCloud} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, diffDumps, openConnection, repairWorld} from '../repairs/support.js'

describe('repair safety contract (CLI, MariaDB)', () => {
  let world: RepairWorld
  let src: string[]
  let state: string[]
  let tmp: string

  beforeAll(async () => {
    const {b} = baseCloud(31)
    b.addInstance('compute1', 'm1.small')
    const gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    const unmappedA = b.addInstance('compute2', 'm1.small').row.uuid
    const unmappedB = b.addInstance('compute2', 'm1.small').row.uuid
    const s = b.build()
    addAllocations(s, 'deadbeef-0000-4000-8000-00000000000a', 'compute2', {0: 1})
    s.nova_api.instance_mappings = s.nova_api.instance_mappings.filter((m) => m.instance_uuid !== unmappedA && m.instance_uuid !== unmappedB)
    world = await repairWorld('rcli', s)
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-cli-'))
    await writeSnapshotFile(s, join(tmp, 'snap.json'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    state = ['--undo-dir', join(tmp, 'undo'), '--audit-log', join(tmp, 'audit.log')]
  })
  afterAll(async () => {
    await world?.drop()
  })

  it('dry run prints the plan and exits 3 without writing', async () => {
    const before = await world.dump()
    // -v: the statements; --max-width 0: one step per line, as grep wants it (piped tables otherwise fit 120 columns).
    const r = await cloudctl(['repair', 'leaks', ...src, '--max-width', '0', '-v'])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toMatch(/allocation\.consumer-deleted/)
    expect(r.stdout).toMatch(/DELETE FROM `allocations` WHERE `id` = \?/)
    expect(r.stdout).toMatch(/Dry run: nothing was written/)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('--apply without a TTY and without --yes is refused with exit 2', async () => {
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', ...state])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/--yes/)
  })

  it('refuses to apply from a snapshot file', async () => {
    const r = await cloudctl(['repair', 'leaks', '--snapshot', join(tmp, 'snap.json'), '--apply', '--yes', ...state])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/refusing --apply with a snapshot file \(--snapshot\): a plan is applied only from a fresh read of the live databases/)
  })

  it('plans nothing for consumers that may live in an unavailable cell (the outage rule), and writes nothing', async () => {
    const before = await world.dump()
    const bad = world.cloud.cellUrls.cell1.replace(/\/([a-z0-9_]+)(\?|$)/, '/no_such_db_cloudctl$2')
    const r = await cloudctl(['repair', 'leaks', ...src, '--cell-db', `cell1=${bad}`, '--apply', '--yes', ...state])
    // Nothing planned, but the undecided allocations are findings left for the operator: exit 3.
    expect(r.exitCode, r.stderr).toBe(3)
    expect(r.stdout).toMatch(/allocation\.undecided/)
    expect(r.stdout).not.toMatch(/DELETE FROM/)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('on a terminal, --apply asks (counts per database and kind, default No): "n" or Enter writes nothing (exit 3), "y" applies (exit 4)', async () => {
    const before = await world.dump()
    // script(1) gives the CLI a pseudo-terminal; the answer is typed once the question is on screen.
    const ask = async (answer: string) => {
      const cmd = ['node', BIN, 'repair', 'leaks', ...src, '--apply', ...state].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
      const child = execa('script', ['-qec', cmd, '/dev/null'], {cwd: ROOT, reject: false, env: {NO_COLOR: '1', TERM: 'dumb'}, stdin: 'pipe'})
      let out = ''
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('Apply these changes?') && answer !== '') {
          child.stdin?.write(answer)
          answer = ''
        }
      })
      const r = await child
      return {exitCode: r.exitCode, out}
    }
    const no = await ask('\r')
    expect(no.out).toMatch(/Apply these changes\?[^]*placement: delete \d+ allocations row\(s\)/)
    expect(no.out).toMatch(/\(y\/N\)/)
    expect(no.out).toMatch(/Not applied: nothing was written/)
    expect(no.exitCode).toBe(3)
    expect(diffDumps(before, await world.dump())).toEqual([])
    const yes = await ask('y\r')
    expect(yes.exitCode, yes.out).toBe(4)
    const undoFile = /Undo file: (\S+)/.exec(yes.out)![1]
    expect((await cloudctl(['repair', 'undo', undoFile, ...src, '--apply', '--yes', ...state])).exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('refuses with exit 1 while another repair of the same cloud holds its lock', async () => {
    const holder = await openConnection(world.cloud.apiUrl)
    try {
      await holder.query('SELECT GET_LOCK(?, 0)', [`cloudctl-repair:${world.cloud.databases.api}`.slice(0, 64)])
      const before = await world.dump()
      const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', ...state])
      expect(r.exitCode).toBe(1)
      expect(r.stderr).toMatch(/another cloudctl repair holds the lock 'cloudctl-repair:/)
      expect(diffDumps(before, await world.dump())).toEqual([])
    } finally {
      await closeConnection(holder)
    }
  })

  it('--apply --yes applies (exit 4), writes undo + audit; a re-run exits 0; repair undo restores', async () => {
    const before = await world.dump()
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', '--json', ...state])
    expect(r.exitCode).toBe(4)
    const out = JSON.parse(r.stdout) as {applied: {undo_file: string; rows_changed: number}}
    expect(out.applied.rows_changed).toBeGreaterThan(0)
    expect(existsSync(out.applied.undo_file)).toBe(true)
    expect(readFileSync(join(tmp, 'audit.log'), 'utf8')).toMatch(/"outcome":"applied"/)
    expect(r.stdout).not.toMatch(/root:[^*@]+@/) // no password in output
    const again = await cloudctl(['repair', 'leaks', ...src])
    expect(again.exitCode).toBe(0)
    expect(again.stdout).toMatch(/Nothing to do/)

    const dry = await cloudctl(['repair', 'undo', out.applied.undo_file, ...src])
    expect(dry.exitCode).toBe(3)
    const undo = await cloudctl(['repair', 'undo', out.applied.undo_file, ...src, '--apply', '--yes', ...state])
    expect(undo.exitCode).toBe(4)
    expect(diffDumps(before, await world.dump())).toEqual([])
    // A second undo finds every row at its before-image: nothing to undo, exit 0, nothing written.
    const twice = await cloudctl(['repair', 'undo', out.applied.undo_file, ...src, '--apply', '--yes', ...state])
    expect(twice.exitCode).toBe(0)
    expect(twice.stdout).toContain('Nothing to undo')
    expect(twice.stdout).not.toMatch(/Applied:/)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })

  it('progress: one line redrawn in place on a terminal and erased before the report; none with -q, -f json or a pipe', async () => {
    const onTty = async (extra: string[]) => {
      const cmd = ['node', BIN, 'audit', 'all', ...src, ...extra].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
      const r = await execa('script', ['-qec', cmd, '/dev/null'], {cwd: ROOT, reject: false, env: {NO_COLOR: '1', TERM: 'dumb'}})
      return String(r.stdout)
    }
    const tty = await onTty([])
    expect(tty).toContain('reading ')
    // What stays on screen of each line is what follows its last carriage return: never the progress.
    const shown = tty.split(/\r?\n/).map((l) => l.slice(l.lastIndexOf('\r') + 1))
    expect(shown.filter((l) => l.includes('reading '))).toEqual([])
    expect(tty).not.toMatch(/rows ✓/)
    expect(await onTty(['-q'])).not.toContain('reading ')
    expect(await onTty(['-f', 'json'])).not.toContain('reading ')
    const piped = await cloudctl(['audit', 'all', ...src])
    expect(piped.stderr).not.toContain('reading ')
  })

  it('cells map-instances --max-count batches with exit 6 until done, then 0', async () => {
    const codes: number[] = []
    for (let i = 0; i < 4; i++) codes.push((await cloudctl(['cells', 'map-instances', ...src, '--max-count', '1', '--apply', '--yes', ...state])).exitCode)
    expect(codes).toEqual([6, 4, 0, 0])
    const v = await cloudctl(['cells', 'verify-instance', '00000000-1111-4000-8000-000000000000', ...src, '--json'])
    expect(v.exitCode).toBe(3)
    expect(JSON.parse(v.stdout)).toMatchObject({state: 'unmapped', nova_manage_exit_code: 1})
    const l = await cloudctl(['cells', 'list', ...src])
    expect(l.exitCode).toBe(0)
    expect(l.stdout).toMatch(/cell1/)
  })
})
