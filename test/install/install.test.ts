/**
 * The release artifacts as an operator installs them, on a host without Node.js: a bare
 * `debootstrap --variant=minbase bookworm` chroot (test/install/bookworm-chroot.sh, cached under /srv)
 * gets the .deb installed with dpkg and, separately, the tarball unpacked under /opt, each in a
 * throwaway overlay of the chroot. Both must answer --version with their own node 24, audit the demo
 * cloud they ship by its installed path and by `--snapshot demo`, print a runbook page, and audit
 * the test MariaDB live (the chroot shares the host's network: 127.0.0.1) with the findings the
 * source tree's CLI reports on the same databases.
 *
 * Needs root (mount, chroot), the chroot, and `npm run package`'s artifacts in release/; without them
 * each test is skipped with the reason (CLOUDCTL_INSTALL_TEST=required: fails instead). .ci/run
 * provides all three.
 */
import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'

import {execa} from 'execa'
import {afterAll, beforeAll, describe, expect, it, type TestContext} from 'vitest'

import {readSnapshotFile} from '../../src/lib/snapshot/file.js'
import {cloudctl, ROOT} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'

const CHROOT = process.env.CLOUDCTL_BOOKWORM_CHROOT ?? '/srv/bookworm-min'
const RELEASE = join(ROOT, 'release')
const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {version: string}
const DEB = join(RELEASE, `cloudctl_${pjson.version}_amd64.deb`)
const TARBALL = join(RELEASE, `cloudctl-${pjson.version}-linux-x64.tar.gz`)

function skipReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (mount, chroot)'
  if (!existsSync(join(CHROOT, '.cloudctl-bookworm-ready'))) return `no bookworm chroot at ${CHROOT} (bash test/install/bookworm-chroot.sh)`
  for (const f of [DEB, TARBALL]) if (!existsSync(f)) return `no ${f.slice(ROOT.length + 1)} (npm run package)`
  // Artifacts of an older build would test old code: they must be newer than the build they package.
  const built = statSync(join(ROOT, 'oclif.manifest.json')).mtimeMs
  for (const f of [DEB, TARBALL]) if (statSync(f).mtimeMs < built) return `${f.slice(ROOT.length + 1)} is older than the last build (npm run package)`
  return undefined
}
const reason = skipReason()

/** A writable copy-on-write view of the chroot, with /proc; removed after the file. */
interface Overlay {
  dir: string
  merged: string
  run(args: string[], opts?: {reject?: boolean}): Promise<{exitCode: number; stdout: string; stderr: string}>
  close(): void
}

