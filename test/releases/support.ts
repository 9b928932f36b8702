/**
 * Test clouds on the real schemas of a release (schemas.py): the databases nova-manage and
 * placement-manage of that release created, cloned empty, shaped like test/support/db.ts's
 * TestCloud so that seedSnapshot loads any builder or generator cloud into them.
 */
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {execa} from 'execa'

import {adminConnection, type TestCloud, testDbUrl} from '../support/db.js'
import {closeConnection} from '../../src/lib/db/connection.js'
import {EPOXY_CHROOT, missingNova, RELEASE_CHROOTS, type RealNovaRelease} from '../realnova/support.js'

const HERE = fileURLToPath(new URL('.', import.meta.url))
const PYTHON = '/usr/bin/python3'

export type TestRelease = RealNovaRelease
/** Releases whose schemas are made from source (nova / placement at their tags, schemas.py SOURCE_TAGS). */
export type SourceRelease = '2023.1' | '2023.2' | '2024.1' | '2024.2'
export type SchemaRelease = TestRelease | SourceRelease

export {EPOXY_CHROOT, RELEASE_CHROOTS}

/** The Debian suite of each chroot release, and the marker release-chroot.sh leaves in it. */
export const RELEASE_SUITES: Record<Exclude<TestRelease, 'zed'>, {suite: string; marker: string; nova: string}> = {
  '2025.1': {suite: 'trixie', marker: '.cloudctl-epoxy-ready', nova: 'nova 31 / placement 13'},
  '2026.1': {suite: 'forky', marker: '.cloudctl-forky-ready', nova: 'nova 33 / placement 15'},
  '2026.2': {suite: 'sid', marker: '.cloudctl-sid-ready', nova: 'nova 34 / placement 16'},
}

/** Why this release's real schemas cannot be built here; undefined when they can. */
export function releaseUnavailable(release: TestRelease): string | undefined {
  if (release !== 'zed') {
    const root = RELEASE_CHROOTS[release]
    const {suite, marker} = RELEASE_SUITES[release]
    if (!existsSync(`${root}/${marker}`)) {
      return `nova ${release} tests skipped: no chroot at ${root}; create it with \`bash test/releases/release-chroot.sh ${suite}\` (root, ~7 min, or run .ci/run)`
    }
    return undefined
  }
  const missing = missingNova().filter((p) => p.endsWith('-manage') || p.includes('pymysql'))
  return missing.length === 0
    ? undefined
    : `nova Zed (real schema) tests skipped: ${missing.join(', ')} missing; install python3-nova python3-placement python3-pymysql (or run .ci/run)`
}

async function schemas(args: string[]): Promise<string> {
  const r = await execa(PYTHON, [`${HERE}schemas.py`, ...args], {cwd: HERE, reject: false, timeout: 900_000})
  if (r.exitCode !== 0) throw new Error(`schemas.py ${args[0]} failed (${r.exitCode}): ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`)
  return String(r.stdout)
}

/** An empty cloud on the real schemas of `release`: nova_api, placement, cell0 and `cells`. */
export async function createReleaseCloud(release: SchemaRelease, prefix: string, cells: string[] = ['cell1']): Promise<TestCloud> {
  const base = `${prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 20)}_${randomBytes(3).toString('hex')}`
  const out = JSON.parse(await schemas(['cloud', '--release', release, '--prefix', base, '--cells', cells.join(',')])) as {
    api: string
    placement: string
    cell0: string
    cells: Record<string, string>
  }
  const all = [out.api, out.placement, out.cell0, ...Object.values(out.cells)]
  const cellUrls = Object.fromEntries(Object.entries(out.cells).map(([c, db]) => [c, testDbUrl(db)]))
  const cell0Url = testDbUrl(out.cell0)
  return {
    databases: {api: out.api, placement: out.placement, cell0: out.cell0, cells: out.cells},
    apiUrl: testDbUrl(out.api),
    placementUrl: testDbUrl(out.placement),
    cell0Url,
    cellUrls,
    urlForCell: (name) => (name === 'cell0' ? cell0Url : cellUrls[name]),
    allDatabases: () => all,
    async drop() {
      const conn = await adminConnection()
      try {
        for (const db of all) await conn.query(`DROP DATABASE IF EXISTS \`${db}\``)
      } finally {
        await closeConnection(conn)
      }
    },
  }
}

/** The template databases of `release` (schemas.py templates): what its own tools created, never written to. */
export async function releaseTemplates(release: SchemaRelease): Promise<{api: string; placement: string; cell0: string; cell: string}> {
  return JSON.parse(await schemas(['templates', '--release', release])) as {api: string; placement: string; cell0: string; cell: string}
}

/** Why `release`'s schemas cannot be made from source here (no fetched nova / placement, no 2025.1 chroot); undefined when they can. */
export async function sourceUnavailable(release: SourceRelease): Promise<string | undefined> {
  const {why} = JSON.parse(await schemas(['source-unavailable', '--release', release])) as {why: string | null}
  return why ?? undefined
}
