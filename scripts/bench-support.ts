/** What every part of `npm run bench` shares: the table, timed CLI runs, service heartbeats. */
import {execa} from 'execa'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {closeConnection, openConnection} from '../src/lib/db/connection.js'
import type {Snapshot} from '../src/lib/domain/snapshot.js'
import {adminConnection, seedSnapshot, type TestCloud} from '../test/support/db.js'
import {type GeneratedCloud, type GenerateOptions, generateCloud} from '../test/support/generator.js'

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
        await conn.query(`UPDATE \`${db}\`.services SET last_seen_up = last_seen_up + INTERVAL ? SECOND, updated_at = updated_at + INTERVAL ? SECOND`, [
          seconds,
          seconds,
        ])
      }
    } finally {
      await closeConnection(conn)
    }
  }
}

/**
 * Heartbeats every 10 s while `body` runs, as nova-compute's report timer would: real nova's
 * scheduler takes its time to start on a 2k cloud (a minute on a loaded machine), longer than
 * service_down_time, and then reads every service as down.
 */
export async function reporting<T>(cloud: TestCloud, heartbeat: (cloud: TestCloud) => Promise<void>, body: () => Promise<T>): Promise<T> {
  let busy: Promise<void> = heartbeat(cloud)
  await busy
  const timer = setInterval(() => {
    busy = busy.then(() => heartbeat(cloud)).catch(() => undefined)
  }, 10_000)
  try {
    return await body()
  } finally {
    clearInterval(timer)
    await busy
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
/** MariaDB's redo log during the bench, likewise. */
export const redoLog = {original: 0, bench: 0}

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
  if (bufferPool.bench !== bufferPool.original) await setBufferPool(bufferPool.bench)
  try {
    return await withRedoLog(body)
  } finally {
    if (bufferPool.bench !== bufferPool.original) await setBufferPool(bufferPool.original)
  }
}

/**
 * Seeding the realistic 10k cloud writes ~3 GB of rows; with MariaDB's default 96 MB redo log the
 * server spends the load flushing pages at every checkpoint (innodb_io_capacity 200), not
 * inserting. The redo log is raised to 2 GB for the bench (online since MariaDB 10.9) and put back
 * after; a server that refuses keeps its size, and the bench says so.
 */
async function withRedoLog<T>(body: () => Promise<T>): Promise<T> {
  const conn = await adminConnection()
  try {
    const [rows] = await conn.query('SELECT @@innodb_log_file_size AS size')
    redoLog.original = Number((rows as Array<{size: unknown}>)[0]?.size)
    redoLog.bench = redoLog.original
    if (redoLog.original < 2 * GiB) {
      try {
        await conn.query('SET GLOBAL innodb_log_file_size = ?', [2 * GiB])
        redoLog.bench = 2 * GiB
      } catch (error) {
        process.stderr.write(`innodb_log_file_size stays ${mb(redoLog.original / 1024)}: ${error instanceof Error ? error.message : String(error)}\n`)
      }
    }
  } finally {
    await closeConnection(conn)
  }
  try {
    return await body()
  } finally {
    if (redoLog.bench !== redoLog.original) {
      const conn = await adminConnection()
      try {
        await conn.query('SET GLOBAL innodb_log_file_size = ?', [redoLog.original])
      } finally {
        await closeConnection(conn)
      }
    }
  }
}

// ---------------------------------------------------------------- the bench's clouds

export type BenchCloudKind = 'old' | 'real'

/** BENCH_CLOUDS=real,old (default both, in that order) picks the clouds the 2k and 10k parts play. */
export const CLOUDS: BenchCloudKind[] = (() => {
  const asked = (process.env.BENCH_CLOUDS ?? 'real,old')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  for (const c of asked) if (c !== 'real' && c !== 'old') throw new Error(`BENCH_CLOUDS: ${c} is not a cloud (real, old)`)
  return asked as BenchCloudKind[]
})()

export const CLOUD_TITLE: Record<BenchCloudKind, string> = {
  real: 'realistic cloud (real nova shapes)',
  old: 'old bench cloud (generator shapes)',
}

/**
 * The boot each cloud's ratio is measured with: the realistic cloud's is issue 32's request (two
 * m1.medium in one request), the old cloud keeps the README's one m1.small so its figures compare
 * with the record.
 */
export const BOOT_REQUEST: Record<BenchCloudKind, {flavor: string; count: number}> = {
  real: {flavor: 'm1.medium', count: 2},
  old: {flavor: 'm1.small', count: 1},
}

/** What the closing summary prints, per cloud. */
export interface CloudSummary {
  shape2k?: CloudShape
  shape10k?: CloudShape
  audit2k?: {cloudctl: number; nova: number}
  boot2k?: {cloudctl: number; nova: number; novaWithStartup: number; request: string}
  audit10k?: {ms: number; rssKb: number; cpuMs: number}
  capture10k?: {ms: number; rssKb: number}
  boot10k?: {ms: number; rssKb: number}
  seed10k?: number
}
const summaries = new Map<BenchCloudKind, CloudSummary>()

export function summary(kind: BenchCloudKind): CloudSummary {
  let s = summaries.get(kind)
  if (!s) summaries.set(kind, (s = {}))
  return s
}

/** The closing note: both ratios and the 10k figures of every cloud played, side by side. */
export function summaryTable(): string[] {
  if (summaries.size === 0) return []
  const kinds = CLOUDS.filter((k) => summaries.has(k))
  const cell = (k: BenchCloudKind, f: (s: CloudSummary) => string | undefined): string => f(summary(k)) ?? '–'
  const table: Array<[string, ...string[]]> = [
    [
      '2k: nova-manage placement audit / cloudctl audit all (target ≥ 50×)',
      ...kinds.map((k) =>
        cell(k, (s) => s.audit2k && `${(s.audit2k.nova / s.audit2k.cloudctl).toFixed(1)}× (${secs(s.audit2k.nova)} / ${secs(s.audit2k.cloudctl)})`),
      ),
    ],
    ['2k: boot request', ...kinds.map((k) => cell(k, (s) => s.boot2k?.request))],
    [
      '2k: select_destinations with start-up / cloudctl simulate boot (target ≥ 35×)',
      ...kinds.map((k) =>
        cell(
          k,
          (s) => s.boot2k && `${(s.boot2k.novaWithStartup / s.boot2k.cloudctl).toFixed(1)}× (${secs(s.boot2k.novaWithStartup)} / ${secs(s.boot2k.cloudctl)})`,
        ),
      ),
    ],
    [
      '2k: select_destinations alone / cloudctl simulate boot',
      ...kinds.map((k) => cell(k, (s) => s.boot2k && `${(s.boot2k.nova / s.boot2k.cloudctl).toFixed(1)}×`)),
    ],
    [
      '10k: audit all from MariaDB, median of 3 (target ≤ 4 s, ≤ 800 MB)',
      ...kinds.map((k) => cell(k, (s) => s.audit10k && `${secs(s.audit10k.ms)}, ${mb(s.audit10k.rssKb)} (CPU ${secs(s.audit10k.cpuMs)})`)),
    ],
    ['10k: snapshot capture → .cloudctl', ...kinds.map((k) => cell(k, (s) => s.capture10k && `${secs(s.capture10k.ms)}, ${mb(s.capture10k.rssKb)}`))],
    [
      '10k: simulate boot live (the 2k request), median of 3',
      ...kinds.map((k) => cell(k, (s) => s.boot10k && `${secs(s.boot10k.ms)}, ${mb(s.boot10k.rssKb)}`)),
    ],
    ['10k: seeding MariaDB', ...kinds.map((k) => cell(k, (s) => (s.seed10k === undefined ? undefined : secs(s.seed10k))))],
  ]
  // Rows no cloud has a figure for (a part not played) are left out.
  const rows = [['', ...kinds.map((k) => CLOUD_TITLE[k])], ...table.filter((r) => r.slice(1).some((c) => c !== '–'))]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)) + 2)
  const lines = rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('')
      .trimEnd(),
  )
  for (const [label, pick] of [
    ['2k', (s: CloudSummary) => s.shape2k],
    ['10k', (s: CloudSummary) => s.shape10k],
  ] as const) {
    for (const k of kinds) {
      const shape = pick(summary(k))
      if (shape) lines.push(`${label} shape, ${CLOUD_TITLE[k]}: ${shapeLine(shape)}`)
    }
  }
  return lines
}

