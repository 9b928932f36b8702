/**
 * A 3-node Galera 4 cluster of its own (galera-cluster.ts), issue 26 items 4-6, with the built CLI
 * and CHECKSUM TABLE on every node before and after:
 *  - the repair lock holds across nodes: a second `repair leaks --apply` through another node exits 1;
 *  - reads are causal: an audit through a node whose applier is held waits for it (or says it timed
 *    out), and never reports a leak already removed on another node; each database's node is reported;
 *  - errors name the database and the node: a certification failure at COMMIT, a read-only node.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection} from '../../src/lib/db/connection.js'
import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {changedTables, paused, startCli} from '../adversarial/executor-support.js'
import {baseCloud} from '../repairs/faults.js'
import {cloudctl} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {galeraPresent, type GaleraCluster, startGaleraCluster} from './galera-cluster.js'

/** A password as operators have them: '@' and '/' (written %40 and %2F in the URL). */
const PW = 'gal@ra/Pw-9'
const LEAKED = 6

// In CI (.ci/run ensure_galera) a missing galera-4 fails the suite instead of skipping it.
describe.skipIf(!galeraPresent && process.env.CI !== 'true')(
  `a 3-node Galera 4 cluster${galeraPresent ? '' : ': skipped, mariadbd or galera-4 is not installed'}`,
  {timeout: 300_000},
  () => {
    let cluster: GaleraCluster
    let cloud: TestCloud
    let snapshot: Snapshot
    let leaked: string[]
    let tmp: string

    const url = (n: number, db: string, extra = '') =>
      `mysql+pymysql://nova:${encodeURIComponent(PW)}@127.0.0.1:${cluster.nodes[n - 1].port}/${db}?charset=utf8${extra}`
    /** Every database of the cloud through node n. */
    const via = (n: number, apiExtra = '') => [
      '--api-db',
      url(n, cloud.databases.api, apiExtra),
      '--placement-db',
      url(n, cloud.databases.placement),
      '--cell-db',
      `cell1=${url(n, cloud.databases.cells.cell1)}`,
      '--cell-db',
      `${CELL0_UUID}=${url(n, cloud.databases.cell0)}`,
    ]
    const state = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]
    const auditLines = (name: string) =>
      readFileSync(join(tmp, `${name}.log`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)

    /** "db.table" -> CHECKSUM TABLE on node n, read causally (the node has applied everything committed). */
    async function checksums(n: number): Promise<Map<string, string>> {
      const conn = await cluster.root(n)
      try {
        await conn.query('SET SESSION wsrep_sync_wait = 1')
        const out = new Map<string, string>()
        for (const db of cloud.allDatabases()) {
          const [tables] = await conn.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME', [db])
          for (const {t} of tables as Array<{t: string}>) {
            const [rows] = await conn.query(`CHECKSUM TABLE \`${db}\`.\`${t}\``)
            out.set(`${db.replace(/^.*_(api|placement|cell0|cell1)$/, '$1')}.${t}`, String((rows as Array<{Checksum: unknown}>)[0]?.Checksum))
          }
        }
        return out
      } finally {
        await closeConnection(conn)
      }
    }

    /** The checksums of node 1, after checking that nodes 2 and 3 hold exactly the same. */
    async function clusterChecksums(): Promise<Map<string, string>> {
      const [a, b, c] = await Promise.all([checksums(1), checksums(2), checksums(3)])
      expect(changedTables(a, b), 'node 2 differs from node 1').toEqual([])
      expect(changedTables(a, c), 'node 3 differs from node 1').toEqual([])
      return a
    }

    async function onNode<T>(n: number, body: (c: Connection) => Promise<T>): Promise<T> {
      const c = await cluster.root(n)
      try {
        return await body(c)
      } finally {
        await closeConnection(c)
      }
    }

    /** Puts the leaked consumers' allocations back (as the seed had them), through node 1. */
    async function plantLeaks(): Promise<void> {
      const rows = snapshot.placement.allocations.filter((a) => leaked.includes(a.consumer_id))
      await onNode(1, async (c) => {
        for (const a of rows)
          await c.query(
            `INSERT INTO \`${cloud.databases.placement}\`.allocations (id, resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (?, ?, ?, ?, ?, NOW())`,
            [a.id, a.resource_provider_id, a.consumer_id, a.resource_class_id, a.used],
          )
      })
    }

    const leakFindings = (stdout: string) =>
      (JSON.parse(stdout) as {findings: Array<{code: string; subject: Record<string, unknown>}>}).findings.filter((f) =>
        leaked.includes(String(f.subject.consumer_uuid ?? f.subject.instance_uuid ?? '')),
      )

    beforeAll(async () => {
      tmp = mkdtempSync(join(tmpdir(), 'cloudctl-galera-test-'))
      cluster = await startGaleraCluster()
      await onNode(1, async (c) => {
        // Writes only: no SUPER, so read_only applies to it as to nova's account.
        await c.query("CREATE USER 'nova'@'%' IDENTIFIED BY ?", [PW])
        await c.query("GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO 'nova'@'%'")
      })
      const {b} = baseCloud(26)
      for (let i = 0; i < 4; i++) b.addInstance(i % 2 ? 'compute1' : 'compute2', 'm1.small')
      leaked = []
      for (let i = 0; i < LEAKED; i++) {
        const uuid = b.addInstance(i % 2 ? 'compute1' : 'compute2', 'm1.small').row.uuid
        b.deleteInstance(uuid, {keepAllocations: true})
        leaked.push(uuid)
      }
      snapshot = b.build()
      const saved = process.env.CLOUDCTL_TEST_DSN
      process.env.CLOUDCTL_TEST_DSN = cluster.rootUrl(1)
      try {
        cloud = await createTestCloud('galera')
        await seedSnapshot(snapshot, cloud)
      } finally {
        if (saved === undefined) delete process.env.CLOUDCTL_TEST_DSN
        else process.env.CLOUDCTL_TEST_DSN = saved
      }
    }, 600_000)

    afterAll(async () => {
      await cluster?.stop()
    }, 120_000)

    it('the schemas and rows loaded through node 1 are on every node', async () => {
      const sums = await clusterChecksums()
      expect(sums.get('placement.allocations')).not.toBe('0')
      expect(sums.size).toBeGreaterThan(20)
    })

    it('the repair lock is cluster-wide: a second repair through node 2 exits 1 while the first (node 1) holds it; the first applies', async () => {
      const before = await clusterChecksums()
      const first = startCli(['repair', 'leaks', ...via(1), '--apply', '--yes', ...state('first')], 'after-begin:30000')
      await paused(first)
      const second = await cloudctl(['repair', 'leaks', ...via(2), '--apply', '--yes', ...state('second')])
      expect(second.exitCode, second.stderr).toBe(1)
      expect(second.stderr).toMatch(/another cloudctl repair holds the lock '[^']+' elsewhere in the Galera cluster \(this repair reached node galera-2/)
      expect(first.running(), 'the first repair is still paused while the second gives up').toBe(true)
      // Through node 1 as well: there GET_LOCK already says so.
      const third = await cloudctl(['repair', 'leaks', ...via(1), '--apply', '--yes', ...state('third')])
      expect(third.exitCode, third.stderr).toBe(1)
      expect(third.stderr).toMatch(/holds the lock/)

      const r1 = await first.done
      expect(r1.exitCode, r1.stderr).toBe(4)
      const after = await clusterChecksums()
      // Only the leaked consumers' rows changed; nova_api.cell_mappings (the lock's row) did not.
      expect(changedTables(before, after).every((t) => t.startsWith('placement.'))).toBe(true)
      expect(changedTables(before, after)).toContain('placement.allocations')
      const applied = auditLines('first').at(-1)
      expect(applied).toMatchObject({outcome: 'applied'})
      expect(applied?.rows_changed).toBeGreaterThanOrEqual(LEAKED)

      const audit = await cloudctl(['audit', 'leaks', ...via(3), '--json'])
      expect(leakFindings(audit.stdout), audit.stderr).toEqual([])
    })

    it('reads are causal: an audit through node 3, whose applier is held, waits and does not report the leak removed on node 1', async () => {
      await plantLeaks()
      const seen = await cloudctl(['audit', 'leaks', ...via(3), '--json'])
      expect(leakFindings(seen.stdout).length, seen.stderr).toBeGreaterThan(0)

      const hold = await cluster.root(3)
      try {
        await hold.query('FLUSH TABLES WITH READ LOCK')
        await onNode(1, (c) => c.query(`DELETE FROM \`${cloud.databases.placement}\`.allocations WHERE consumer_id IN (?)`, [leaked]))
        // Node 3 lags: a read without wsrep_sync_wait still sees the removed rows.
        const stale = await onNode(3, async (c) => {
          await c.query('SET SESSION wsrep_sync_wait = 0')
          const [rows] = await c.query(`SELECT COUNT(*) AS n FROM \`${cloud.databases.placement}\`.allocations WHERE consumer_id IN (?)`, [leaked])
          return Number((rows as Array<{n: number}>)[0].n)
        })
        expect(stale, 'node 3 has not applied the delete yet').toBeGreaterThan(0)
        const audit = startCli(['audit', 'leaks', ...via(3), '--json'])
        await new Promise((r) => setTimeout(r, 8_000))
        expect(audit.running(), 'the audit waits for node 3 to catch up').toBe(true)
        await hold.query('UNLOCK TABLES')
        const r = await audit.done
        expect(leakFindings(r.stdout), r.stderr).toEqual([])
        // Every --json result of a live read names the node each database came from.
        const readFrom = (JSON.parse(r.stdout) as {read_from: Array<{database: string; wsrep_node_name: string; wsrep_sync_wait: number}>}).read_from
        expect(readFrom.map((x) => [x.database, x.wsrep_node_name, x.wsrep_sync_wait])).toEqual([
          ['nova_api', 'galera-3', 1],
          ['placement', 'galera-3', 1],
          ['cell cell0', 'galera-3', 1],
          ['cell cell1', 'galera-3', 1],
        ])
      } finally {
        await closeConnection(hold)
      }
      await clusterChecksums()
    })

    it('a node that does not catch up within repl.causal_read_timeout: the audit fails naming the database and the node, never reads stale rows', async () => {
      await onNode(3, (c) => c.query("SET GLOBAL wsrep_provider_options = 'repl.causal_read_timeout=PT3S'"))
      const hold = await cluster.root(3)
      try {
        await hold.query('FLUSH TABLES WITH READ LOCK')
        await plantLeaks()
        const r = await cloudctl(['audit', 'leaks', ...via(3)])
        expect(r.exitCode, r.stderr).toBe(1)
        expect(r.stdout).toBe('')
        expect(r.stderr).toMatch(
          /timed out in the (nova_api|placement|cell cell0|cell cell1) database \(node galera-3\) at .*: either this Galera node did not catch up with the cluster within repl\.causal_read_timeout/,
        )
        expect(r.stderr).toContain('wsrep_local_state_comment')
        expect(r.stderr).not.toContain(PW)
      } finally {
        await hold.query('UNLOCK TABLES').catch(() => undefined)
        await closeConnection(hold)
        await onNode(3, (c) => c.query("SET GLOBAL wsrep_provider_options = 'repl.causal_read_timeout=PT30S'"))
      }
      await clusterChecksums()
    })

    it('reports the node each database was read from, with the wsrep_sync_wait of the URL init_command and of nova.conf', async () => {
      const conf = join(tmp, 'nova.conf')
      writeFileSync(conf, '[database]\nmysql_wsrep_sync_wait = 4\n')
      const file = join(tmp, 'snap.json')
      const r = await cloudctl([
        'snapshot',
        'capture',
        ...via(2, '&init_command=SET%20SESSION%20wsrep_sync_wait%3D2'),
        '--nova-conf',
        conf,
        '-o',
        file,
        '--json',
      ])
      expect(r.exitCode, r.stderr).toBe(0)
      const hostname = await onNode(2, async (c) => String(((await c.query('SELECT @@hostname AS h'))[0] as Array<{h: string}>)[0].h))
      const readFrom = (JSON.parse(r.stdout) as {read_from: Array<Record<string, unknown>>}).read_from
      const port = cluster.nodes[1].port
      expect(readFrom).toEqual([
        {database: 'nova_api', address: `127.0.0.1:${port}/${cloud.databases.api}`, hostname, port, wsrep_node_name: 'galera-2', wsrep_sync_wait: 3},
        {database: 'placement', address: `127.0.0.1:${port}/${cloud.databases.placement}`, hostname, port, wsrep_node_name: 'galera-2', wsrep_sync_wait: 1},
        ...['cell0', 'cell1'].map((name) => ({
          database: `cell ${name}`,
          address: `127.0.0.1:${port}/${name === 'cell0' ? cloud.databases.cell0 : cloud.databases.cells.cell1}`,
          hostname,
          port,
          wsrep_node_name: 'galera-2',
          wsrep_sync_wait: 5,
        })),
      ])
      const header = JSON.parse(readFileSync(file, 'utf8').split('\n')[0].replace(/,$/, '}')) as {source: {databases: Record<string, {wsrep?: unknown}>}}
      // The cluster's state uuid, the same on every node: one database through two nodes is one (cell identity).
      const clusterUuid = async (n: number) =>
        onNode(n, async (c) => String(((await c.query("SHOW STATUS LIKE 'wsrep_cluster_state_uuid'"))[0] as Array<{Value: string}>)[0].Value))
      expect(await clusterUuid(1)).toBe(await clusterUuid(2))
      expect(header.source.databases.placement.wsrep).toEqual({node_name: 'galera-2', sync_wait: 1, cluster_uuid: await clusterUuid(1)})
      const show = await cloudctl(['snapshot', 'show', file])
      expect(show.stdout).toContain(`nova_api read from Galera node galera-2, ${hostname}:${port} (wsrep_sync_wait 3)`)

      const refused = await cloudctl(['audit', 'leaks', ...via(2, '&init_command=SET%20NAMES%20utf8')])
      expect(refused.exitCode).toBe(2)
      expect(refused.stderr).toMatch(/has an init_command cloudctl does not run: from a URL it runs only SET SESSION wsrep_sync_wait=N/)
    })

    it('a write committed on node 2 while a repair through node 1 holds its rows: exit 5 at COMMIT, named as such, nothing committed and the audit log says so', async () => {
      const target = snapshot.placement.allocations.find((a) => a.consumer_id === leaked[0])
      if (!target) throw new Error('no leaked allocation')
      const repair = startCli(['repair', 'leaks', ...via(1), '--apply', '--yes', ...state('cert')], 'before-first-commit:20000')
      await paused(repair)
      await onNode(2, (c) => c.query(`UPDATE \`${cloud.databases.placement}\`.allocations SET used = used + 1 WHERE id = ?`, [target.id]))
      const before = await clusterChecksums()
      const r = await repair.done
      expect(r.exitCode, r.stderr).toBe(5)
      expect(r.stderr).toMatch(
        /the COMMIT of placement \(node galera-1\) was refused: a concurrent write, possibly on another Galera node, changed rows this repair wrote \(error 1213\)/,
      )
      expect(r.stderr).not.toMatch(/database database|Re-run the command/)
      const last = auditLines('cert').at(-1)
      expect(last).toMatchObject({outcome: 'aborted', committed: [], rows_changed: 0})
      expect(changedTables(before, await clusterChecksums())).toEqual([])
    })

    it('a read-only node: the repair stops naming the database and the node, and says to use the primary', async () => {
      const before = await clusterChecksums()
      await onNode(2, (c) => c.query('SET GLOBAL read_only = ON'))
      try {
        const r = await cloudctl(['repair', 'leaks', ...via(2), '--apply', '--yes', ...state('ro')])
        expect(r.exitCode, r.stderr).toBe(2)
        expect(r.stderr).toMatch(/the nova_api database \(node galera-2\) at mysql\+pymysql:\/\/nova:\*\*\*@127\.0\.0\.1:\d+\/\S+ is read-only/)
        expect(r.stderr).toMatch(/Point cloudctl at the primary/)
      } finally {
        await onNode(2, (c) => c.query('SET GLOBAL read_only = OFF'))
      }
      expect(changedTables(before, await clusterChecksums())).toEqual([])
    })

    it('a repair killed while it holds the cluster-wide lock leaves no stale lock: every node drops it, a repair through node 2 then applies', async () => {
      const killed = startCli(['repair', 'leaks', ...via(1), '--apply', '--yes', ...state('killed')], 'after-begin:120000')
      await paused(killed)
      const streaming = () =>
        onNode(2, async (c) => Number(((await c.query('SELECT COUNT(*) AS n FROM mysql.wsrep_streaming_log'))[0] as Array<{n: number}>)[0].n))
      expect(await streaming(), 'the lock fragment is replicated to node 2').toBeGreaterThan(0)
      killed.kill('SIGKILL')
      await killed.done
      // The server rolls the lock transaction back on every node once it sees the session gone.
      for (let i = 0; (await streaming()) > 0; i++) {
        if (i > 120) throw new Error("the killed repair's lock fragment is still on node 2")
        await new Promise((r) => setTimeout(r, 500))
      }
      const before = await clusterChecksums()
      const r = await cloudctl(['repair', 'leaks', ...via(2), '--apply', '--yes', ...state('after-kill')])
      expect(r.exitCode, r.stderr).toBe(4)
      const after = await clusterChecksums()
      expect(changedTables(before, after)).toContain('placement.allocations')
      expect(changedTables(before, after).every((t) => t.startsWith('placement.'))).toBe(true)
    })
  },
)
