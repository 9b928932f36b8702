/**
 * Issue 25 item 12, the files cloudctl writes:
 *  - a 0600 snapshot or metrics file became 0644 when rewritten (the rename put a new inode made with
 *    the umask in its place): a rewritten file keeps its mode, a new snapshot is 0600;
 *  - `simulate capacity --html` followed a dangling symlink and rewrote an existing file in place: it
 *    now uses the writer every other output uses (atomic-file.ts);
 *  - `audit all -f openmetrics -o X --html X` lost the metrics and `audit all -s X --html X` replaced
 *    the snapshot it read: outputs that are one file, or an input, are refused (exit 2), by path or
 *    by inode (a symlink or hard link to it);
 *  - `--undo-dir /proc/…` hung at 35 % CPU (recursive mkdir on procfs): refused at once, exit 2, and
 *    not a row changed (CHECKSUM TABLE of every table).
 * Built CLI, a real MariaDB cloud.
 */
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT, cloudctl} from '../support/cli.js'
import {baseCloud} from '../repairs/faults.js'
import {type RepairWorld, repairWorld} from '../repairs/support.js'
import {changedTables, checksums} from './executor-support.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-write-modes-'))
const mode = (path: string) => statSync(path).mode & 0o777
const DEMO = 'examples/demo-cloud.yaml'
const CONF = 'examples/nova.conf'

