/**
 * Clouds that real nova wrote (see README.md): factory.py plays a scenario in nova's own functional
 * harness (cached), clones real nova-manage / placement-manage schemas and loads every row.
 */
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {execa} from 'execa'

const HERE = fileURLToPath(new URL('.', import.meta.url))
const PYTHON = '/usr/bin/python3'

/** What the factory needs on this machine; empty when everything is there. */
export function missingNova(): string[] {
  const need = [
    '/usr/bin/nova-manage',
    '/usr/bin/placement-manage',
    '/usr/lib/python3/dist-packages/nova/tests/functional/libvirt/base.py',
    '/usr/lib/python3/dist-packages/placement/tests/functional/fixtures/placement.py',
    '/usr/lib/python3/dist-packages/pymysql/__init__.py',
    '/usr/lib/python3/dist-packages/oslotest/__init__.py',
    '/usr/lib/python3/dist-packages/wsgi_intercept/__init__.py',
    '/usr/lib/python3/dist-packages/etc/nova/api-paste.ini',
  ]
  return need.filter((p) => !existsSync(p))
}

export const ENABLE_HINT =
  'realnova tests skipped: real nova is not installed. Enable them with `bash .ci/run` or: apt-get install python3-nova python3-placement nova-common placement-common python3-pymysql python3-oslotest python3-ddt python3-testscenarios python3-wsgi-intercept && mkdir -p /usr/lib/python3/dist-packages/etc/nova && ln -sf /etc/nova/api-paste.ini /usr/lib/python3/dist-packages/etc/nova/api-paste.ini'

export interface RealCloud {
  scenario: string
  prefix: string
  databases: string[]
  api: string
  placement: string
  cells: Record<string, string>
  /** What the play observed on the real services (driver.py `self.notes`), e.g. a boot's fault. */
  notes: Record<string, Record<string, unknown>>
  /**
   * Moves every service heartbeat by the time since the load (or the last call), so that services
   * are as up or as late as the play left them however long the test ran: service_down_time is 60 s,
   * and a loaded CI machine once took longer between the load and a simulate, which then saw host2
   * down. Call it before a command whose answer depends on which services are up.
   */
  freshen(): Promise<void>
  drop(): Promise<void>
}

/** Whose nova plays and loads the scenarios: the host's Zed, or nova 31 / 33 / 34 in their chroots (factory.py). */
export type RealNovaRelease = 'zed' | '2025.1' | '2026.1' | '2026.2'

/** Where test/releases/epoxy-chroot.sh puts nova 31 / placement 13 (factory.py reads the same variable). */
export const EPOXY_CHROOT = process.env.CLOUDCTL_EPOXY_CHROOT || '/srv/trixie'

/** The chroot of each release whose nova runs in one (release-chroot.sh; factory.py CHROOTS reads the same variables). */
export const RELEASE_CHROOTS: Record<Exclude<RealNovaRelease, 'zed'>, string> = {
  '2025.1': EPOXY_CHROOT,
  '2026.1': process.env.CLOUDCTL_FORKY_CHROOT || '/srv/forky',
  '2026.2': process.env.CLOUDCTL_SID_CHROOT || '/srv/sid',
}

async function factory(args: string[], timeout = 900_000, release: RealNovaRelease = 'zed'): Promise<string> {
  const r = await execa(PYTHON, [`${HERE}factory.py`, ...args], {cwd: HERE, reject: false, timeout, env: {REALNOVA_RELEASE: release}})
  // The whole of stderr: a failed play's tails are the only record once a CI machine is gone.
  if (r.exitCode !== 0) throw new Error(`factory.py ${args[0]} failed (${r.exitCode}):\n${String(r.stderr).trim()}`)
  if (String(r.stderr).trim() !== '') console.warn(String(r.stderr).trim())
  return String(r.stdout)
}

/**
 * Plays every scenario whose dump is not cached, two at a time (two cores; each play is one
 * single-threaded process), so the per-scenario clouds only load. Sequential plays were ~8 minutes.
 */
export async function playScenarios(scenarios: string[], jobs = 2, release: RealNovaRelease = 'zed', driver: PlayDriver = 'driver'): Promise<void> {
  await factory(['dumps', '--jobs', String(jobs), '--driver', driver, ...scenarios], 1_800_000, release)
}

