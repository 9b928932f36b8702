/**
 * npm run bench — speed and memory figures, printed as a table; asserts nothing. Needs a MariaDB
 * (CLOUDCTL_TEST_DSN, default mysql://root@127.0.0.1:3306). Four parts (BENCH_PARTS=startup,2k,10k,render
 * to pick; all by default). The 2k and 10k parts play each cloud of BENCH_CLOUDS (default real,old):
 * 'real', the realistic cloud made from the blobs and trait sets real nova wrote (generateCloud
 * shapes 'real'), booting two m1.medium in one request; 'old', the generator's own shapes (the
 * README's cloud), booting one m1.small. Each cloud's shape (rows per table, average bytes per blob
 * column, read back from MariaDB) is printed after seeding, every phase with its duration, and the
 * run closes with a summary of both clouds' ratios and 10k figures.
 *
 * - startup: `cloudctl --version`, `--help` and `audit --help`, median of 21 runs each.
 * - 2k: the issue-15 cloud (2,000 hosts / 40,000 instances) seeded into MariaDB databases on the
 *   real Zed schemas (test/releases: cloned from what nova-manage and placement-manage created), then
 *   side by side on that one cloud: real `nova-manage placement audit` (over the real placement-api,
 *   noauth2) and `cloudctl audit all`; live `cloudctl simulate boot`; snapshot files loaded; last, real
 *   nova's `select_destinations` for the same flavor, in-process (scripts/select-destinations.py),
 *   beside cloudctl's boot: time, ratio and the choice each made. The nova parts are skipped, with a
 *   line saying so, when nova is not installed.
 * - 10k: 10k hosts / 300k instances / 0.9M allocations (override with BENCH_HOSTS /
 *   BENCH_INSTANCES; BENCH_INSTANCES=335000 gives 1.0M allocations) on the test schemas.
 * - render: 10k findings (BENCH_FINDINGS) rendered in-process as the human report and as JSON
 *   (scripts/bench-render.ts); needs no database.
 *
 * MariaDB's buffer pool is raised to 2 GB for the bench when smaller (withBufferPool, put back
 * after): the 10k cloud's databases do not fit the default 128 MB, which a nova database server is
 * not run with; the 10k part also measures `audit all` at the size found.
 *
 * CLI phases run as child processes (`node bin/run.js ...`, built first) so that each figure is the
 * wall time and peak RSS of the command an operator would run; engine/audit/capacity phases are also
 * timed in-process on an already loaded model, which is what their targets are about.
 */
import {execa} from 'execa'
import {mkdirSync, statSync} from 'node:fs'
import {cpus, loadavg} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {capacityFor} from '../src/lib/capacity/index.js'
import {runChecks} from '../src/lib/checks/index.js'
import {buildModel} from '../src/lib/domain/model.js'
import type {Flavor, Snapshot} from '../src/lib/domain/snapshot.js'
import {createEngineState, defaultSchedulerConfig, simulateBoot} from '../src/lib/engine/index.js'
import {readSnapshotFile} from '../src/lib/snapshot/file.js'
import {createTestCloud} from '../test/support/db.js'
import {type GeneratedCloud, generateCloud} from '../test/support/generator.js'
import {benchTwoK} from './bench-2k.js'
import {benchRender} from './bench-render.js'
import {benchRuntimes} from './bench-runtimes.js'
import {
  type BenchCloudKind,
  benchCloudOptions,
  BOOT_REQUEST,
  bufferPool,
  redoLog,
  cli,
  CLOUD_TITLE,
  CLOUDS,
  cloudShape,
  generationClock,
  heartbeats,
  mb,
  median,
  medianRun,
  OUT,
  record,
  recordCli,
  ROOT,
  rows,
  secs,
  seedGenerated,
  setBufferPool,
  shapeLine,
  startPart,
  summary,
  summaryTable,
  withBufferPool,
} from './bench-support.js'

const HOSTS = Number(process.env.BENCH_HOSTS ?? 10_000)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 300_000)
const PARTS = new Set((process.env.BENCH_PARTS ?? 'startup,2k,10k,render').split(','))

/**
 * Start-up as an operator sees it: a whole `node bin/run.js` process, median of 21 (no hyperfine
 * needed), beside node's own floor; the CPU time is the figure to trust on a shared machine.
 */
