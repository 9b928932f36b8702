/**
 * Runtimes side by side (`BENCH_PARTS=runtimes`): the same start-up and live `simulate boot` figures
 * for each node/cloudctl pair of BENCH_RUNTIMES, run in turn (one pair after the other within each
 * repetition, so that the machine's load falls on all of them alike). A pair is
 * `label=NODE_BINARY:CLOUDCTL_TREE`, pairs separated by commas; the default is this node and this
 * tree. The "before" of a change is a built copy of the older tree run by the older node, e.g.
 *   BENCH_RUNTIMES="node 20, old build=/usr/bin/node:/tmp/old,node 24=/opt/node24/bin/node:."
 * The cloud is the generator's 2,000 hosts / 40,000 instances seeded into MariaDB.
 */
import {execa} from 'execa'
import {resolve} from 'node:path'
import {performance} from 'node:perf_hooks'

import {createTestCloud, seedSnapshot} from '../test/support/db.js'
import {generateCloud} from '../test/support/generator.js'
import {generationClock, heartbeats, median, record, ROOT, secs} from './bench-support.js'

interface Runtime {
  label: string
  node: string
  tree: string
}

function runtimes(): Runtime[] {
  const spec = process.env.BENCH_RUNTIMES ?? `this node=${process.execPath}:${ROOT}`
  return spec.split(',').map((pair) => {
    const m = /^([^=]+)=([^:]+):(.+)$/.exec(pair.trim())
    if (!m) throw new Error(`BENCH_RUNTIMES: "${pair}" is not label=NODE:TREE`)
    return {label: m[1], node: m[2], tree: resolve(ROOT, m[3])}
  })
}

interface Run {
  ms: number
  cpuMs: number
  rssKb: number
}

async function run(rt: Runtime, args: string[]): Promise<Run> {
  const t0 = performance.now()
  const r = await execa(rt.node, ['--import', resolve(ROOT, 'scripts/rss-report.mjs'), resolve(rt.tree, 'bin/run.js'), ...args], {
    reject: false,
    env: {NO_COLOR: '1'},
    maxBuffer: 1 << 28,
  })
  const ms = performance.now() - t0
  if (r.exitCode !== 0 && r.exitCode !== 3)
    throw new Error(`${rt.label}: cloudctl ${args.slice(0, 2).join(' ')} exited ${r.exitCode}: ${String(r.stderr).slice(-600)}`)
  const m = /maxrss_kb=(\d+) cpu_ms=([\d.]+)/.exec(String(r.stderr))
  return {ms, cpuMs: m ? Number(m[2]) : Number.NaN, rssKb: m ? Number(m[1]) : 0}
}

async function sideBySide(phase: string, rts: Runtime[], n: number, args: string[], target: string, before?: () => Promise<void>): Promise<void> {
  const runs = new Map<Runtime, Run[]>(rts.map((rt) => [rt, []]))
  for (let i = 0; i < n; i++) {
    for (const rt of rts) {
      await before?.()
      runs.get(rt)?.push(await run(rt, args))
    }
  }
  for (const rt of rts) {
    const rs = runs.get(rt) ?? []
    record(
      `${phase} [${rt.label}]`,
      median(rs.map((r) => r.ms)),
      Math.max(...rs.map((r) => r.rssKb)),
      `CPU ${secs(median(rs.map((r) => r.cpuMs)))} (median of ${n})`,
      target,
    )
  }
}

export async function benchRuntimes(): Promise<void> {
  const rts = runtimes()
  for (const rt of rts) {
    const v = await execa(rt.node, ['--version'])
    process.stderr.write(`  ${rt.label}: node ${v.stdout} running ${rt.tree}\n`)
  }
  // The first run of a tree on a node fills node's compile cache: not what an operator's next start sees.
  for (const rt of rts) await run(rt, ['--help'])
  await sideBySide('cloudctl --version', rts, 11, ['--version'], '')
  await sideBySide('cloudctl --help', rts, 11, ['--help'], '≤ 150 ms')

  const {generatedAt, now} = generationClock()
  const heartbeat = heartbeats(generatedAt)
  const snapshot = generateCloud({
    seed: 42,
    now,
    cells: 2,
    hosts: 2000,
    instances: 40_000,
    bootFromVolumeFraction: 0.02,
    pinnedHostFraction: 0.1,
    migrationsInProgress: 40,
  }).snapshot
  const cloud = await createTestCloud('benchrt', {cells: ['cell1', 'cell2']})
  try {
    const t0 = performance.now()
    await seedSnapshot(snapshot, cloud)
    record('seed MariaDB, 2k hosts / 40k instances (test bed)', performance.now() - t0, null)
    const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]
    await sideBySide('simulate boot, live, 2k hosts', rts, 3, ['simulate', 'boot', ...live, '--flavor', 'm1.small', '--json'], '', () => heartbeat(cloud))
  } finally {
    await cloud.drop()
  }
}