/**
 * The play module a scenario is in (factory.py drivers()): driver.py, boot_windows.py (boots held in
 * flight), or a driver_<kind>.py (scenarios on other kinds of compute, each with its own test class).
 */
export type PlayDriver = 'driver' | 'boot_windows' | `driver_${string}`

export async function realCloud(scenario: string, release: RealNovaRelease = 'zed', driver: PlayDriver = 'driver'): Promise<RealCloud> {
  const prefix = `rn_${scenario.slice(0, 12)}_${randomBytes(3).toString('hex')}`
  const {beat_at, ...out} = JSON.parse(await factory(['cloud', '--scenario', scenario, '--prefix', prefix, '--driver', driver], 900_000, release)) as Omit<
    RealCloud,
    'drop' | 'prefix' | 'freshen'
  > & {beat_at: string}
  let since = beat_at
  const freshen = async (): Promise<void> => {
    since = (JSON.parse(await factory(['beat', '--prefix', prefix, '--since', since])) as {beat_at: string}).beat_at
  }
  return {...out, prefix, freshen, drop: async () => void (await factory(['drop', '--prefix', prefix]))}
}

/** One row cloudctl's repairs wrote, by its natural key: the columns they changed, before and after. */
export interface RepairedRow {
  table: string
  key: Record<string, unknown>
  before: Record<string, unknown>
  after: Record<string, unknown>
}

/** Natural keys the reboot matches rows by (ids and uuids differ from play to play). */
const NATURAL_KEYS: Record<string, string[]> = {compute_nodes: ['host', 'hypervisor_hostname']}

/**
 * What the repairs wrote, from their undo files in the order they ran: one entry per row, the first
 * before-image and the last after-image of each changed column. updated_at is the repair's clock (the
 * reboot stamps its own). A table without a natural key here is fatal: the reboot would not know it.
 */
export async function repairedRows(undoFiles: string[]): Promise<RepairedRow[]> {
  const {readFile} = await import('node:fs/promises')
  const out = new Map<string, RepairedRow>()
  for (const file of undoFiles) {
    const undo = JSON.parse(await readFile(file, 'utf8')) as {
      records: Array<{table: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null}>
    }
    for (const r of undo.records) {
      const cols = NATURAL_KEYS[r.table]
      if (!cols || !r.before || !r.after) throw new Error(`the reboot cannot carry ${r.before && r.after ? 'an update' : 'an insert or delete'} of ${r.table}`)
      const key = Object.fromEntries(cols.map((c) => [c, r.before?.[c]]))
      const id = JSON.stringify([r.table, key])
      const row = out.get(id) ?? {table: r.table, key, before: {}, after: {}}
      out.set(id, row)
      for (const [c, v] of Object.entries(r.after)) {
        if (c === 'updated_at' || JSON.stringify(r.before[c]) === JSON.stringify(v)) continue
        if (!(c in row.before)) row.before[c] = r.before[c]
        row.after[c] = v
      }
    }
  }
  return [...out.values()]
}

export interface RebootOutcome {
  written: Array<Record<string, unknown>>
  before_repair: {server: string; fault: string}
  after_repair: {server: string; status: string; host: string | null; fault: string | null}
}

/**
 * The scenario played again in nova's harness with the repaired rows written into its databases, and
 * the boot the fault had blocked sent once more through the real API (reboot.py; cached).
 */
export async function rebootRepaired(scenario: string, rows: RepairedRow[], release: RealNovaRelease = 'zed'): Promise<RebootOutcome> {
  const {writeFile, rm} = await import('node:fs/promises')
  const dir = await privateDir()
  try {
    await writeFile(`${dir}/changes.json`, JSON.stringify(rows), {mode: 0o600})
    return JSON.parse(await factory(['reboot', '--scenario', scenario, '--changes', `${dir}/changes.json`], 900_000, release)) as RebootOutcome
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}

/** The real placement WSGI app (Debian's placement-api) over a cloud's placement database, noauth2. */
export interface PlacementServer {
  url: string
  stop(): Promise<void>
}

async function freePort(): Promise<number> {
  const {createServer} = await import('node:net')
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as {port: number}).port
      srv.close(() => resolve(port))
    })
  })
}