async function benchStartup(): Promise<void> {
  const runs: Array<[string, string[], string]> = [
    ['cloudctl --version', ['bin/run.js', '--version'], '≤ 150 ms'],
    ['cloudctl --help', ['bin/run.js', '--help'], '≤ 150 ms'],
    // A topic's help: what an operator types next, also answered from the manifest.
    ['cloudctl audit --help', ['bin/run.js', 'audit', '--help'], '≤ 150 ms'],
    ['node -e 0 (the floor)', ['-e', '0'], ''],
  ]
  for (const [phase, args, target] of runs) {
    const walls: number[] = []
    const cpu: number[] = []
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now()
      const r = await execa('node', ['--import', join(ROOT, 'scripts/rss-report.mjs'), ...args], {cwd: ROOT, env: {NO_COLOR: '1'}})
      walls.push(performance.now() - t0)
      cpu.push(Number(/cpu_ms=([\d.]+)/.exec(String(r.stderr))?.[1] ?? Number.NaN))
    }
    record(phase, median(walls), null, `min ${secs(Math.min(...walls))}, CPU ${secs(median(cpu))} (median)`, target)
  }
}

function twentyFlavors(existing: Flavor[]): string[] {
  const names = existing.filter((f) => f.is_public !== false && !f.disabled).map((f) => f.name)
  return names.slice(0, 20)
}

