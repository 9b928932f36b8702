/** What every part of `npm run bench` shares: the table, timed CLI runs, service heartbeats. */
import {execa} from 'execa'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {closeConnection} from '../src/lib/db/connection.js'
import {adminConnection, type TestCloud} from '../test/support/db.js'

export const ROOT = new URL('..', import.meta.url).pathname
export const OUT = join(ROOT, '.bench')

export interface Row {
  part: string
  phase: string
  wall: string
  rss: string
  note: string
  target: string
}
export const rows: Row[] = []
let part = ''

export function startPart(name: string): void {
  part = name
  process.stderr.write(`\n== ${name}\n`)
}

export const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`
export const secs = (ms: number): string => (ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`)

export function record(phase: string, ms: number | null, rssKb: number | null, note = '', target = ''): void {
  rows.push({part, phase, wall: ms === null ? '' : secs(ms), rss: rssKb === null ? '' : mb(rssKb), note, target})
  process.stderr.write(`  ${phase}: ${ms === null ? '' : secs(ms)}${rssKb === null ? '' : `, peak RSS ${mb(rssKb)}`} ${note}\n`)
}

/** A CLI run's row: wall and peak RSS, and its CPU time (the figure that holds on a shared machine). */
export function recordCli(phase: string, r: {ms: number; rssKb: number; cpuMs: number}, note = '', target = ''): void {
  record(phase, r.ms, r.rssKb, [`CPU ${secs(r.cpuMs)}`, note].filter((x) => x !== '').join(', '), target)
}

export async function cli(args: string[], okCodes = [0, 3]): Promise<{ms: number; rssKb: number; cpuMs: number; stdout: string}> {
  const t0 = performance.now()
  const r = await execa('node', ['--import', join(ROOT, 'scripts/rss-report.mjs'), join(ROOT, 'bin/run.js'), ...args], {
    reject: false,
    env: {NO_COLOR: '1'},
    maxBuffer: 1 << 30,
  })
  const ms = performance.now() - t0
  if (!okCodes.includes(r.exitCode ?? -1)) throw new Error(`cloudctl ${args.join(' ')} exited ${r.exitCode}: ${String(r.stderr).slice(-2000)}`)
  const m = /maxrss_kb=(\d+) cpu_ms=([\d.]+)/.exec(String(r.stderr))
  return {ms, rssKb: m ? Number(m[1]) : 0, cpuMs: m ? Number(m[2]) : 0, stdout: String(r.stdout)}
}

/**
 * Seeding thousands of hosts takes minutes; a real nova-compute reports every 10 s. Shift every
 * service's heartbeat forward by the time since generation, as the periodic task would have, so that
 * liveness at capture time is what the generator meant (up services up, down ones down).
 */
export function heartbeats(generatedAt: Date): (cloud: TestCloud) => Promise<void> {
  let shifted = 0
  return async (cloud) => {
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
}

/** The generator's clock for a cloud that must look alive when it is read. */
export function generationClock(): {generatedAt: Date; now: string} {
  const generatedAt = new Date(Math.floor(Date.now() / 1000) * 1000)
  return {generatedAt, now: generatedAt.toISOString().slice(0, 19).replace('T', ' ')}
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

type CliRun = Awaited<ReturnType<typeof cli>>

/** The run of median wall time among `n` (one run on a shared 2-core machine can be off by a third), with the spread of the walls. */
export async function medianRun(n: number, run: () => Promise<CliRun>): Promise<CliRun & {spread: string}> {
  const runs: CliRun[] = []
  for (let i = 0; i < n; i++) runs.push(await run())
  runs.sort((a, b) => a.ms - b.ms)
  const mid = runs[Math.floor(runs.length / 2)] as CliRun
  return {...mid, spread: `walls ${secs(runs[0]?.ms ?? 0)} to ${secs(runs.at(-1)?.ms ?? 0)}`}
}

/** MariaDB's buffer pool during the bench: the size found on the server, and the bench's. */
export const bufferPool = {original: 0, bench: 0}

const GiB = 1024 ** 3

/** Sets innodb_buffer_pool_size (online) and waits until the server says the resize is done. */
export async function setBufferPool(bytes: number): Promise<void> {
  const conn = await adminConnection()
  try {
    await conn.query('SET GLOBAL innodb_buffer_pool_size = ?', [bytes])
    for (let i = 0; i < 600; i++) {
      const [rows] = await conn.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")
      const status = String((rows as Array<{Value?: unknown}>)[0]?.Value ?? '')
      if (status === '' || /complete/i.test(status)) return
      await new Promise((r) => setTimeout(r, 100))
    }
  } finally {
    await closeConnection(conn)
  }
}

/**
 * The bench with a buffer pool that holds its clouds. A nova database server is sized to its data;
 * MariaDB's default pool is 128 MB, and the 10k-host cloud's databases take ~0.6 GB: a pool smaller
 * than the data measures the server re-reading pages, on the two cores the CLI runs on. A smaller
 * pool is raised to 2 GB for the bench (SET GLOBAL, online) and put back after; the 10k part also
 * measures `audit all` at the size found.
 */
export async function withBufferPool<T>(body: () => Promise<T>): Promise<T> {
  const conn = await adminConnection()
  try {
    const [rows] = await conn.query('SELECT @@innodb_buffer_pool_size AS size')
    bufferPool.original = Number((rows as Array<{size: unknown}>)[0]?.size)
  } finally {
    await closeConnection(conn)
  }
  bufferPool.bench = Math.max(bufferPool.original, 2 * GiB)
  if (bufferPool.bench === bufferPool.original) return body()
  await setBufferPool(bufferPool.bench)
  try {
    return await body()
  } finally {
    await setBufferPool(bufferPool.original)
  }
}
