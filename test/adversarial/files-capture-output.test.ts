/**
 * `snapshot capture -o PATH` (issue 9, item 10) wrote PATH.tmp-PID and renamed it over PATH, so a
 * symlink or a device became a regular file (as root, `-o /dev/stdout` replaced the system's link).
 * Against a real MariaDB cloud and the built CLI: a symlink to a regular file is written through (the
 * link stays), a symlink to a device, a device, a FIFO, a directory, a dangling link and a missing
 * directory are refused with exit 2 and left as they were, and `-o -` writes the snapshot to stdout.
 */
import {execa} from 'execa'
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-capture-o-'))
const isRoot = process.getuid?.() === 0

describe('snapshot capture -o on non-regular targets (built CLI, MariaDB)', {timeout: 180_000}, () => {
  let cloud: TestCloud
  let src: string[]
  let hosts: number

  beforeAll(async () => {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
    const generated = generateCloud({seed: 23, cells: 1, hostsPerCell: 3, now})
    hosts = generated.snapshot.nova.compute_nodes.filter((c) => c.deleted === 0).length
    cloud = await createTestCloud('adv_capo', {cells: ['cell1']})
    await seedSnapshot(generated.snapshot, cloud)
    src = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]
  })
  afterAll(async () => {
    await cloud?.drop()
    rmSync(dir, {recursive: true, force: true})
  })

  const capture = (out: string, extra: string[] = []) => cloudctl(['snapshot', 'capture', ...src, '-o', out, ...extra])

  /** Exit 2, one Error line naming the path and a Hint line; nothing left beside the target. */
  function refused(r: {exitCode: number; stderr: string; stdout: string}, shown: string, why: RegExp): void {
    expect(r.exitCode, r.stderr).toBe(2)
    const lines = r.stderr.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toContain(`cannot write the snapshot to ${shown}`)
    expect(lines[0]).toMatch(why)
    expect(lines[1]).toMatch(/^Hint: /)
    expect(r.stdout).toBe('')
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([])
  }

  it('a symlink to a regular file: written through, the link stays a link', async () => {
    const target = join(dir, 'real.json')
    writeFileSync(target, 'old')
    const link = join(dir, 'latest.json')
    symlinkSync(target, link)
    const r = await capture(link)
    expect(r.exitCode, r.stderr).toBe(0)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readlinkSync(link)).toBe(target)
    const snap = JSON.parse(readFileSync(target, 'utf8')) as {nova: {compute_nodes: Array<{deleted: number}>}}
    expect(snap.nova.compute_nodes.filter((c) => c.deleted === 0)).toHaveLength(hosts)
  })

  it('a symlink to a character device (like /dev/stdout -> a tty or /dev/null): refused, the link untouched', async () => {
    const link = join(dir, 'to-null')
    symlinkSync('/dev/null', link)
    refused(await capture(link), link, /a symlink to a character device \(\/dev\/null\); use -o - to write to stdout/)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(readlinkSync(link)).toBe('/dev/null')
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true)
  })

  it.runIf(isRoot)('a device node of its own (mknod, /dev/null-like): refused, still a device', async () => {
    const dev = join(dir, 'null-like')
    await execa('mknod', [dev, 'c', '1', '3'])
    refused(await capture(dev), dev, /a character device/)
    expect(lstatSync(dev).isCharacterDevice()).toBe(true)
  })

  it('a FIFO: refused, still a FIFO (nothing waits on it)', async () => {
    const fifo = join(dir, 'pipe')
    await execa('mkfifo', [fifo])
    refused(await capture(fifo), fifo, /a FIFO/)
    expect(lstatSync(fifo).isFIFO()).toBe(true)
  })

  it('a directory: refused, its contents untouched', async () => {
    const d = join(dir, 'a-directory')
    mkdirSync(d)
    writeFileSync(join(d, 'keep'), 'x')
    refused(await capture(d), d, /a directory/)
    expect(lstatSync(d).isDirectory()).toBe(true)
    expect(readdirSync(d)).toEqual(['keep'])
  })

  it('a dangling symlink and a missing directory: refused', async () => {
    const dangling = join(dir, 'dangling')
    symlinkSync(join(dir, 'nowhere', 'x.json'), dangling)
    refused(await capture(dangling), dangling, /symlink whose target cannot be followed/)
    expect(lstatSync(dangling).isSymbolicLink()).toBe(true)
    const missing = join(dir, 'no-such-dir', 'snap.json')
    refused(await capture(missing), missing, /no such file or directory/)
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false)
  })

  it('-o - writes the canonical JSON snapshot to stdout and its report to stderr', async () => {
    const r = await capture('-')
    expect(r.exitCode, r.stderr).toBe(0)
    const snap = JSON.parse(r.stdout) as {source: {kind: string}; nova: {compute_nodes: Array<{deleted: number}>}}
    expect(snap.nova.compute_nodes.filter((c) => c.deleted === 0)).toHaveLength(hosts)
    expect(r.stderr).toContain('wrote the snapshot to stdout')
    expect(existsSync('-')).toBe(false)
  })

  it('-o - with --json is refused (both would be stdout)', async () => {
    const r = await capture('-', ['--json'])
    expect(r.exitCode).toBe(2)
    expect((JSON.parse(r.stdout) as {error: {message: string}}).error.message).toContain('-o - writes the snapshot to stdout')
  })
})
