/**
 * The issue-15 comparison: one 2,000-host cloud on nova's real Zed schemas, real nova-manage beside
 * cloudctl on the same databases, and the snapshot files of that cloud loaded. Played once per
 * cloud of BENCH_CLOUDS (bench-support.ts: the realistic cloud and the old one), each with the boot
 * request of BOOT_REQUEST.
 */
import {execa} from 'execa'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {readSnapshotFile} from '../src/lib/snapshot/file.js'
import {type RealCloud, startPlacement} from '../test/realnova/support.js'
import {createReleaseCloud, releaseUnavailable} from '../test/releases/support.js'
import type {TestCloud} from '../test/support/db.js'
import {generateCloud} from '../test/support/generator.js'
import {
  type BenchCloudKind,
  benchCloudOptions,
  BOOT_REQUEST,
  cli,
  cloudShape,
  CLOUD_TITLE,
  generationClock,
  heartbeats,
  median,
  medianRun,
  OUT,
  record,
  recordCli,
  reporting,
  ROOT,
  secs,
  seedGenerated,
  shapeLine,
  summary,
} from './bench-support.js'

const HOSTS = 2000
const INSTANCES = 40_000

/**
 * `body` with a nova.conf (in a temporary directory, 0600) for `cloud` whose [placement] points at a
 * real placement-api started over the cloud's placement database (noauth2); `transport` and the
 * extra sections differ between nova-manage and the scheduler.
 */
async function withNovaConf<T>(cloud: TestCloud, transport: string, extra: string, body: (conf: string) => Promise<T>): Promise<T> {
  const placement = await startPlacement({placement: cloud.placementUrl} as RealCloud)
  const dir = await mkdtemp(join(tmpdir(), 'bench-nova-'))
  try {
    // [database] is only the default cell; nova-manage's audit and the scheduler walk every cell mapping.
    const conf = `[DEFAULT]\nlog_dir =\ntransport_url = ${transport}\n${extra}[api_database]\nconnection = ${cloud.apiUrl}\n[database]\nconnection = ${cloud.cellUrls.cell1}\n[placement]\nauth_type = admin_token\nendpoint = ${placement.url}\ntoken = admin\nendpoint_override = ${placement.url}\n`
    await writeFile(join(dir, 'nova.conf'), conf, {mode: 0o600})
    return await body(join(dir, 'nova.conf'))
  } finally {
    await placement.stop()
    await rm(dir, {recursive: true, force: true})
  }
}

/** Real `nova-manage placement audit` over `cloud`, through the real placement-api (noauth2). */
function novaManageAudit(cloud: TestCloud): Promise<{ms: number; exitCode: number; tail: string}> {
  return withNovaConf(cloud, 'rabbit://cloudctl@127.0.0.1:5672/', `[placement_database]\nconnection = ${cloud.placementUrl}\n`, async (conf) => {
    const t0 = performance.now()
    const r = await execa('/usr/bin/nova-manage', ['--config-file', conf, 'placement', 'audit'], {reject: false, all: true, timeout: 3_600_000})
    const ms = performance.now() - t0
    // Its last words, without eventlet's import-order warning (printed by every nova-manage run here).
    const said = String(r.all ?? '')
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '' && !/monkey patching|^\s*(warn|from |import )/i.test(l))
    return {ms, exitCode: r.exitCode ?? -1, tail: said.slice(-1).join('')}
  })
}

export interface SelectDestinations {
  host: string
  node: string
  select_destinations_s: number
  select_destinations_cpu_s: number
  with_startup_s: number
  with_startup_cpu_s: number
  /** What nova's scheduler saw: placement's candidates and their hosts, how many its filters kept, the best three weighed. */
  candidates?: number
  provider_summaries?: number
  filtered?: number
  /** The hosts of placement's candidates, as the filters received them. */
  host_states?: string[]
  weighed?: Array<{host: string; node: string; weight: number}>
  /** Wall of the whole python3 process, imports included. */
  processMs: number
}

