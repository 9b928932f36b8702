/**
 * The issue-15 comparison: one 2,000-host cloud on nova's real Zed schemas, real nova-manage beside
 * cloudctl on the same databases, and the snapshot files of that cloud loaded.
 */
import {execa} from 'execa'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {readSnapshotFile} from '../src/lib/snapshot/file.js'
import {type RealCloud, startPlacement} from '../test/realnova/support.js'
import {createReleaseCloud, releaseUnavailable} from '../test/releases/support.js'
import {seedSnapshot, type TestCloud} from '../test/support/db.js'
import {generateCloud} from '../test/support/generator.js'
import {cli, generationClock, heartbeats, median, OUT, record, recordCli, secs} from './bench-support.js'

const HOSTS = 2000
const INSTANCES = 40_000

/** Real `nova-manage placement audit` over `cloud`, through the real placement-api (noauth2). */
async function novaManageAudit(cloud: TestCloud): Promise<{ms: number; exitCode: number; tail: string}> {
  const placement = await startPlacement({placement: cloud.placementUrl} as RealCloud)
  const dir = await mkdtemp(join(tmpdir(), 'bench-nova-'))
  try {
    // [database] is only nova-manage's default cell; the audit walks every cell mapping.
    const conf = `[DEFAULT]\nlog_dir =\ntransport_url = rabbit://cloudctl@127.0.0.1:5672/\n[api_database]\nconnection = ${cloud.apiUrl}\n[database]\nconnection = ${cloud.cellUrls.cell1}\n[placement_database]\nconnection = ${cloud.placementUrl}\n[placement]\nauth_type = admin_token\nendpoint = ${placement.url}\ntoken = admin\nendpoint_override = ${placement.url}\n`
    await writeFile(join(dir, 'nova.conf'), conf, {mode: 0o600})
    const t0 = performance.now()
    const r = await execa('/usr/bin/nova-manage', ['--config-file', join(dir, 'nova.conf'), 'placement', 'audit'], {reject: false, all: true, timeout: 3_600_000})
    const ms = performance.now() - t0
    // Its last words, without eventlet's import-order warning (printed by every nova-manage run here).
    const said = String(r.all ?? '').trim().split('\n').filter((l) => l.trim() !== '' && !/monkey patching|^\s*(warn|from |import )/i.test(l))
    return {ms, exitCode: r.exitCode ?? -1, tail: said.slice(-1).join('')}
  } finally {
    await placement.stop()
    await rm(dir, {recursive: true, force: true})
  }
}

/** Median wall and CPU time of three loads (CPU includes V8's collector threads; it holds on a busy machine). */
async function loadTimes(file: string): Promise<{wall: number; cpu: number}> {
  const walls: number[] = []
  const cpus: number[] = []
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    await readSnapshotFile(file)
    const c = process.cpuUsage(c0)
    walls.push(performance.now() - t0)
    cpus.push((c.user + c.system) / 1000)
  }
  return {wall: median(walls), cpu: median(cpus)}
}

export async function benchTwoK(): Promise<void> {
  const why = releaseUnavailable('zed')
  if (why !== undefined) {
    record('2k cloud on the real Zed schemas', null, null, `skipped: ${why}`)
    return
  }
  const {generatedAt, now} = generationClock()
  let t0 = performance.now()
  const snapshot = generateCloud({seed: 42, now, cells: 2, hosts: HOSTS, instances: INSTANCES, bootFromVolumeFraction: 0.02, pinnedHostFraction: 0.1, migrationsInProgress: 40}).snapshot
  record('generate', performance.now() - t0, null, `${snapshot.nova.compute_nodes.length} compute nodes, ${snapshot.nova.instances.length} instances, ${snapshot.placement.allocations.length} allocations`)
  const cloud = await createReleaseCloud('zed', 'bench2k', ['cell1', 'cell2'])
  const heartbeat = heartbeats(generatedAt)
  try {
    t0 = performance.now()
    await seedSnapshot(snapshot, cloud)
    record('seed MariaDB (real Zed schemas)', performance.now() - t0, null)
    const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]

    await heartbeat(cloud)
    const audit = await cli(['audit', 'all', ...live, '--json'])
    recordCli('cloudctl audit all (from MariaDB)', audit, '', '≥ 50× nova-manage')
    await heartbeat(cloud)
    const boot = await cli(['simulate', 'boot', ...live, '--flavor', 'm1.small', '--json'])
    recordCli('cloudctl simulate boot (live, 1 instance)', boot, '', '≤ 0.5 s')
    const capacity = await cli(['simulate', 'capacity', ...live, '--flavor', 'm1.small', '--json'])
    recordCli('cloudctl simulate capacity (live, 1 flavor)', capacity)

    const nova = await novaManageAudit(cloud)
    record('real nova-manage placement audit', nova.ms, null, `exit ${nova.exitCode}: ${nova.tail.slice(0, 120)}`)
    record('ratio nova-manage placement audit / cloudctl audit all', null, null, `${(nova.ms / audit.ms).toFixed(1)}× (${secs(nova.ms)} / ${secs(audit.ms)})`, '≥ 50×')
    record('real select_destinations', null, null, 'not measured: driving the real scheduler over these databases is not in the bench yet')

    for (const name of ['cloud-2k.json.gz', 'cloud-2k.cloudctl']) {
      const file = join(OUT, name)
      await heartbeat(cloud)
      const cap = await cli(['snapshot', 'capture', ...live, '-o', file])
      recordCli(`snapshot capture -o ${name}`, cap)
      const load = await loadTimes(file)
      record(`load ${name} (in-process, median of 3)`, load.wall, null, `CPU ${secs(load.cpu)}`, name.endsWith('.cloudctl') ? '≤ 0.5 s' : '')
      const show = await cli(['snapshot', 'show', file, '--json'])
      recordCli(`snapshot show ${name}`, show)
    }
  } finally {
    await cloud.drop()
  }
}