function overlay(name: string): Overlay {
  const dir = mkdtempSync(join('/var/tmp', `cloudctl-install-${name}-`))
  const [upper, work, merged] = ['upper', 'work', 'merged'].map((d) => join(dir, d))
  for (const d of [upper, work, merged]) mkdirSync(d)
  execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${CHROOT},upperdir=${upper},workdir=${work}`, merged])
  execFileSync('mount', ['-t', 'proc', 'proc', join(merged, 'proc')])
  return {
    dir,
    merged,
    run: async (args, opts = {}) => {
      // A login's environment, nothing of the host's (no node on PATH, no NODE_OPTIONS).
      const r = await execa(
        'chroot',
        [merged, 'env', '-i', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/root', 'LANG=C.UTF-8', 'NO_COLOR=1', ...args],
        {
          reject: opts.reject ?? false,
          timeout: 120_000,
        },
      )
      return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
    },
    close: () => {
      for (const m of [join(merged, 'proc'), merged]) {
        try {
          execFileSync('umount', [m])
        } catch {
          execFileSync('umount', ['-l', m])
        }
      }
      rmSync(dir, {recursive: true, force: true})
    },
  }
}

const installs: Record<'deb' | 'tarball', {overlay?: Overlay; bin: string}> = {
  deb: {bin: 'cloudctl'},
  tarball: {bin: '/opt/cloudctl/bin/cloudctl'},
}
let cloud: TestCloud | undefined

beforeAll(async () => {
  // .ci/run builds the chroot and the artifacts first: there, a missing piece is a failure, not a skip.
  if (reason && process.env.CLOUDCTL_INSTALL_TEST === 'required') throw new Error(`install test required but: ${reason}`)
  if (reason) return
  const deb = overlay('deb')
  installs.deb.overlay = deb
  copyFileSync(DEB, join(deb.merged, 'tmp/cloudctl.deb'))
  await deb.run(['dpkg', '-i', '/tmp/cloudctl.deb'], {reject: true})
  const tar = overlay('tarball')
  installs.tarball.overlay = tar
  copyFileSync(TARBALL, join(tar.merged, 'tmp/cloudctl.tar.gz'))
  await tar.run(['tar', '-xzf', '/tmp/cloudctl.tar.gz', '-C', '/opt'], {reject: true})
  const demo = await readSnapshotFile(join(ROOT, 'examples/demo-cloud.yaml'))
  cloud = await createTestCloud('install', {cells: demo.cells.filter((c) => !c.is_cell0).map((c) => c.name ?? c.uuid)})
  await seedSnapshot(demo, cloud)
}, 300_000)

afterAll(async () => {
  for (const i of Object.values(installs)) i.overlay?.close()
  await cloud?.drop()
})

function codes(json: string): string[] {
  const doc = JSON.parse(json) as {findings: Array<{code: string}>}
  return doc.findings.map((f) => f.code).sort()
}

describe.each(['deb', 'tarball'] as const)('installed from the %s on bare Debian 12 (no nodejs)', (kind) => {
  const use = (ctx: TestContext) => {
    if (reason) ctx.skip(reason)
    const i = installs[kind]
    return {run: (args: string[]) => (i.overlay as Overlay).run([i.bin, ...args]), overlay: i.overlay as Overlay}
  }

  it('has no node of the system; --version names the node 24 it carries', async (ctx) => {
    const {run, overlay: o} = use(ctx)
    expect((await o.run(['sh', '-c', 'command -v node nodejs'])).stdout).toBe('')
    if (kind === 'deb') {
      expect((await o.run(['readlink', '-f', '/usr/bin/cloudctl'])).stdout).toBe('/usr/lib/cloudctl/bin/cloudctl')
      const status = await o.run(['dpkg-query', '-W', '-f', '${Status} ${Version}', 'cloudctl'])
      expect(status.stdout).toBe(`install ok installed ${pjson.version}`)
    }
    const r = await run(['--version'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^cloudctl/${pjson.version.replaceAll('.', '\\.')} linux-x64 node-v24\\.\\d+\\.\\d+$`))
  })

  it('audits the demo cloud it ships, by its installed path and as --snapshot demo, as the source tree does', async (ctx) => {
    const {run} = use(ctx)
    const installed = kind === 'deb' ? '/usr/lib/cloudctl/examples/demo-cloud.yaml' : '/opt/cloudctl/examples/demo-cloud.yaml'
    const byPath = await run(['audit', 'all', '-s', installed, '--json'])
    const demo = await run(['audit', 'all', '-s', 'demo', '--json'])
    const here = await cloudctl(['audit', 'all', '-s', join(ROOT, 'examples/demo-cloud.yaml'), '--json'])
    expect(byPath.exitCode, byPath.stderr).toBe(3)
    expect(demo.exitCode).toBe(3)
    expect(codes(byPath.stdout)).toEqual(codes(here.stdout))
    expect(codes(demo.stdout)).toEqual(codes(here.stdout))
    // The human table too (its renderer loads cli-table3 from the installed node_modules).
    const human = await run(['audit', 'all', '-s', 'demo'])
    expect(human.exitCode).toBe(3)
    expect(human.stdout).toContain('total')
  })

  it('explain pinning.leaked --runbook prints the page it ships', async (ctx) => {
    const {run} = use(ctx)
    const r = await run(['explain', 'pinning.leaked', '--runbook'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(readFileSync(join(ROOT, 'docs/runbooks/pinned-cpus-stuck-full.md'), 'utf8').trimEnd())
  })

  it('audits MariaDB live (127.0.0.1, shared with the host) with the findings the source tree reports', async (ctx) => {
    const {run} = use(ctx)
    const c = cloud as TestCloud
    const live = ['--api-db', c.apiUrl, '--placement-db', c.placementUrl, '--json']
    const installed = await run(['audit', 'all', ...live])
    const here = await cloudctl(['audit', 'all', ...live])
    expect(installed.exitCode, installed.stderr).toBe(here.exitCode)
    expect([0, 3]).toContain(installed.exitCode)
    expect(codes(installed.stdout)).toEqual(codes(here.stdout))
    expect(codes(installed.stdout).length).toBeGreaterThan(0)
  })
})

describe('the npm tarball', () => {
  it('holds no source maps, no second copy of a bundled library, and the docs and demo cloud', (ctx) => {
    if (!existsSync(RELEASE) || !readdirSync(RELEASE).includes(`cloudctl-${pjson.version}.tgz`)) return ctx.skip('no npm tarball in release/ (npm run package)')
    const files = execFileSync('tar', ['-tzf', join(RELEASE, `cloudctl-${pjson.version}.tgz`)], {encoding: 'utf8'})
      .trim()
      .split('\n')
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([])
    expect(files).toContain('package/docs/runbooks/pinned-cpus-stuck-full.md')
    expect(files).toContain('package/docs/checks.md')
    expect(files).toContain('package/examples/demo-cloud.yaml')
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(RELEASE, `cloudctl-${pjson.version}.tgz`), 'package/package.json'], {encoding: 'utf8'})) as {
      dependencies: Record<string, string>
    }
    // Bundled into dist/ by the build: installing them again would be a second, unused copy.
    for (const bundled of ['@oclif/core', 'mysql2', 'chalk']) expect(Object.keys(manifest.dependencies)).not.toContain(bundled)
  })
})