async function privateDir(): Promise<string> {
  const {mkdtemp} = await import('node:fs/promises')
  const {tmpdir} = await import('node:os')
  return mkdtemp(`${tmpdir()}/realnova-`)
}

/**
 * Where a release's own tools run: the host's Zed, or a newer release's nova / placement inside its chroot
 * (it shares the host's network, so the test server and a placement port are the same addresses).
 * `dir` holds the config files and `inside` is that directory as the tools see it.
 */
async function toolbox(release: RealNovaRelease): Promise<{dir: string; inside: string; argv: (tool: string, ...args: string[]) => [string, string[]]}> {
  if (release === 'zed') {
    const dir = await privateDir()
    return {dir, inside: dir, argv: (tool, ...args) => [tool, args]}
  }
  const {mkdtemp} = await import('node:fs/promises')
  const root = RELEASE_CHROOTS[release]
  const dir = await mkdtemp(`${root}/tmp/realnova-`)
  return {dir, inside: `/tmp/${dir.split('/').pop()}`, argv: (tool, ...args) => ['chroot', [root, tool, ...args]]}
}

/** The real placement WSGI app of `release` over the cloud's placement database, noauth2. */
export async function startPlacement(cloud: RealCloud, release: RealNovaRelease = 'zed'): Promise<PlacementServer> {
  const {writeFile, rm} = await import('node:fs/promises')
  const box = await toolbox(release)
  await writeFile(
    `${box.dir}/placement.conf`,
    `[DEFAULT]\nlog_dir =\n[placement_database]\nconnection = ${cloud.placement}\n[api]\nauth_strategy = noauth2\n`,
    {mode: 0o600},
  )
  const port = await freePort()
  // placement 15+ ship no /usr/bin/placement-api (pbr's wsgi scripts are gone): the same WSGI
  // application, placement.wsgi.api, served by the standard library as that script did.
  const root = release === 'zed' ? '' : RELEASE_CHROOTS[release]
  const script = existsSync(`${root}/usr/bin/placement-api`)
    ? ['/usr/bin/placement-api', '--port', String(port), '--host', '127.0.0.1']
    : [
        '-c',
        `import sys, wsgiref.simple_server as w; sys.argv = sys.argv[:1]; from placement.wsgi.api import application; w.make_server('127.0.0.1', ${port}, application).serve_forever()`,
      ]
  const [cmd, args] = box.argv(PYTHON, ...script)
  const proc = execa(cmd, args, {env: {OS_PLACEMENT_CONFIG_DIR: box.inside}, reject: false, all: true})
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    proc.kill('SIGTERM')
    await proc
    await rm(box.dir, {recursive: true, force: true})
  }
  // Bounded wait for the root document (no token needed there).
  for (let i = 0; i < 60; i++) {
    try {
      const r = await fetch(`${url}/`)
      if (r.ok) return {url, stop}
    } catch {
      // not listening yet
    }
    if (proc.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  await stop()
  throw new Error(`placement-api did not start on ${url}: ${String((await proc).all ?? '').slice(-500)}`)
}

/** Real nova-manage of `release` with a nova.conf for this cloud whose [placement] is the given noauth2 placement. */
export async function novaManage(
  cloud: RealCloud,
  placementUrl: string,
  args: string[],
  release: RealNovaRelease = 'zed',
): Promise<{exitCode: number; output: string}> {
  const {writeFile, rm} = await import('node:fs/promises')
  const box = await toolbox(release)
  const dir = box.dir
  try {
    await writeFile(
      `${dir}/nova.conf`,
      `[DEFAULT]\nlog_dir =\ntransport_url = rabbit://cloudctl@127.0.0.1:5672/\n[api_database]\nconnection = ${cloud.api}\n[database]\nconnection = ${cloud.cells.cell1}\n[placement]\nauth_type = admin_token\nendpoint = ${placementUrl}\ntoken = admin\nendpoint_override = ${placementUrl}\n`,
      {mode: 0o600},
    )
    const [cmd, argv] = box.argv('/usr/bin/nova-manage', '--config-file', `${box.inside}/nova.conf`, ...args)
    const r = await execa(cmd, argv, {reject: false, all: true, timeout: 300_000})
    return {exitCode: r.exitCode ?? -1, output: String(r.all ?? '')}
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}