/**
 * The bench's clouds, both of seed 42 in two cells: 'old' is the generator's own shapes (the clouds
 * of the README's figures); 'real' is made from the shapes real nova wrote (generateCloud shapes
 * 'real': request specs, NUMA everywhere, ~73 traits per provider), with a migration history of one
 * per 40 instances and 8% of the instances deleted (soft-deleted rows), as issue 32's cloud.
 */
export function benchCloudOptions(kind: BenchCloudKind, hosts: number, instances: number, now: string): GenerateOptions {
  const base: GenerateOptions = {seed: 42, now, cells: 2, hosts, instances, bootFromVolumeFraction: 0.02, pinnedHostFraction: 0.1}
  if (kind === 'old') return {...base, migrationsInProgress: Math.min(200, Math.floor(instances / 1000))}
  return {
    ...base,
    shapes: 'real',
    migrationsInProgress: Math.min(200, Math.floor(instances / 1000)),
    completedMigrations: Math.round(instances / 40),
    deletedInstances: Math.round(instances * 0.08),
  }
}

/** Rows per INSERT of instance_extra, and bytes: under max_allowed_packet (16 MB) with 4 KB rows. */
const EXTRA_BATCH_ROWS = 2000
const EXTRA_BATCH_BYTES = 8 * 1024 * 1024

