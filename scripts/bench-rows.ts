/**
 * Targeted timing of the capture's row reads, side by side in one run on one seeded cloud: every
 * read table of nova_api, placement and the cells read by `readRows` (what the capture does), and
 * the same rows made from the driver's public rowsAsArray parse by the reference converter
 * (src/lib/db/row-converter.ts, which readRows uses since the capture stopped decoding packets itself;
 * before, readRows was the packet decoder). Rounds alternate the two; medians are printed.
 *
 *   node --max-old-space-size=12288 --import tsx scripts/bench-rows.ts
 *
 * BENCH_HOSTS / BENCH_INSTANCES size the cloud (default 10k hosts / 300k instances, as
 * `npm run bench`'s 10k part), BENCH_ROUNDS the rounds (default 5). Needs MariaDB
 * (CLOUDCTL_TEST_DSN); the databases are dropped at the end. The buffer pool is raised to 2 GB for
 * the run, as `npm run bench` does (withBufferPool).
 */
import {closeConnection} from '../src/lib/db/connection.js'
import {eachRow} from '../src/lib/db/row-stream.js'
import {openReader, readRows, selectSql} from '../src/lib/db/table-reader.js'
import {parseDbUrl} from '../src/lib/db/url.js'
import type {TableSpec} from '../src/lib/domain/tables/define.js'
import {NOVA_API_READ_TABLES, NOVA_CELL_READ_TABLES, PLACEMENT_READ_TABLES} from '../src/lib/domain/tables/index.js'
import {createTestCloud, seedSnapshot} from '../test/support/db.js'
import {withBufferPool} from './bench-support.js'
import {generateCloud} from '../test/support/generator.js'
import {rowConverter} from '../src/lib/db/row-converter.js'

const HOSTS = Number(process.env.BENCH_HOSTS ?? 10_000)
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 300_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

type Mode = 'readRows' | 'rowsAsArray+converter'

async function readAll(urls: Array<[string, TableSpec[]]>, mode: Mode): Promise<{ms: number; rows: number}> {
  const t0 = performance.now()
  let rows = 0
  for (const [url, specs] of urls) {
    const reader = await openReader('bench', parseDbUrl(url), () => {})
    try {
      for (const spec of specs) {
        const cell = spec.cell ? 'cell-uuid' : undefined
        if (mode === 'readRows') rows += (await readRows(reader, spec, {cellUuid: cell})).length
        else {
          const convert = rowConverter(spec)
          const out: unknown[] = []
          await eachRow<unknown[]>(reader.conn, selectSql(spec), [], (x) => out.push(convert(x, cell, [])), {}, true)
          rows += out.length
        }
      }
    } finally {
      await closeConnection(reader.conn)
    }
  }
  return {ms: performance.now() - t0, rows}
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

async function main(): Promise<void> {
  process.stderr.write(`generating ${HOSTS} hosts / ${INSTANCES} instances\n`)
  let snapshot: ReturnType<typeof generateCloud>['snapshot'] | null = generateCloud({
    seed: 42,
    cells: 2,
    hosts: HOSTS,
    instances: INSTANCES,
    bootFromVolumeFraction: 0.02,
    pinnedHostFraction: 0.1,
  }).snapshot
  const cloud = await createTestCloud('benchrows', {cells: ['cell1', 'cell2']})
  try {
    await seedSnapshot(snapshot, cloud)
    snapshot = null
    const urls: Array<[string, TableSpec[]]> = [
      [cloud.apiUrl, NOVA_API_READ_TABLES],
      [cloud.placementUrl, PLACEMENT_READ_TABLES],
      ...Object.values(cloud.cellUrls).map((u): [string, TableSpec[]] => [u, NOVA_CELL_READ_TABLES]),
    ]
    const times: Record<Mode, number[]> = {readRows: [], 'rowsAsArray+converter': []}
    let rows = 0
    // one warm-up of each, then alternating rounds
    for (let r = -1; r < ROUNDS; r++) {
      for (const mode of (r % 2 === 0 ? ['readRows', 'rowsAsArray+converter'] : ['rowsAsArray+converter', 'readRows']) as Mode[]) {
        const got = await readAll(urls, mode)
        rows = got.rows
        if (r >= 0) times[mode].push(got.ms)
      }
    }
    process.stdout.write(`${rows} rows per read, ${ROUNDS} rounds (median, min):\n`)
    for (const [mode, t] of Object.entries(times))
      process.stdout.write(`  ${mode.padEnd(24)} ${(median(t) / 1000).toFixed(2)} s  ${(Math.min(...t) / 1000).toFixed(2)} s\n`)
  } finally {
    await cloud.drop()
  }
}

await withBufferPool(main)
