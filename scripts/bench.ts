/**
 * npm run bench — speed and memory figures on a generated cloud of 10k hosts / 300k instances /
 * 0.9M allocations (override with BENCH_HOSTS / BENCH_INSTANCES; BENCH_INSTANCES=335000 gives
 * 1.0M allocations). Needs a MariaDB
 * (CLOUDCTL_TEST_DSN, default mysql://root@127.0.0.1:3306). Prints a table; asserts nothing.
 *
 * CLI phases run as child processes (`node bin/run.js ...`, built first) so that each figure is the
 * wall time and peak RSS of the command an operator would run; engine/audit/capacity phases are also
 * timed in-process on an already loaded model, which is what their targets are about.
 */
import {execa} from 'execa'
import {mkdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {capacityFor} from '../src/lib/capacity/index.js'
import {runChecks} from '../src/lib/checks/index.js'
import {buildModel} from '../src/lib/domain/model.js'
import type {Flavor, Snapshot} from '../src/lib/domain/snapshot.js'
import {createEngineState, defaultSchedulerConfig, simulateBoot} from '../src/lib/engine/index.js'
import {readSnapshotFile} from '../src/lib/snapshot/file.js'
import {closeConnection} from '../src/lib/db/connection.js'
import {adminConnection, createTestCloud, seedSnapshot, type TestCloud} from '../test/support/db.js'
import {generateCloud} from '../test/support/generator.js'

const HOSTS = Number(process.env.BENCH_HOSTS ?? 10_000)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 300_000)
const ROOT = new URL('..', import.meta.url).pathname
const OUT = join(ROOT, '.bench')
const rows: Array<{phase: string; wall: string; rss: string; note: string; target: string}> = []

const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`
const secs = (ms: number): string => (ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`)

function record(phase: string, ms: number, rssKb: number | null, note = '', target = ''): void {
  rows.push({phase, wall: secs(ms), rss: rssKb === null ? '' : mb(rssKb), note, target})
  process.stderr.write(`  ${phase}: ${secs(ms)}${rssKb === null ? '' : `, peak RSS ${mb(rssKb)}`} ${note}\n`)
}

async function cli(args: string[], okCodes = [0, 3]): Promise<{ms: number; rssKb: number; stdout: string}> {
  const t0 = performance.now()
  const r = await execa('node', ['--max-old-space-size=12288', '--import', join(ROOT, 'scripts/rss-report.mjs'), join(ROOT, 'bin/run.js'), ...args], {
    reject: false,
    env: {NO_COLOR: '1'},
    maxBuffer: 1 << 30,
  })
  const ms = performance.now() - t0
  if (!okCodes.includes(r.exitCode ?? -1)) throw new Error(`cloudctl ${args.join(' ')} exited ${r.exitCode}: ${String(r.stderr).slice(-2000)}`)
  const m = /maxrss_kb=(\d+)/.exec(String(r.stderr))
  return {ms, rssKb: m ? Number(m[1]) : 0, stdout: String(r.stdout)}
}

/**
 * Seeding 10k hosts takes minutes; a real nova-compute reports every 10 s. Shift every service's
 * heartbeat forward by the time since generation, as the periodic task would have, so that
 * liveness at capture time is what the generator meant (up services up, down ones down).
 */
let shifted = 0
async function heartbeat(cloud: TestCloud, generatedAt: Date): Promise<void> {
  const seconds = Math.floor((Date.now() - generatedAt.getTime()) / 1000) - shifted
  shifted += seconds
  const conn = await adminConnection()
  try {
    for (const db of [cloud.databases.cell0, ...Object.values(cloud.databases.cells)]) {
      await conn.query(`UPDATE \`${db}\`.services SET last_seen_up = last_seen_up + INTERVAL ? SECOND, updated_at = updated_at + INTERVAL ? SECOND`, [seconds, seconds])
    }
  } finally {
    await closeConnection(conn)
  }
}

function twentyFlavors(existing: Flavor[]): string[] {
  const names = existing.filter((f) => f.is_public !== false && !f.disabled).map((f) => f.name)
  return names.slice(0, 20)
}