async function benchTenK(kind: BenchCloudKind): Promise<void> {
  process.stderr.write(`generating ${HOSTS} hosts / ${INSTANCES} instances (${CLOUD_TITLE[kind]})\n`)
  const mine = summary(kind)
  const {flavor: bootFlavor, count: bootCount} = BOOT_REQUEST[kind]
  const bootArgs = ['--flavor', bootFlavor, ...(bootCount > 1 ? ['--num-instances', String(bootCount)] : [])]
  const bootWhat = `${bootFlavor}${bootCount > 1 ? ` × ${bootCount}` : ', 1 instance'}`
  let t0 = performance.now()
  // Services must look alive at capture time: the generator's clock is now.
  const {generatedAt, now} = generationClock()
  const heartbeat = heartbeats(generatedAt)
  let generated: GeneratedCloud | null = generateCloud(benchCloudOptions(kind, HOSTS, INSTANCES, now))
  let snapshot: Snapshot | null = generated.snapshot
  // 20 flavors for the capacity figure: the generator's own plus variations of them.
  const base = snapshot.nova_api.flavors.slice()
  let nextId = Math.max(...base.map((f) => f.id)) + 1
  for (let i = 0; snapshot.nova_api.flavors.length < 20; i++) {
    const f = base[i % base.length]
    snapshot.nova_api.flavors.push({...f, id: nextId, flavorid: `bench-${nextId}`, name: `${f.name}.x${i + 2}`, vcpus: f.vcpus * 2, memory_mb: f.memory_mb * 2})
    nextId++
  }
  const counts = `${snapshot.nova.compute_nodes.length} compute nodes, ${snapshot.nova.instances.length} instances, ${snapshot.placement.allocations.length} allocations`
  record('generate', performance.now() - t0, null, counts)

  const cloud = await createTestCloud('bench', {cells: ['cell1', 'cell2']})
  try {
    t0 = performance.now()
    for (const [phase, ms] of Object.entries(await seedGenerated(generated, cloud))) record(`${phase} (test bed)`, ms, null)
    mine.seed10k = performance.now() - t0
    // The generator's copy is not what an operator's process holds: drop it so that the in-process
    // figures below are not taxed by collecting a heap twice the size.
    snapshot = null
    generated = null
    const shape = await cloudShape(cloud)
    mine.shape10k = shape
    record('the cloud as seeded', null, null, shapeLine(shape))
    const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]

    const file = join(OUT, 'cloud.json.gz')
    await heartbeat(cloud)
    const cap = await cli(['snapshot', 'capture', ...live, '-o', file])
    recordCli('snapshot capture (MariaDB → .json.gz)', cap, `${(statSync(file).size / 1e6).toFixed(0)} MB file`)

    const show = await cli(['snapshot', 'show', file, '--json'])
    recordCli('snapshot show FILE (load the file)', show)

    const columns = join(OUT, 'cloud.cloudctl')
    await heartbeat(cloud)
    const capColumns = await cli(['snapshot', 'capture', ...live, '-o', columns])
    recordCli('snapshot capture (MariaDB → .cloudctl)', capColumns, `${(statSync(columns).size / 1e6).toFixed(0)} MB file`)
    mine.capture10k = capColumns
    const showColumns = await cli(['snapshot', 'show', columns, '--json'])
    recordCli('snapshot show FILE.cloudctl (load the file)', showColumns)
    t0 = performance.now()
    let c0 = process.cpuUsage()
    await readSnapshotFile(columns)
    let c = process.cpuUsage(c0)
    record('load the .cloudctl file (in-process)', performance.now() - t0, null, `CPU ${secs((c.user + c.system) / 1000)}`, '≤ 3 s')

    const bootLive = await medianRun(3, async () => (await heartbeat(cloud), cli(['simulate', 'boot', ...live, ...bootArgs, '--json'])))
    recordCli(`simulate boot (live, ${bootWhat}, median of 3)`, bootLive, bootLive.spread, '≤ 1.5 s')
    mine.boot10k = bootLive
    const capacityLive = await cli(['simulate', 'capacity', ...live, '--flavor', bootFlavor, '--json'])
    recordCli('simulate capacity (live, 1 flavor)', capacityLive)

    const auditLive = await medianRun(3, async () => (await heartbeat(cloud), cli(['audit', 'all', ...live, '--json'])))
    recordCli(`audit all (from MariaDB, median of 3)`, auditLive, `${auditLive.spread}, ${mb(bufferPool.bench / 1024)} buffer pool`, '≤ 4 s, ≤ 800 MB')
    mine.audit10k = auditLive
    if (bufferPool.original < bufferPool.bench) {
      // The same on the server as it was found, for the record: its pool does not hold this cloud.
      await setBufferPool(bufferPool.original)
      try {
        const small = await medianRun(3, async () => (await heartbeat(cloud), cli(['audit', 'all', ...live, '--json'])))
        recordCli(`audit all (from MariaDB, median of 3), ${mb(bufferPool.original / 1024)} pool`, small, small.spread)
      } finally {
        await setBufferPool(bufferPool.bench)
      }
    }
    const auditFile = await cli(['audit', 'all', '--snapshot', file, '--json'])
    recordCli('audit all --snapshot FILE (incl. load)', auditFile)

    // In-process: the targets below are about the work after the snapshot is loaded.
    t0 = performance.now()
    c0 = process.cpuUsage()
    const loaded = await readSnapshotFile(file)
    const loadMs = performance.now() - t0
    c = process.cpuUsage(c0)
    record('load the .json.gz file (in-process)', loadMs, null, `CPU ${secs((c.user + c.system) / 1000)}`)
    // "From a loaded snapshot": the rows are in memory; indexing them is part of the audit.
    t0 = performance.now()
    const model = buildModel(loaded)
    const modelMs = performance.now() - t0
    t0 = performance.now()
    const report = runChecks(model)
    const checksMs = performance.now() - t0
    record(
      'audit all on a loaded snapshot (model + checks)',
      modelMs + checksMs,
      null,
      `model ${secs(modelMs)} + checks ${secs(checksMs)}, ${report.findings.length} findings`,
      '< 3 s',
    )

    const cfg = defaultSchedulerConfig()
    simulateBoot(model, {flavor: bootFlavor, numInstances: bootCount}, cfg, {seed: 1}) // warm caches built once per model
    const boots: number[] = []
    for (let i = 0; i < 5; i++) {
      t0 = performance.now()
      simulateBoot(model, {flavor: bootFlavor, numInstances: bootCount}, cfg, {seed: i})
      boots.push(performance.now() - t0)
    }
    boots.sort((a, b) => a - b)
    record(`simulate boot, ${bootWhat} (median of 5)`, boots[2], null, '', '≤ 50 ms')
    t0 = performance.now()
    const many = simulateBoot(model, {flavor: bootFlavor, numInstances: 1000}, cfg, {seed: 1, state: createEngineState()})
    record(
      `simulate boot --num-instances 1000 (${bootFlavor})`,
      performance.now() - t0,
      null,
      `${many.instances.filter((x) => x.host !== null).length} placed`,
      '≤ 2 s',
    )

    const bootCli = await cli(['simulate', 'boot', '--snapshot', file, ...bootArgs, '--json'])
    recordCli(`simulate boot CLI (incl. load), ${bootWhat}`, bootCli)

    const flavors = twentyFlavors(loaded.nova_api.flavors)
    t0 = performance.now()
    const cap20 = capacityFor(model, {flavors})
    record(
      `simulate capacity, ${flavors.length} flavors`,
      performance.now() - t0,
      null,
      `${cap20.flavors.reduce((n, f) => n + (f.fits ?? 0), 0)} fit in total`,
      '≤ 5 s',
    )

    const capCli = await cli(['simulate', 'capacity', '--snapshot', file, '--json', ...flavors.flatMap((f) => ['--flavor', f])])
    recordCli(`simulate capacity CLI (incl. load), ${flavors.length} flavors`, capCli)
  } finally {
    await cloud.drop()
  }
}