/**
 * Real nova's `select_destinations` for one instance of `flavor`, in-process in a python3 of ours
 * (scripts/select-destinations.py) over `cloud`, through the real placement-api. It claims in
 * placement: one new consumer's allocation is written.
 */
export function realSelectDestinations(cloud: TestCloud, flavor: string, count = 1): Promise<SelectDestinations> {
  // fake:// keeps oslo.messaging in memory: the scheduler sets up its notifier, nothing is sent.
  return withNovaConf(cloud, 'fake:/', '[oslo_messaging_notifications]\ndriver = noop\n', async (conf) => {
    const t0 = performance.now()
    const r = await execa('/usr/bin/python3', [join(ROOT, 'scripts/select-destinations.py'), conf, flavor, String(count)], {reject: false, timeout: 1_800_000})
    const processMs = performance.now() - t0
    const last = String(r.stdout).trim().split('\n').pop() ?? ''
    if (r.exitCode !== 0 || !last.startsWith('{')) throw new Error(`select-destinations.py exited ${r.exitCode}: ${String(r.stderr).slice(-2000)}`)
    return {...(JSON.parse(last) as Omit<SelectDestinations, 'processMs'>), processMs}
  })
}

/** cloudctl's trace of its boot beside what nova's scheduler saw: the candidate set, the filtered hosts, the choice. */
function sameChoice(explained: string, sd: SelectDestinations): string {
  const b = JSON.parse(explained) as {
    placement: {candidates: number; kept: number}
    instances: Array<{host: string | null; filters: Array<{end: number}>}>
    weighed: Array<{host: string; weight: number}>
    verdicts: Array<{host: string; stage: string}>
  }
  // cloudctl's candidate hosts: every host placement did not turn away (or cut by its limit).
  const ours = new Set(b.verdicts.filter((v) => v.stage !== 'placement').map((v) => v.host))
  const theirs = sd.host_states ?? []
  const shared = theirs.filter((h) => ours.has(h)).length
  const sets = `candidate hosts: ${shared} shared, ${ours.size - shared} only cloudctl's, ${theirs.length - shared} only nova's`
  const top = (ws: Array<{host: string; weight: number}> | undefined): string =>
    (ws ?? [])
      .slice(0, 3)
      .map((w) => `${w.host} ${w.weight.toFixed(4)}`)
      .join(', ')
  const cloudctl = `cloudctl: ${b.placement.kept} of ${b.placement.candidates} candidates kept, ${b.instances[0]?.filters.at(-1)?.end ?? '?'} after filters, chose ${b.instances[0]?.host ?? 'none'} (best: ${top(b.weighed)})`
  const nova = `nova: ${sd.candidates ?? '?'} candidates, ${sd.filtered ?? '?'} after filters, chose ${sd.host} (best: ${top(sd.weighed)})`
  const verdict = b.instances[0]?.host === sd.host ? 'same host' : 'different hosts'
  return `${verdict}; ${sets}; ${cloudctl}; ${nova}`
}

/** Runs of the cloudctl side of each ratio: one run on a shared 2-core machine can be off by a third. */
const RUNS = Number(process.env.BENCH_RUNS ?? 5)

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