async function main(): Promise<void> {
  mkdirSync(OUT, {recursive: true})
  process.stderr.write(`building the CLI\n`)
  // Emit in place rather than `npm run build` (which empties dist/ first): the bench may run beside tests.
  await execa('npx', ['tsc', '-p', 'tsconfig.json'], {cwd: ROOT})
  // The manifest is part of the build: a stale one would hide new commands and flags from --help.
  await execa('npx', ['oclif', 'manifest'], {cwd: ROOT})

  process.stderr.write(`generating ${HOSTS} hosts / ${INSTANCES} instances\n`)
  let t0 = performance.now()
  // Services must look alive at capture time: the generator's clock is now.
  const generatedAt = new Date(Math.floor(Date.now() / 1000) * 1000)
  const now = generatedAt.toISOString().slice(0, 19).replace('T', ' ')
  let snapshot: Snapshot | null = generateCloud({seed: 42, now, cells: 2, hosts: HOSTS, instances: INSTANCES, bootFromVolumeFraction: 0.02, pinnedHostFraction: 0.1, migrationsInProgress: Math.min(200, Math.floor(INSTANCES / 1000))}).snapshot
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
    await seedSnapshot(snapshot, cloud)
    // The generator's copy is not what an operator's process holds: drop it so that the in-process
    // figures below are not taxed by collecting a heap twice the size.
    snapshot = null
    record('seed MariaDB (test bed)', performance.now() - t0, null)
    const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]

    const file = join(OUT, 'cloud.json.gz')
    await heartbeat(cloud, generatedAt)
    const cap = await cli(['snapshot', 'capture', ...live, '-o', file])
    record('snapshot capture (MariaDB → .json.gz)', cap.ms, cap.rssKb, `${(statSync(file).size / 1e6).toFixed(0)} MB file`)

    const show = await cli(['snapshot', 'show', file, '--json'])
    record('snapshot show FILE (load the file)', show.ms, show.rssKb)

    await heartbeat(cloud, generatedAt)
    const auditLive = await cli(['audit', 'all', ...live, '--json'])
    record('audit all (from MariaDB)', auditLive.ms, auditLive.rssKb, '', '< 10 s')
    const auditFile = await cli(['audit', 'all', '--snapshot', file, '--json'])
    record('audit all --snapshot FILE (incl. load)', auditFile.ms, auditFile.rssKb)

    // In-process: the targets below are about the work after the snapshot is loaded.
    t0 = performance.now()
    const loaded = await readSnapshotFile(file)
    const loadMs = performance.now() - t0
    record('load the snapshot file (in-process)', loadMs, null)
    // "From a loaded snapshot": the rows are in memory; indexing them is part of the audit.
    t0 = performance.now()
    const model = buildModel(loaded)
    const modelMs = performance.now() - t0
    t0 = performance.now()
    const report = runChecks(model)
    const checksMs = performance.now() - t0
    record('audit all on a loaded snapshot (model + checks)', modelMs + checksMs, null, `model ${secs(modelMs)} + checks ${secs(checksMs)}, ${report.findings.length} findings`, '< 3 s')

    const cfg = defaultSchedulerConfig()
    simulateBoot(model, {flavor: 'm1.small'}, cfg, {seed: 1}) // warm caches built once per model
    const boots: number[] = []
    for (let i = 0; i < 5; i++) {
      t0 = performance.now()
      simulateBoot(model, {flavor: 'm1.small'}, cfg, {seed: i})
      boots.push(performance.now() - t0)
    }
    boots.sort((a, b) => a - b)
    record('simulate boot, 1 instance (median of 5)', boots[2], null, '', '≤ 50 ms')
    t0 = performance.now()
    const many = simulateBoot(model, {flavor: 'm1.small', numInstances: 1000}, cfg, {seed: 1, state: createEngineState()})
    record('simulate boot --num-instances 1000', performance.now() - t0, null, `${many.instances.filter((x) => x.host !== null).length} placed`, '≤ 2 s')

    const bootCli = await cli(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--json'])
    record('simulate boot CLI (incl. load), 1 instance', bootCli.ms, bootCli.rssKb)

    const flavors = twentyFlavors(loaded.nova_api.flavors)
    t0 = performance.now()
    const cap20 = capacityFor(model, {flavors})
    record(`simulate capacity, ${flavors.length} flavors`, performance.now() - t0, null, `${cap20.flavors.reduce((n, f) => n + (f.fits ?? 0), 0)} fit in total`, '≤ 5 s')

    const capCli = await cli(['simulate', 'capacity', '--snapshot', file, '--json', ...flavors.flatMap((f) => ['--flavor', f])])
    record(`simulate capacity CLI (incl. load), ${flavors.length} flavors`, capCli.ms, capCli.rssKb)
  } finally {
    await cloud.drop()
  }

  const w = (s: string, n: number): string => s.padEnd(n)
  console.log(`\ncloudctl bench — ${HOSTS} hosts, ${INSTANCES} instances (node ${process.version}, ${new Date().toISOString()})`)
  console.log(`${w('phase', 50)}${w('wall', 12)}${w('peak RSS', 11)}${w('target', 10)}note`)
  for (const r of rows) console.log(`${w(r.phase, 50)}${w(r.wall, 12)}${w(r.rss, 11)}${w(r.target, 10)}${r.note}`)
  console.log(`in-process phases: peak RSS of the bench process ${mb(process.resourceUsage().maxRSS)} (includes the generator's copy of the cloud, held until seeding)`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
