/**
 * Where a repair keeps its state (issue 9, item 13): an audit log that cannot be written was skipped
 * silently while the repair applied, and an undo directory that cannot be created aborted the repair
 * after its writes as "error from the database database: ENOTDIR". Both are now proven writable
 * before the confirmation and before any transaction: exit 2, a message naming the path and what it
 * is, and not one row changed (CHECKSUM TABLE of every table of every database).
 */
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'
import {baseCloud} from '../repairs/faults.js'
import {type RepairWorld, repairWorld} from '../repairs/support.js'
import {changedTables, checksums} from './executor-support.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-repair-state-'))

describe('repair state paths are checked before anything is written (built CLI, MariaDB)', {timeout: 180_000}, () => {
  let world: RepairWorld
  let src: string[]
  const aFile = join(dir, 'a-regular-file')

  beforeAll(async () => {
    const {b} = baseCloud(93)
    b.addInstance('compute1', 'm1.small')
    const gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    world = await repairWorld('adv_state', b.build())
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    writeFileSync(aFile, 'not a directory')
  })
  afterAll(async () => {
    await world?.drop()
    rmSync(dir, {recursive: true, force: true})
  })

  async function refusedWithoutWriting(args: string[], env: Record<string, string>, what: RegExp, path: string): Promise<void> {
    const before = await checksums(world.cloud)
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', ...args], {env})
    expect(r.exitCode, r.stderr).toBe(2)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(what)
    expect(lines[0]).toContain(path)
    expect(lines[0]).not.toMatch(/database database|error from the/)
    expect(lines[1]).toMatch(/^Hint: Pass a writable/)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  }

  it('an audit log that is a directory: exit 2 before any write (it was skipped silently, exit 4)', async () => {
    const log = join(dir, 'log-is-a-dir')
    mkdirSync(log)
    const undo = join(dir, 'undo-1')
    await refusedWithoutWriting(['--undo-dir', undo, '--audit-log', log], {}, /^Error: the audit log .* cannot be written \(EISDIR: it is a directory\)/, log)
    expect(existsSync(undo) ? readdirSync(undo) : []).toEqual([])
    expect(readdirSync(log)).toEqual([])
  })

  it('an audit log below a regular file, given by CLOUDCTL_AUDIT_LOG: exit 2', async () => {
    const log = join(aFile, 'audit.log')
    await refusedWithoutWriting(
      ['--undo-dir', join(dir, 'undo-2')],
      {CLOUDCTL_AUDIT_LOG: log},
      /^Error: the audit log .* cannot be written \(ENOTDIR: a path component is not a directory\)/,
      log,
    )
  })

  it('an undo directory below a regular file: exit 2 naming the undo directory (was "error from the database database: ENOTDIR")', async () => {
    const undo = join(aFile, 'undo')
    const log = join(dir, 'audit-3.log')
    await refusedWithoutWriting(
      ['--undo-dir', undo, '--audit-log', log],
      {},
      /^Error: the undo directory .* cannot be written \(ENOTDIR: a path component is not a directory\)/,
      undo,
    )
    expect(readFileSync(aFile, 'utf8')).toBe('not a directory')
  })

  it('the same repair with writable paths applies (exit 4) and logs its run: the refusals above had something to write', async () => {
    const undo = join(dir, 'undo-ok')
    const log = join(dir, 'state', 'audit.log')
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', '--undo-dir', undo, '--audit-log', log])
    expect(r.exitCode, r.stderr).toBe(4)
    expect(readdirSync(undo).filter((f) => f.endsWith('.json'))).toHaveLength(1)
    expect(readdirSync(undo).filter((f) => f.startsWith('.cloudctl-probe'))).toEqual([])
    // The run's line before its COMMIT, then its outcome (docs/repairs.md, point 7).
    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as {outcome: string; rows_to_commit?: number; rows_changed: number})
    expect(lines.map((l) => l.outcome)).toEqual(['committing', 'applied'])
    expect(lines[1].rows_changed).toBe(lines[0].rows_to_commit)
  })
})