describe('files written: modes, one writer, no collisions (built CLI, MariaDB)', {timeout: 240_000}, () => {
  let world: RepairWorld
  let src: string[]

  beforeAll(async () => {
    const {b} = baseCloud(95)
    b.addInstance('compute1', 'm1.small')
    const gone = b.addInstance('compute1', 'm1.small').row.uuid
    b.deleteInstance(gone, {keepAllocations: true})
    world = await repairWorld('adv_wmodes', b.build())
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
    rmSync(dir, {recursive: true, force: true})
  })

  it('snapshot capture: a new snapshot is 0600; rewriting a 0640 one keeps 0640', async () => {
    const snap = join(dir, 'new.json.gz')
    const r = await cloudctl(['snapshot', 'capture', ...src, '-o', snap], {env: {}})
    expect(r.exitCode, r.stderr).toBe(0)
    expect(mode(snap)).toBe(0o600)
    chmodSync(snap, 0o640)
    const inode = statSync(snap).ino
    const again = await cloudctl(['snapshot', 'capture', ...src, '-o', snap])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(statSync(snap).ino).not.toBe(inode) // replaced by rename, not rewritten in place
    expect(mode(snap)).toBe(0o640)
  })

  it('audit all -f openmetrics -o: a 0600 metrics file stays 0600; a new one is 0644 (less the umask)', async () => {
    const prom = join(dir, 'cloudctl.prom')
    writeFileSync(prom, '# old\n', {mode: 0o600})
    chmodSync(prom, 0o600)
    const r = await cloudctl(['audit', 'all', '-s', DEMO, '--nova-conf', CONF, '-f', 'openmetrics', '-o', prom])
    expect(r.exitCode, r.stderr).toBe(3)
    expect(readFileSync(prom, 'utf8')).toContain('cloudctl_audit_findings')
    expect(mode(prom)).toBe(0o600)
    const fresh = join(dir, 'fresh.prom')
    await cloudctl(['audit', 'all', '-s', DEMO, '--nova-conf', CONF, '-f', 'openmetrics', '-o', fresh])
    expect(mode(fresh)).toBe(0o644 & ~process.umask())
  })

  it("audit all --html and simulate capacity --html keep an existing file's mode", async () => {
    for (const args of [
      ['audit', 'all'],
      ['simulate', 'capacity'],
    ]) {
      const html = join(dir, `${args[0]}-kept.html`)
      writeFileSync(html, 'old')
      chmodSync(html, 0o640)
      const r = await cloudctl([...args, '-s', DEMO, '--nova-conf', CONF, '--html', html])
      expect([0, 3], r.stderr).toContain(r.exitCode)
      expect(readFileSync(html, 'utf8')).toMatch(/^<!doctype html>/i)
      expect(mode(html)).toBe(0o640)
    }
  })

  it('simulate capacity --html: a dangling symlink is refused and left dangling; an existing file is replaced, not rewritten in place', async () => {
    const link = join(dir, 'dangling.html')
    const target = join(dir, 'nowhere', 'target.html')
    symlinkSync(target, link)
    const r = await cloudctl(['simulate', 'capacity', '-s', DEMO, '--html', link])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^Error: cannot write the HTML report to .*dangling\.html: a symlink whose target cannot be followed/m)
    expect(r.stderr).toMatch(/^Hint: Name a regular file in a writable directory with --html\./m)
    expect(readlinkSync(link)).toBe(target)
    expect(existsSync(target)).toBe(false)

    // A hard link to the old file keeps the old text: the report went to a new inode, renamed in.
    const html = join(dir, 'cap.html')
    const keep = join(dir, 'cap-hardlink.html')
    writeFileSync(html, 'old report')
    linkSync(html, keep)
    const ok = await cloudctl(['simulate', 'capacity', '-s', DEMO, '--html', html])
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(readFileSync(keep, 'utf8')).toBe('old report')
    expect(readFileSync(html, 'utf8')).toMatch(/^<!doctype html>/i)
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
  })

  it('outputs that are one file, or an input, are refused before anything is read or written', async () => {
    const snap = join(dir, 'input.yaml')
    writeFileSync(snap, readFileSync(join(ROOT, DEMO)))
    const snapBytes = readFileSync(snap)
    const viaLink = join(dir, 'input-link.yaml')
    symlinkSync(snap, viaLink)
    const hard = join(dir, 'input-hard.yaml')
    linkSync(snap, hard)
    const conf = join(dir, 'nova.conf')
    writeFileSync(conf, readFileSync(CONF))
    const x = join(dir, 'both.out')
    const cases: Array<[string[], RegExp]> = [
      [
        ['audit', 'all', '-s', DEMO, '-f', 'openmetrics', '-o', x, '--html', x],
        /^Error: -o .*both\.out and --html .*both\.out are the same file: one output would replace the other$/m,
      ],
      [['audit', 'all', '-s', DEMO, '-f', 'openmetrics', '-o', x, '--html', `${dir}/./both.out`], /are the same file/],
      [
        ['audit', 'all', '-s', snap, '--html', snap],
        /^Error: --html .*input\.yaml is the --snapshot file .*input\.yaml: writing it would replace what is read$/m,
      ],
      [['audit', 'all', '-s', snap, '--html', viaLink], /^Error: --html .*input-link\.yaml is the --snapshot file/m],
      [['audit', 'all', '-s', hard, '--html', snap], /^Error: --html .*input\.yaml is the --snapshot file .*input-hard\.yaml/m],
      [['audit', 'all', '-s', snap, '-f', 'openmetrics', '-o', snap], /^Error: -o .* is the --snapshot file/m],
      [['audit', 'all', '-s', DEMO, '--nova-conf', conf, '--html', conf], /^Error: --html .* is the --nova-conf file/m],
      [['simulate', 'capacity', '-s', snap, '--html', snap], /^Error: --html .* is the --snapshot file/m],
      [['snapshot', 'capture', ...src, '--nova-conf', conf, '-o', conf], /^Error: -o .* is the --nova-conf file/m],
    ]
    for (const [args, message] of cases) {
      const r = await cloudctl(args)
      expect(r.exitCode, `${args.join(' ')}\n${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stderr).toMatch(/^Hint: /m)
    }
    expect(readFileSync(snap).equals(snapBytes)).toBe(true)
    expect(readFileSync(conf, 'utf8')).toBe(readFileSync(CONF, 'utf8'))
    expect(existsSync(x)).toBe(false)
    expect(lstatSync(viaLink).isSymbolicLink()).toBe(true)
  })

  it.each(['/proc/cloudctl-undo/x', '/proc/self/undo', '/sys/cloudctl-undo'])('--undo-dir %s: exit 2 at once, not a row changed', async (undo) => {
    const before = await checksums(world.cloud)
    // 30 s: the recursive mkdir never returned.
    const r = await cloudctl(['repair', 'leaks', ...src, '--apply', '--yes', '--undo-dir', undo, '--audit-log', join(dir, 'audit.log')], {timeout: 30_000})
    expect(r.exitCode, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      new RegExp(
        `^Error: the undo directory ${undo} cannot be written \\((ENOENT: no directory can be created there|EACCES: permission denied|EROFS: read-only file system|EPERM: operation not permitted)\\); nothing was written to the databases$`,
        'm',
      ),
    )
    expect(r.stderr).toMatch(/^Hint: Pass a writable directory with --undo-dir/m)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })
})
