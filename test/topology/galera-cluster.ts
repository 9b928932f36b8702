/**
 * A 3-node Galera 4 cluster of this host's mariadbd on loopback ports, for the topology tests: each
 * node its own datadir under one temporary directory, its SQL, group communication (gmcast), IST and
 * SST ports; node 1 bootstraps (--wsrep-new-cluster), nodes 2 and 3 join by rsync SST. Every node is
 * stopped by its pid.
 *
 * As root the nodes run as the `mysql` account (--user=mysql, datadirs owned by it): rsync's SST
 * daemon, started by the joiner, drops root to `nobody`, who could not write the joiner's datadir.
 */
import {execa} from 'execa'
import {type ChildProcess, spawn} from 'node:child_process'
import {chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {freePort} from '../support/free-port.js'

export const MARIADBD = '/usr/sbin/mariadbd'
export const GALERA = '/usr/lib/galera/libgalera_smm.so'
export const galeraPresent = existsSync(MARIADBD) && existsSync(GALERA) && existsSync('/usr/bin/wsrep_sst_rsync') && existsSync('/usr/bin/rsync')

export interface GaleraNode {
  n: number
  name: string
  port: number
  sock: string
  dir: string
  process?: ChildProcess
}

export interface GaleraCluster {
  dir: string
  nodes: GaleraNode[]
  /** root over node n's unix socket (no database). */
  rootUrl(n: number): string
  /** A root connection to node n (unix socket). */
  root(n: number): Promise<Connection>
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The uid/gid the nodes run as: `mysql` when this process is root. */
function runAs(): {user?: string; uid?: number; gid?: number} {
  if (process.getuid?.() !== 0) return {}
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('mysql:'))
  if (!line) throw new Error('running as root needs a mysql account for the Galera nodes (rsync SST drops root to nobody)')
  const [, , uid, gid] = line.split(':')
  return {user: 'mysql', uid: Number(uid), gid: Number(gid)}
}

async function query(n: GaleraNode, sql: string): Promise<Array<Record<string, unknown>>> {
  const c = await openConnection(`mysql://root@localhost/?unix_socket=${n.sock}`, {label: n.name})
  try {
    const [rows] = await c.query(sql)
    return rows as Array<Record<string, unknown>>
  } finally {
    await closeConnection(c)
  }
}

/** Waits until node `n` says Synced in a cluster of `size` (the node's error log is in the failure). */
async function synced(node: GaleraNode, size: number, ms = 240_000): Promise<void> {
  const end = Date.now() + ms
  const fail = (why: string): Error => {
    let log = ''
    try {
      log = readFileSync(join(node.dir, 'error.log'), 'utf8').split('\n').slice(-30).join('\n')
    } catch {
      // no log yet
    }
    return new Error(`${node.name} is not Synced: ${why}\n${log}`)
  }
  for (;;) {
    let last: string
    const code = node.process?.exitCode
    if (code !== null && code !== undefined) throw fail(`mariadbd exited ${code}`)
    try {
      const rows = await query(node, "SHOW STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size')")
      const v = new Map(rows.map((r) => [String(r.Variable_name), String(r.Value)]))
      if (v.get('wsrep_local_state_comment') === 'Synced' && Number(v.get('wsrep_cluster_size')) === size) return
      last = `${v.get('wsrep_local_state_comment')} in a cluster of ${v.get('wsrep_cluster_size')}`
    } catch (error) {
      last = String((error as Error).message)
    }
    if (Date.now() > end) throw fail(`after ${ms} ms: ${last}`)
    await sleep(500)
  }
}

export async function startGaleraCluster(): Promise<GaleraCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'cloudctl-galera-'))
  // The nodes run as mysql (runAs) and must reach their datadirs through this directory.
  chmodSync(dir, 0o755)
  const as = runAs()
  const ports = await Promise.all(Array.from({length: 12}, () => freePort()))
  const nodes: GaleraNode[] = [1, 2, 3].map((n) => ({
    n,
    name: `galera-${n}`,
    port: ports[n - 1],
    sock: join(dir, `n${n}`, 'mysqld.sock'),
    dir: join(dir, `n${n}`),
  }))
  const gcomm = (n: number) => ports[2 + n]
  const ist = (n: number) => ports[5 + n]
  const sst = (n: number) => ports[8 + n]
  const address = `gcomm://${[1, 2, 3].map((n) => `127.0.0.1:${gcomm(n)}`).join(',')}`

  for (const node of nodes) {
    mkdirSync(node.dir)
    if (as.uid !== undefined) chownSync(node.dir, as.uid, as.gid as number)
    await execa('mariadb-install-db', [
      '--no-defaults',
      `--datadir=${join(node.dir, 'data')}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...(as.user ? [`--user=${as.user}`] : []),
    ])
  }

  const start = (node: GaleraNode, bootstrap: boolean) => {
    const n = node.n
    node.process = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${join(node.dir, 'data')}`,
        `--port=${node.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${node.sock}`,
        `--pid-file=${join(node.dir, 'mysqld.pid')}`,
        `--log-error=${join(node.dir, 'error.log')}`,
        ...(as.user ? [`--user=${as.user}`] : []),
        '--skip-log-bin',
        '--innodb-buffer-pool-size=32M',
        '--performance-schema=OFF',
        '--binlog-format=ROW',
        '--default-storage-engine=InnoDB',
        '--innodb-autoinc-lock-mode=2',
        '--wsrep-on=ON',
        `--wsrep-provider=${GALERA}`,
        '--wsrep-cluster-name=cloudctl-topology',
        `--wsrep-node-name=${node.name}`,
        `--wsrep-node-address=127.0.0.1:${gcomm(n)}`,
        `--wsrep-cluster-address=${address}`,
        `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${gcomm(n)};ist.recv_addr=127.0.0.1:${ist(n)};gcache.size=64M`,
        '--wsrep-sst-method=rsync',
        `--wsrep-sst-receive-address=127.0.0.1:${sst(n)}`,
        ...(bootstrap ? ['--wsrep-new-cluster'] : []),
      ],
      {stdio: 'ignore'},
    )
  }

  const cluster: GaleraCluster = {
    dir,
    nodes,
    rootUrl: (n) => `mysql://root@localhost/?unix_socket=${nodes[n - 1].sock}`,
    root: (n) => openConnection(cluster.rootUrl(n), {label: nodes[n - 1].name}),
    async stop() {
      // Joiners first, the bootstrap node last: each leaves the cluster cleanly.
      for (const node of [...nodes].reverse()) {
        const p = node.process
        if (p?.pid === undefined || p.exitCode !== null) continue
        const exited = new Promise((r) => p.once('exit', r))
        process.kill(p.pid, 'SIGTERM')
        await Promise.race([exited, sleep(30_000)])
        if (p.exitCode === null && p.signalCode === null) process.kill(p.pid, 'SIGKILL')
      }
      rmSync(dir, {recursive: true, force: true})
    },
  }
  try {
    start(nodes[0], true)
    await synced(nodes[0], 1)
    // One joiner at a time: node 1 is the only donor, and a donor serves one SST at a time.
    start(nodes[1], false)
    await synced(nodes[1], 2)
    start(nodes[2], false)
    await synced(nodes[2], 3)
  } catch (error) {
    await cluster.stop()
    throw error
  }
  return cluster
}