/**
 * Seeds a generated cloud: seedSnapshot for every table, except instance_extra when the cloud has
 * columns the snapshot does not carry (vcpu_model, keypairs of real shapes): those rows are written
 * here, whole, in multi-row INSERTs per cell, beside seedSnapshot's load (other tables, other
 * connections). Returns the milliseconds of each phase, and of the whole when they overlap.
 */
export async function seedGenerated(g: GeneratedCloud, cloud: TestCloud): Promise<Record<string, number>> {
  const extra = g.instanceExtra
  const phases: Record<string, number> = {}
  const t0 = performance.now()
  const s: Snapshot = extra ? {...g.snapshot, nova: {...g.snapshot.nova, instances: g.snapshot.nova.instances.map((r) => ({...r, extra: null}))}} : g.snapshot
  const rest = seedSnapshot(s, cloud).then(() => {
    phases['seed (seedSnapshot)'] = performance.now() - t0
  })
  if (!extra) {
    await rest
    return phases
  }
  const columns = ['instance_uuid', 'numa_topology', 'pci_requests', 'flavor', ...extra.columns, 'deleted']
  const head = `INSERT INTO instance_extra (${columns.map((c) => `\`${c}\``).join(', ')}) VALUES ?`
  const extras = Promise.all(
    g.snapshot.cells
      .filter((c) => !c.is_cell0 && c.name !== null && cloud.cellUrls[c.name] !== undefined)
      .map(async (cell) => {
        const conn = await openConnection(cloud.cellUrls[cell.name as string], {label: `seed instance_extra ${cell.name}`})
        try {
          await conn.query('SET SESSION foreign_key_checks = 0')
          await conn.query('SET SESSION unique_checks = 0')
          await conn.query('START TRANSACTION')
          let batch: unknown[][] = []
          let bytes = 0
          for (const r of g.snapshot.nova.instances) {
            if (r.cell_uuid !== cell.uuid || r.extra === null) continue
            const row = [r.uuid, r.extra.numa_topology, r.extra.pci_requests, r.extra.flavor, ...extra.values(r), 0]
            for (const v of row) bytes += typeof v === 'string' ? v.length + 8 : 8
            batch.push(row)
            if (batch.length >= EXTRA_BATCH_ROWS || bytes >= EXTRA_BATCH_BYTES) {
              await conn.query(head, [batch])
              batch = []
              bytes = 0
            }
          }
          if (batch.length > 0) await conn.query(head, [batch])
          await conn.query('COMMIT')
        } finally {
          await closeConnection(conn)
        }
      }),
  ).then(() => {
    phases['seed instance_extra (all columns, beside it)'] = performance.now() - t0
  })
  await Promise.all([rest, extras])
  phases['seed, whole'] = performance.now() - t0
  return phases
}

/** Blob columns whose average size the bench prints, per database kind. */
const BLOB_COLUMNS: Array<[keyof Pick<TestCloud, 'apiUrl' | 'placementUrl'> | 'cells', string, string]> = [
  ['cells', 'compute_nodes', 'numa_topology'],
  ['cells', 'compute_nodes', 'stats'],
  ['cells', 'compute_nodes', 'cpu_info'],
  ['cells', 'instance_extra', 'numa_topology'],
  ['cells', 'instance_extra', 'flavor'],
  ['cells', 'instance_extra', 'vcpu_model'],
  ['cells', 'instance_extra', 'keypairs'],
  ['cells', 'instance_extra', 'pci_requests'],
  ['apiUrl', 'request_specs', 'spec'],
]
const COUNTED: Array<[keyof Pick<TestCloud, 'apiUrl' | 'placementUrl'> | 'cells', string, string]> = [
  ['cells', 'compute_nodes', ''],
  ['cells', 'instances', ''],
  ['cells', 'instances', 'deleted <> 0'],
  ['cells', 'instance_extra', ''],
  ['cells', 'migrations', ''],
  ['apiUrl', 'instance_mappings', ''],
  ['apiUrl', 'request_specs', ''],
  ['apiUrl', 'aggregate_hosts', ''],
  ['placementUrl', 'resource_providers', ''],
  ['placementUrl', 'allocations', ''],
  ['placementUrl', 'consumers', ''],
  ['placementUrl', 'resource_provider_traits', ''],
]

export interface CloudShape {
  rows: Array<[string, number]>
  blobs: Array<[string, number, number]>
  traitsPerProvider: number
}

/** The seeded cloud's shape, read back from MariaDB: rows per table, average bytes per blob column. */
export async function cloudShape(cloud: TestCloud): Promise<CloudShape> {
  const conn = await adminConnection()
  const dbs = (where: string): string[] =>
    where === 'cells' ? Object.values(cloud.databases.cells) : [where === 'apiUrl' ? cloud.databases.api : cloud.databases.placement]
  try {
    const rows: Array<[string, number]> = []
    for (const [where, table, cond] of COUNTED) {
      let n = 0
      for (const db of dbs(where)) {
        const [r] = await conn.query(`SELECT COUNT(*) AS n FROM \`${db}\`.\`${table}\`${cond ? ` WHERE ${cond}` : ''}`)
        n += Number((r as Array<{n: unknown}>)[0]?.n)
      }
      rows.push([`${table}${cond ? ` (${cond})` : ''}`, n])
    }
    const blobs: Array<[string, number, number]> = []
    for (const [where, table, column] of BLOB_COLUMNS) {
      let n = 0
      let bytes = 0
      for (const db of dbs(where)) {
        const [r] = await conn.query(`SELECT COUNT(\`${column}\`) AS n, COALESCE(SUM(LENGTH(\`${column}\`)), 0) AS bytes FROM \`${db}\`.\`${table}\``)
        n += Number((r as Array<{n: unknown}>)[0]?.n)
        bytes += Number((r as Array<{bytes: unknown}>)[0]?.bytes)
      }
      blobs.push([`${table}.${column}`, n, n === 0 ? 0 : bytes / n])
    }
    const providers = rows.find(([t]) => t === 'resource_providers')?.[1] ?? 0
    const traits = rows.find(([t]) => t === 'resource_provider_traits')?.[1] ?? 0
    return {rows, blobs, traitsPerProvider: providers === 0 ? 0 : traits / providers}
  } finally {
    await closeConnection(conn)
  }
}

/** One line of the shape: what a reader compares between clouds. */
export function shapeLine(s: CloudShape): string {
  const rows = s.rows.map(([t, n]) => `${t} ${n}`).join(', ')
  const blobs = s.blobs
    .filter(([, n]) => n > 0)
    .map(([c, , avg]) => `${c} ${avg < 1024 ? `${avg.toFixed(0)} B` : `${(avg / 1024).toFixed(1)} KB`}`)
    .join(', ')
  return `rows: ${rows}; traits per provider ${s.traitsPerProvider.toFixed(1)}; average blob: ${blobs}`
}

export {generateCloud}
