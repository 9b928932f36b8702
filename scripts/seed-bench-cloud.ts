/**
 * Seeds one of the bench's clouds into MariaDB and leaves it there, to profile on by hand:
 *
 *   npx tsx scripts/seed-bench-cloud.ts --hosts 2000 --instances 40000 --shapes real --prefix mine
 *   npx tsx scripts/seed-bench-cloud.ts --touch mine     # services report now (before a run)
 *   npx tsx scripts/seed-bench-cloud.ts --drop mine      # drop every database of the prefix
 *
 * --shapes real (default) is the realistic cloud made from real nova's shapes, --shapes old the
 * generator's own (the README's bench cloud); both as `npm run bench` makes them (seed 42, 2 cells).
 * --schema zed (default when nova is installed) uses nova's real Zed schemas, as the 2k part;
 * --schema test the test schemas, as the 10k part. Prints the --api-db/--placement-db flags for
 * cloudctl and the cloud's shape. Needs MariaDB (CLOUDCTL_TEST_DSN, default mysql://root@127.0.0.1:3306).
 * A cloud's services look alive for a minute or so after seeding: --touch before a timed run.
 */
import {parseArgs} from 'node:util'

import {closeConnection} from '../src/lib/db/connection.js'
import {createReleaseCloud, releaseUnavailable} from '../test/releases/support.js'
import {adminConnection, createTestCloud} from '../test/support/db.js'
import {
  type BenchCloudKind,
  benchCloudOptions,
  cloudShape,
  generateCloud,
  generationClock,
  secs,
  seedGenerated,
  shapeLine,
  withBufferPool,
} from './bench-support.js'

async function databasesOf(prefix: string): Promise<string[]> {
  if (!/^[a-z0-9_]{1,20}$/.test(prefix)) throw new Error(`bad prefix ${prefix}: lower-case letters, digits and _ (up to 20)`)
  const conn = await adminConnection()
  try {
    const [rows] = await conn.query('SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?', [`${prefix}\\_%`])
    return (rows as Array<{name: string}>).map((r) => r.name)
  } finally {
    await closeConnection(conn)
  }
}

async function main(): Promise<void> {
  const {values} = parseArgs({
    options: {
      hosts: {type: 'string', default: '2000'},
      instances: {type: 'string', default: '40000'},
      shapes: {type: 'string', default: 'real'},
      prefix: {type: 'string', default: 'benchcloud'},
      schema: {type: 'string'},
      drop: {type: 'string'},
      touch: {type: 'string'},
    },
  })
  if (values.drop !== undefined || values.touch !== undefined) {
    const prefix = (values.drop ?? values.touch) as string
    const dbs = await databasesOf(prefix)
    const conn = await adminConnection()
    try {
      for (const db of dbs) {
        if (values.drop !== undefined) await conn.query(`DROP DATABASE IF EXISTS \`${db}\``)
        else {
          const [t] = await conn.query("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'services'", [db])
          if (Number((t as Array<{n: unknown}>)[0]?.n) > 0)
            await conn.query(`UPDATE \`${db}\`.services SET last_seen_up = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP() WHERE deleted = 0`)
        }
      }
    } finally {
      await closeConnection(conn)
    }
    process.stdout.write(`${values.drop !== undefined ? 'dropped' : 'touched'} ${dbs.length} database(s): ${dbs.join(' ')}\n`)
    return
  }
  const kind = values.shapes === 'builder' ? 'old' : (values.shapes as BenchCloudKind)
  if (kind !== 'real' && kind !== 'old') throw new Error(`--shapes ${values.shapes}: real or old`)
  const hosts = Number(values.hosts)
  const instances = Number(values.instances)
  const schema = values.schema ?? (releaseUnavailable('zed') === undefined ? 'zed' : 'test')
  const {now} = generationClock()
  let t0 = performance.now()
  const g = generateCloud(benchCloudOptions(kind, hosts, instances, now))
  process.stderr.write(`generate: ${secs(performance.now() - t0)}\n`)
  t0 = performance.now()
  const cloud =
    schema === 'zed'
      ? await createReleaseCloud('zed', values.prefix as string, ['cell1', 'cell2'])
      : await createTestCloud(values.prefix as string, {cells: ['cell1', 'cell2']})
  process.stderr.write(`create databases (${schema} schemas): ${secs(performance.now() - t0)}\n`)
  // The bench's server settings while seeding (2 GB buffer pool and redo log), put back after.
  for (const [phase, ms] of Object.entries(await withBufferPool(() => seedGenerated(g, cloud)))) process.stderr.write(`${phase}: ${secs(ms)}\n`)
  process.stdout.write(`${shapeLine(await cloudShape(cloud))}\n`)
  process.stdout.write(`--api-db ${cloud.apiUrl} --placement-db ${cloud.placementUrl}\n`)
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
