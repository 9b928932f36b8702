/**
 * A database server started from a chroot test/topology/server-chroot.sh built: the chroot's own
 * mysqld or mariadbd, run through chroot(8) on a port and datadir of its own (under the chroot's
 * /var/tmp), root reachable over TCP from 127.0.0.1 without a password, stopped by its pid.
 */
import {execa} from 'execa'
import {type ChildProcess, spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {freePort} from '../support/free-port.js'

export interface ChrootServerSpec {
  name: string
  kind: 'mysql' | 'mariadb'
  root: string
  marker: string
  /** What the server's version() must start with. */
  version: RegExp
}

export const CHROOT_SERVERS: ChrootServerSpec[] = [
  {
    name: 'MySQL 9.7 (Debian sid)',
    kind: 'mysql',
    root: process.env.CLOUDCTL_MYSQL_CHROOT ?? '/srv/sid-mysql',
    marker: '.cloudctl-mysql-ready',
    version: /^9\.7\./,
  },
  {
    name: 'MariaDB 11.8 (Debian 13)',
    kind: 'mariadb',
    root: process.env.CLOUDCTL_EPOXY_CHROOT ?? '/srv/trixie',
    marker: '.cloudctl-mariadb-ready',
    version: /^11\.8\..*MariaDB/,
  },
]

/** Why the server cannot run here, or undefined when it can. */
export function unavailable(s: ChrootServerSpec): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (chroot(8) needs it)'
  if (!existsSync(join(s.root, s.marker))) return `${join(s.root, s.marker)} is absent: run bash test/topology/server-chroot.sh ${s.kind}`
  return undefined
}

export interface RunningServer {
  port: number
  /** mysql://root@127.0.0.1:PORT */
  dsn: string
  pid: number
  stop(): Promise<void>
}

export async function startChrootServer(s: ChrootServerSpec, extraArgs: string[] = []): Promise<RunningServer> {
  const inside = `/var/tmp/cloudctl-${s.kind}-${process.pid}-${Date.now().toString(36)}`
  const outside = join(s.root, inside)
  mkdirSync(outside, {recursive: true})
  const data = `${inside}/data`
  if (s.kind === 'mysql') await execa('chroot', [s.root, '/usr/sbin/mysqld', '--no-defaults', '--initialize-insecure', `--datadir=${data}`, '--user=root'])
  else
    await execa('chroot', [
      s.root,
      '/usr/bin/mariadb-install-db',
      '--no-defaults',
      `--datadir=${data}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ])
  // The tests connect over TCP as root@127.0.0.1; a fresh datadir knows only root@localhost.
  writeFileSync(join(outside, 'init.sql'), "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\nGRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n")
  const port = await freePort()
  const common = [
    '--no-defaults',
    `--datadir=${data}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${inside}/mysqld.sock`,
    `--pid-file=${inside}/mysqld.pid`,
    `--init-file=${inside}/init.sql`,
    '--user=root',
    '--skip-log-bin',
    '--innodb-buffer-pool-size=32M',
    '--performance-schema=OFF',
    `--log-error=${inside}/error.log`,
  ]
  const own = s.kind === 'mysql' ? ['--mysqlx=OFF', `--secure-file-priv=${inside}`] : []
  const bin = s.kind === 'mysql' ? '/usr/sbin/mysqld' : '/usr/sbin/mariadbd'
  const child: ChildProcess = spawn('chroot', [s.root, bin, ...common, ...own, ...extraArgs], {stdio: 'ignore'})
  const pid = child.pid
  if (pid === undefined) throw new Error(`${s.name}: chroot ${bin} did not start`)
  let exited = false
  child.once('exit', () => (exited = true))
  const dsn = `mysql://root@127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      const c = await openConnection(`${dsn}/`, {label: s.name})
      await closeConnection(c)
      break
    } catch (error) {
      const log = join(outside, 'error.log')
      if (exited || i >= 240)
        throw new Error(`${s.name} did not come up: ${String(error)}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`, {cause: error})
      await new Promise((r) => setTimeout(r, 250))
    }
  }
  return {
    port,
    dsn,
    pid,
    async stop() {
      // chroot(8) execs the server: this pid is the server itself.
      if (!exited) {
        const gone = new Promise<void>((r) => child.once('exit', () => r()))
        process.kill(pid, 'SIGTERM')
        const timer = setTimeout(() => !exited && process.kill(pid, 'SIGKILL'), 30_000)
        await gone
        clearTimeout(timer)
      }
      rmSync(outside, {recursive: true, force: true})
    },
  }
}