async function main(): Promise<void> {
  mkdirSync(OUT, {recursive: true})
  process.stderr.write(`building the CLI\n`)
  // Emit in place (`build:emit`, the build without emptying dist/ first): the bench may run beside tests.
  await execa('npm', ['run', '--silent', 'build:emit'], {cwd: ROOT})
  const parts: Array<[string, string, () => Promise<void>]> = [
    ['startup', 'start-up', benchStartup],
    ...CLOUDS.map((kind): [string, string, () => Promise<void>] => [
      '2k',
      `2k hosts / 40k instances on the real Zed schemas, beside real nova: ${CLOUD_TITLE[kind]}`,
      () => benchTwoK(kind),
    ]),
    ...CLOUDS.map((kind): [string, string, () => Promise<void>] => [
      '10k',
      `${HOSTS} hosts / ${INSTANCES} instances: ${CLOUD_TITLE[kind]}`,
      () => benchTenK(kind),
    ]),
    ['render', 'rendering 10k findings (in-process)', benchRender],
    // Not in the default set: compares the node/cloudctl pairs of BENCH_RUNTIMES (bench-runtimes.ts).
    ['runtimes', 'runtimes side by side (BENCH_RUNTIMES)', benchRuntimes],
  ]
  const runParts = async (): Promise<void> => {
    for (const [key, title, run] of parts) {
      if (!PARTS.has(key)) continue
      startPart(title)
      const t0 = performance.now()
      await run()
      record('(this part)', performance.now() - t0, null)
    }
  }
  const bench0 = performance.now()
  // Only the parts that read MariaDB need its buffer pool.
  if (PARTS.has('2k') || PARTS.has('10k') || PARTS.has('runtimes')) await withBufferPool(runParts)
  else await runParts()

  const w = (s: string, n: number): string => s.padEnd(n)
  console.log(
    `\ncloudctl bench (node ${process.version}, ${new Date().toISOString()}, ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, load average ${loadavg()[0].toFixed(1)} at the end)`,
  )
  if (bufferPool.bench > 0)
    console.log(
      `MariaDB innodb_buffer_pool_size: ${mb(bufferPool.bench / 1024)} during the bench${bufferPool.bench === bufferPool.original ? '' : ` (the server had ${mb(bufferPool.original / 1024)}; put back)`}`,
    )
  if (redoLog.bench > 0)
    console.log(
      `MariaDB innodb_log_file_size: ${mb(redoLog.bench / 1024)} during the bench${redoLog.bench === redoLog.original ? '' : ` (the server had ${mb(redoLog.original / 1024)}; put back)`}`,
    )
  let part = ''
  for (const r of rows) {
    if (r.part !== part) {
      part = r.part
      console.log(`\n${part}\n${w('phase', 56)}${w('wall', 12)}${w('peak RSS', 11)}${w('target', 19)}note`)
    }
    console.log(`${w(r.phase, 56)}${w(r.wall, 12)}${w(r.rss, 11)}${w(r.target, 19)}${r.note}`)
  }
  console.log(
    `\nin-process phases: peak RSS of the bench process ${mb(process.resourceUsage().maxRSS)} (includes the generator's copy of the cloud, held until seeding)`,
  )
  const closing = summaryTable()
  if (closing.length > 0) console.log(`\nsummary (${CLOUDS.join(', ')}; the whole bench took ${secs(performance.now() - bench0)})\n${closing.join('\n')}`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