export async function benchTwoK(kind: BenchCloudKind): Promise<void> {
  const why = releaseUnavailable('zed')
  if (why !== undefined) {
    record('2k cloud on the real Zed schemas', null, null, `skipped: ${why}`)
    return
  }
  const {flavor, count} = BOOT_REQUEST[kind]
  const boot = ['--flavor', flavor, ...(count > 1 ? ['--num-instances', String(count)] : [])]
  const what = `${flavor}${count > 1 ? ` × ${count}` : ', 1 instance'}`
  const mine = summary(kind)
  const {generatedAt, now} = generationClock()
  const t0 = performance.now()
  let generated: ReturnType<typeof generateCloud> | null = generateCloud(benchCloudOptions(kind, HOSTS, INSTANCES, now))
  const snapshot = generated.snapshot
  record(
    'generate',
    performance.now() - t0,
    null,
    `${CLOUD_TITLE[kind]}: ${snapshot.nova.compute_nodes.length} compute nodes, ${snapshot.nova.instances.length} instances, ${snapshot.placement.allocations.length} allocations`,
  )
  const cloud = await createReleaseCloud('zed', 'bench2k', ['cell1', 'cell2'])
  const heartbeat = heartbeats(generatedAt)
  try {
    for (const [phase, ms] of Object.entries(await seedGenerated(generated, cloud))) record(`${phase} (real Zed schemas)`, ms, null)
    generated = null
    const shape = await cloudShape(cloud)
    mine.shape2k = shape
    record('the cloud as seeded', null, null, shapeLine(shape))
    const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]

    const audit = await medianRun(RUNS, async () => (await heartbeat(cloud), cli(['audit', 'all', ...live, '--json'])))
    recordCli(`cloudctl audit all (from MariaDB, median of ${RUNS})`, audit, audit.spread, '≥ 50× nova-manage')
    const bootRun = await medianRun(RUNS, async () => (await heartbeat(cloud), cli(['simulate', 'boot', ...live, ...boot, '--json'])))
    recordCli(`cloudctl simulate boot (live, ${what}, median of ${RUNS})`, bootRun, bootRun.spread, '≤ 0.5 s')
    // The same request and seed explained, untimed: its verdicts name cloudctl's candidate hosts,
    // set beside nova's at the end.
    const explained = await cli(['simulate', 'boot', ...live, ...boot, '--explain', '--json'])
    const capacity = await cli(['simulate', 'capacity', ...live, '--flavor', flavor, '--json'])
    recordCli(`cloudctl simulate capacity (live, 1 flavor: ${flavor})`, capacity)

    const nova = await novaManageAudit(cloud)
    record('real nova-manage placement audit', nova.ms, null, `exit ${nova.exitCode}: ${nova.tail.slice(0, 120)}`)
    record(
      'ratio nova-manage placement audit / cloudctl audit all',
      null,
      null,
      `${(nova.ms / audit.ms).toFixed(1)}× (${secs(nova.ms)} / ${secs(audit.ms)})`,
      '≥ 50×',
    )
    mine.audit2k = {cloudctl: audit.ms, nova: nova.ms}

    for (const name of [`cloud-2k-${kind}.json.gz`, `cloud-2k-${kind}.cloudctl`]) {
      const file = join(OUT, name)
      await heartbeat(cloud)
      const cap = await cli(['snapshot', 'capture', ...live, '-o', file])
      recordCli(`snapshot capture -o ${name}`, cap)
      const load = await loadTimes(file)
      record(`load ${name} (in-process, median of 3)`, load.wall, null, `CPU ${secs(load.cpu)}`, name.endsWith('.cloudctl') ? '≤ 0.5 s' : '')
      const show = await cli(['snapshot', 'show', file, '--json'])
      recordCli(`snapshot show ${name}`, show)
    }

    // Last: nova's claim writes allocations that every figure above would otherwise have seen.
    const sd = await reporting(cloud, heartbeat, () => realSelectDestinations(cloud, flavor, count))
    const sdMs = sd.select_destinations_s * 1000
    const startupMs = sd.with_startup_s * 1000
    record(
      `real select_destinations (in-process, ${what})`,
      sdMs,
      null,
      `CPU ${secs(sd.select_destinations_cpu_s * 1000)}; with the scheduler's start-up (SchedulerManager() and its load of the cells' instances) ${secs(startupMs)} (CPU ${secs(sd.with_startup_cpu_s * 1000)}); python3 process ${secs(sd.processMs)}`,
    )
    record(
      'ratio real select_destinations / cloudctl simulate boot',
      null,
      null,
      `${(sdMs / bootRun.ms).toFixed(2)}× (${secs(sdMs)} / ${secs(bootRun.ms)}); with start-up ${(startupMs / bootRun.ms).toFixed(2)}×`,
      '≥ 35×',
    )
    record('same choice?', null, null, sameChoice(explained.stdout, sd))
    mine.boot2k = {cloudctl: bootRun.ms, nova: sdMs, novaWithStartup: startupMs, request: what}
  } finally {
    await cloud.drop()
  }
}
