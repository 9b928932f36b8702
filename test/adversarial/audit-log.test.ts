/**
 * Issue 25, item 9: `--audit-log /proc/version` or `/dev/full` opened fine in the preflight, every
 * append failed and was swallowed, and the repair applied with no audit line and no warning. Now:
 * - a path that is not a regular file on a real filesystem (a /proc file, a character device, a FIFO,
 *   whose open would block) is refused before anything is written: exit 2, every table unchanged;
 * - an applied run's `committing` line is on disk before its first COMMIT (read here while the real
 *   CLI is held right before that COMMIT, with every table still as before), and its outcome line
 *   after, counting the rows committed;
 * - a regular file that refuses the line (the process's file size limit, RLIMIT_FSIZE) stops the run
 *   before anything commits: exit 5, every table unchanged.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {execa} from 'execa'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, ROOT, cloudctl} from '../support/cli.js'
import {baseCloud} from '../repairs/faults.js'
import {type RepairWorld, repairWorld} from '../repairs/support.js'
import {changedTables, checksums, paused, startCli} from './executor-support.js'

interface LogLine {
  outcome: string
  plan_id: string
  committed: string[]
  rows_changed: number
  rows_to_commit?: number
  undo_file: string | null
}

const readLog = (path: string): LogLine[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as LogLine)

describe('the repair audit log (built CLI, MariaDB)', {timeout: 240_000}, () => {
  let world: RepairWorld
  let src: string[]
  const dir = mkdtempSync(join(tmpdir(), 'cloudctl-audit-log-'))

  beforeAll(async () => {
    const {b} = baseCloud(94)
    b.addInstance('compute1', 'm1.small')
    for (let i = 0; i < 3; i++) {
      const gone = b.addInstance('compute2', 'm1.small').row.uuid
      b.deleteInstance(gone, {keepAllocations: true})
    }
    world = await repairWorld('adv_audit', b.build())
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
    rmSync(dir, {recursive: true, force: true})
  })

  it.each([
    ['/proc/version', /the audit log \/proc\/version is on the proc pseudo-filesystem/],
    ['/dev/full', /the audit log \/dev\/full is a character device/],
    ['a FIFO (an open for writing would block)', /the audit log .*fifo is a FIFO/],
  ])('--audit-log %s: exit 2 before any write, every table unchanged', async (what, message) => {
    let log = what
    if (what.startsWith('a FIFO')) {
      log = join(dir, 'fifo')
      execFileSync('mkfifo', [log])
    }
    const undo = join(dir, `undo-${log.replace(/\W/g, '_')}`)
    const before = await checksums(world.cloud)
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', '--undo-dir', undo, '--audit-log', log], {timeout: 60_000})
    expect(r.exitCode, r.stdout + r.stderr).toBe(2)
    const lines = r.stderr.trim().split('\n')
    expect(lines[0]).toMatch(message)
    expect(lines[0]).toMatch(/nothing was written to the databases/)
    expect(r.stderr).not.toMatch(/ at .*\.js:\d+/) // no stack trace
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
    expect(existsSync(undo) ? readdirSync(undo).filter((f) => f.endsWith('.json')) : []).toEqual([])
  })

  it('a file that takes no more bytes (RLIMIT_FSIZE): the committing line fails, nothing commits (exit 5)', async () => {
    const log = join(dir, 'full.log')
    // Earlier lines fill the log up to the limit; the new undo file (a few kB) stays under it.
    const limitKiB = 256
    writeFileSync(log, `${JSON.stringify({outcome: 'applied', note: 'x'.repeat(1000)})}\n`.repeat(Math.ceil((limitKiB * 1024) / 1000)))
    const size = statSync(log).size
    const undo = join(dir, 'undo-full')
    const before = await checksums(world.cloud)
    const r = await execa(
      'bash',
      ['-c', `ulimit -f ${limitKiB} && exec node "$@"`, 'bash', BIN, 'repair', 'leaks', ...src, '--apply', '--yes', '--undo-dir', undo, '--audit-log', log],
      {
        cwd: ROOT,
        reject: false,
        env: {NO_COLOR: '1'},
        timeout: 120_000,
      },
    )
    expect(r.exitCode, String(r.stdout) + String(r.stderr)).toBe(5)
    expect(String(r.stderr)).toMatch(/the audit log .*full\.log could not record this run before its COMMIT \(EFBIG\)/)
    expect(String(r.stderr)).toMatch(/Nothing was written/)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
    expect(statSync(log).size).toBe(size)
  })

  it('an applied run: its committing line is on disk before the first COMMIT, its outcome line after; rows_changed = rows committed', async () => {
    const log = join(dir, 'ok.log')
    const before = await checksums(world.cloud)
    const cli = startCli(['repair', 'leaks', ...src, '--apply', '--yes', '--undo-dir', join(dir, 'undo-ok'), '--audit-log', log], 'before-first-commit:3000')
    await paused(cli)
    // Held right before the COMMIT: the line is there and nothing is committed yet.
    const held = readLog(log)
    expect(held).toHaveLength(1)
    expect(held[0]).toMatchObject({outcome: 'committing', committed: []})
    expect(held[0].rows_to_commit).toBeGreaterThan(0)
    expect(held[0].undo_file).not.toBeNull()
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])

    const r = await cli.done
    expect(r.exitCode, r.stdout + r.stderr).toBe(4)
    const lines = readLog(log)
    expect(lines.map((l) => l.outcome)).toEqual(['committing', 'applied'])
    expect(lines[1].plan_id).toBe(lines[0].plan_id)
    expect(lines[1].rows_changed).toBe(lines[0].rows_to_commit)
    expect(lines[1].committed).toContain('placement')
    expect(r.stdout).toContain(`Applied: ${lines[1].rows_changed} row(s) changed`)
    expect(changedTables(before, await checksums(world.cloud)).length).toBeGreaterThan(0)
  })
})
