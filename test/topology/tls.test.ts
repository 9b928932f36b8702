/**
 * TLS to the database as nova's driver does it (issue 26 items 1-3), against a MariaDB started by
 * this file with its own CA: every URL variant is given to the built CLI and to PyMySQL itself
 * (through SQLAlchemy's pymysql dialect, as nova connects), and cloudctl must connect exactly when
 * PyMySQL does, except where cloudctl refuses on purpose (README "Connecting").
 */
import {execa, execaSync} from 'execa'
import {type ChildProcess, spawn} from 'node:child_process'
import {existsSync, mkdtempSync, copyFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {cloudctl} from '../support/cli.js'
import {createTestCloud, type TestCloud} from '../support/db.js'
import {freePort} from '../support/free-port.js'

const MARIADBD = '/usr/sbin/mariadbd'
const PYTHON = '/usr/bin/python3'
const present = existsSync(MARIADBD) && existsSync('/usr/bin/mariadb-install-db') && existsSync(PYTHON)

const PW = 'tls-Secret-9'

/** A private CA and server certificates for localhost, other.example.test and IP 127.0.0.1, plus a client certificate. */
function makeCa(dir: string): void {
  const ssl = (args: string[]): void => void execaSync('openssl', args, {cwd: dir})
  ssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=cloudctl tls test CA'])
  const leaf = (name: string, cn: string, san: string | undefined): void => {
    ssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`])
    writeFileSync(join(dir, `${name}.ext`), san === undefined ? 'basicConstraints=CA:FALSE\n' : `subjectAltName=${san}\n`)
    ssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    ])
  }
  leaf('localhost', 'localhost', 'DNS:localhost')
  leaf('other', 'other.example.test', 'DNS:other.example.test')
  leaf('ip', '127.0.0.1', 'IP:127.0.0.1')
  leaf('client', 'nova-client', undefined)
  // ssl_capath: the CA under its subject hash, as `openssl rehash` names it.
  const hash = execaSync('openssl', ['x509', '-hash', '-noout', '-in', 'ca.pem'], {cwd: dir}).stdout.trim()
  execaSync('mkdir', ['capath'], {cwd: dir})
  copyFileSync(join(dir, 'ca.pem'), join(dir, 'capath', `${hash}.0`))
}

interface PyResult {
  ok: boolean
  /** Ssl_cipher of the session ('' without TLS) or the error. */
  detail: string
}

/** Connects as nova does: SQLAlchemy's pymysql dialect turns the URL into PyMySQL's arguments. */
async function pymysql(url: string): Promise<PyResult> {
  const code = [
    'import sys, pymysql',
    'from sqlalchemy.engine import make_url',
    'from sqlalchemy.dialects.mysql.pymysql import MySQLDialect_pymysql',
    'args, kw = MySQLDialect_pymysql().create_connect_args(make_url(sys.argv[1]))',
    'try:',
    '    c = pymysql.connect(*args, **kw)',
    '    cur = c.cursor(); cur.execute("SHOW SESSION STATUS LIKE \'Ssl_cipher\'"); print("OK", cur.fetchone()[1]); c.close()',
    'except Exception as e:',
    '    print("ERR", type(e).__name__, e)',
  ].join('\n')
  const r = await execa(PYTHON, ['-c', code, url], {reject: false, timeout: 30_000})
  const out = String(r.stdout).trim()
  return {ok: out.startsWith('OK'), detail: out || String(r.stderr)}
}

describe.skipIf(!present)(`TLS as PyMySQL does it (a mariadbd of its own${present ? '' : `: skipped, ${MARIADBD} or ${PYTHON} is not installed`})`, () => {
  let dir: string
  let port: number
  let server: ChildProcess | undefined
  let root: Connection | undefined
  let cloud: TestCloud
  const sock = (): string => join(dir, 'mysqld.sock')

  /** The server certificate is switched at run time: FLUSH SSL re-reads the files. */
  async function serve(cert: 'localhost' | 'other' | 'ip'): Promise<void> {
    copyFileSync(join(dir, `${cert}.pem`), join(dir, 'server.pem'))
    copyFileSync(join(dir, `${cert}.key`), join(dir, 'server.key'))
    await root?.query('FLUSH SSL')
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cloudctl-tls-'))
    makeCa(dir)
    copyFileSync(join(dir, 'localhost.pem'), join(dir, 'server.pem'))
    copyFileSync(join(dir, 'localhost.key'), join(dir, 'server.key'))
    await execa('mariadb-install-db', ['--no-defaults', `--datadir=${join(dir, 'data')}`, '--auth-root-authentication-method=normal', '--skip-test-db'])
    port = await freePort()
    server = spawn(
      MARIADBD,
      [
        '--no-defaults',
        `--datadir=${join(dir, 'data')}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${sock()}`,
        `--pid-file=${join(dir, 'mysqld.pid')}`,
        `--ssl-ca=${join(dir, 'ca.pem')}`,
        `--ssl-cert=${join(dir, 'server.pem')}`,
        `--ssl-key=${join(dir, 'server.key')}`,
        '--skip-log-bin',
        '--innodb-buffer-pool-size=16M',
        '--performance-schema=OFF',
        ...(process.getuid?.() === 0 ? ['--user=root'] : []),
      ],
      {stdio: 'ignore'},
    )
    const socketUrl = `mysql://root@localhost/?unix_socket=${sock()}`
    for (let i = 0; ; i++) {
      try {
        root = await openConnection(socketUrl, {label: 'tls test server'})
        break
      } catch (error) {
        if (i >= 120) throw error
        await new Promise((r) => setTimeout(r, 250))
      }
    }
    await root.query("CREATE USER 'nova'@'%' IDENTIFIED BY ?", [PW])
    await root.query("GRANT ALL ON *.* TO 'nova'@'%'")
    await root.query("CREATE USER 'secure'@'%' IDENTIFIED BY ? REQUIRE SSL", [PW])
    await root.query("GRANT ALL ON *.* TO 'secure'@'%'")
    const saved = process.env.CLOUDCTL_TEST_DSN
    process.env.CLOUDCTL_TEST_DSN = socketUrl
    try {
      cloud = await createTestCloud('tls', {cells: []})
    } finally {
      if (saved === undefined) delete process.env.CLOUDCTL_TEST_DSN
      else process.env.CLOUDCTL_TEST_DSN = saved
    }
  }, 120_000)

  afterAll(async () => {
    await closeConnection(root)
    if (server?.pid !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server?.once('exit', r))
      process.kill(server.pid, 'SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))])
      if (server.exitCode === null) process.kill(server.pid, 'SIGKILL')
    }
    if (dir !== undefined) rmSync(dir, {recursive: true, force: true})
  }, 40_000)

  const url = (user: string, host: string, database: string, query: string): string =>
    `mysql+pymysql://${user}:${PW}@${host}:${port}/${database}${query === '' ? '' : `?${query.replaceAll('DIR', dir)}`}`

  async function capture(user: string, host: string, query: string): Promise<{exitCode: number; stderr: string}> {
    const out = join(dir, 'snap.json')
    const r = await cloudctl([
      'snapshot',
      'capture',
      '--api-db',
      url(user, host, cloud.databases.api, query),
      '--placement-db',
      url(user, host, cloud.databases.placement, query),
      '-o',
      out,
    ])
    expect(r.stderr + r.stdout).not.toContain(PW)
    return r
  }

  interface Variant {
    cert: 'localhost' | 'other' | 'ip'
    host: string
    query: string
    user: 'nova' | 'secure'
    /** Whether PyMySQL connects. */
    pymysql: boolean
    /** What cloudctl does when it does not connect: the start of its one line on stderr. */
    refused?: RegExp
  }

  // 'secure' has REQUIRE SSL: connecting as it proves the session is encrypted.
  const variants: Variant[] = [
    {cert: 'localhost', host: 'localhost', query: 'ssl_ca=DIR/ca.pem', user: 'secure', pymysql: true},
    {cert: 'localhost', host: '127.0.0.1', query: 'ssl_ca=DIR/ca.pem', user: 'secure', pymysql: false, refused: /cannot check a certificate's IP address/},
    {cert: 'localhost', host: 'localhost', query: 'ssl_capath=DIR/capath', user: 'secure', pymysql: true},
    {cert: 'localhost', host: 'localhost', query: 'ssl_verify_identity=true', user: 'secure', pymysql: true},
    {cert: 'localhost', host: 'localhost', query: 'ssl_verify_cert=false', user: 'secure', pymysql: true},
    {cert: 'localhost', host: 'localhost', query: 'ssl_verify_cert=true', user: 'secure', pymysql: false, refused: /TLS handshake .* failed/},
    {cert: 'localhost', host: '127.0.0.1', query: 'ssl_ca=DIR/ca.pem&ssl_check_hostname=false', user: 'secure', pymysql: true},
    {cert: 'localhost', host: 'localhost', query: 'ssl_ca=DIR/ca.pem&ssl_cert=DIR/client.pem&ssl_key=DIR/client.key', user: 'secure', pymysql: true},
    {cert: 'localhost', host: 'localhost', query: 'ssl_cert=DIR/client.pem&ssl_key=DIR/client.key', user: 'secure', pymysql: true},
    {
      cert: 'localhost',
      host: 'localhost',
      query: 'ssl_ca=DIR/ca.pem&ssl_verify_cert=true',
      user: 'secure',
      pymysql: false,
      refused: /PyMySQL then drops ssl_ca/,
    },
    {cert: 'localhost', host: 'localhost', query: 'ssl_disabled=true', user: 'nova', pymysql: true},
    {
      cert: 'localhost',
      host: 'localhost',
      query: 'ssl_disabled=true',
      user: 'secure',
      pymysql: false,
      refused: /or the server\/account requires TLS: add \?ssl_ca=/,
    },
    {
      cert: 'localhost',
      host: 'localhost',
      query: '',
      user: 'secure',
      pymysql: false,
      refused: /wrong user name or password, or the server\/account requires TLS: add \?ssl_ca=/,
    },
    {cert: 'other', host: 'localhost', query: 'ssl_ca=DIR/ca.pem', user: 'secure', pymysql: false, refused: /TLS handshake .* failed/},
    {cert: 'other', host: 'localhost', query: 'ssl_ca=DIR/ca.pem&ssl_check_hostname=false', user: 'secure', pymysql: true},
    {cert: 'ip', host: 'localhost', query: 'ssl_ca=DIR/ca.pem', user: 'secure', pymysql: false, refused: /TLS handshake .* failed/},
  ]

  for (const v of variants) {
    it(`${v.cert} certificate, ${v.user}@${v.host}?${v.query}: ${v.pymysql ? 'connects' : 'refused'} as PyMySQL`, async () => {
      await serve(v.cert)
      const py = await pymysql(url(v.user, v.host, cloud.databases.api, v.query))
      expect(py.ok, py.detail).toBe(v.pymysql)
      const r = await capture(v.user, v.host, v.query)
      if (v.pymysql) {
        expect(r.exitCode, r.stderr).toBe(0)
      } else {
        expect(r.exitCode, r.stderr).toBe(2)
        expect(r.stderr).toMatch(v.refused as RegExp)
        expect(r.stderr.trim().split('\n')[0]).toMatch(v.refused as RegExp)
      }
    }, 60_000)
  }

  // Where cloudctl refuses a URL PyMySQL would use: it says why instead of doing something else.
  const refusedOnPurpose: Array<{cert: 'ip' | 'localhost'; host: string; query: string; pymysql: boolean; why: RegExp}> = [
    // mysql2 cannot check an address against the certificate: no check is pretended.
    {cert: 'ip', host: '127.0.0.1', query: 'ssl_ca=DIR/ca.pem', pymysql: true, why: /cannot check a certificate's IP address/},
    {
      cert: 'localhost',
      host: 'localhost',
      query: 'ssl_ca=DIR/ca.pem&ssl_cipher=ECDHE-RSA-AES256-GCM-SHA384',
      pymysql: true,
      why: /ssl_cipher, which cloudctl does not implement/,
    },
    // PyMySQL connects without TLS: the REQUIRE SSL account is refused.
    {cert: 'localhost', host: 'localhost', query: 'ssl_ca=DIR/ca.pem&ssl_disabled=false', pymysql: false, why: /PyMySQL turns TLS off for any non-empty value/},
    // PyMySQL encrypts but ignores the key (no client certificate).
    {cert: 'localhost', host: 'localhost', query: 'ssl_key=DIR/client.key', pymysql: true, why: /ssl_key without ssl_cert/},
    {
      cert: 'localhost',
      host: 'localhost',
      query: 'ssl_ca=DIR/ca.pem&ssl_verfiy_cert=true',
      pymysql: false,
      why: /'ssl_verfiy_cert', which PyMySQL does not know/,
    },
  ]
  for (const v of refusedOnPurpose) {
    it(`${v.cert} certificate, ${v.host}?${v.query}: refused (exit 2) where PyMySQL would not do what the URL says`, async () => {
      await serve(v.cert)
      const py = await pymysql(url('secure', v.host, cloud.databases.api, v.query))
      const r = await capture('secure', v.host, v.query)
      expect(r.exitCode, r.stderr).toBe(2)
      expect(r.stderr.trim().split('\n')[0]).toMatch(v.why)
      expect(py.ok, py.detail).toBe(v.pymysql)
    }, 60_000)
  }

  it("nova.conf's connections go through the same rules: verified, TLS turned on by ssl_verify_identity, the host name checked", async () => {
    const conf = join(dir, 'nova.conf')
    const run = async (query: string): Promise<{exitCode: number; stderr: string}> => {
      writeFileSync(
        conf,
        `[api_database]\nconnection = ${url('secure', 'localhost', cloud.databases.api, query)}\n\n[placement_database]\nconnection = ${url('secure', 'localhost', cloud.databases.placement, query)}\n`,
      )
      const r = await cloudctl(['snapshot', 'capture', '--nova-conf', conf, '-o', join(dir, 'snap-conf.json')])
      expect(r.stderr + r.stdout).not.toContain(PW)
      return r
    }
    await serve('localhost')
    expect((await run('ssl_ca=DIR/ca.pem')).exitCode).toBe(0)
    expect((await run('ssl_verify_identity=true')).exitCode).toBe(0)
    const plain = await run('')
    expect(plain.exitCode).toBe(2)
    expect(plain.stderr).toMatch(/or the server\/account requires TLS: add \?ssl_ca=/)
    await serve('other')
    const other = await run('ssl_ca=DIR/ca.pem')
    expect(other.exitCode, other.stderr).toBe(2)
    expect(other.stderr).toMatch(/TLS handshake .* failed/)
  }, 60_000)

  it('a server with require_secure_transport reached without TLS names TLS as a cause; with ssl_ca it connects', async () => {
    await serve('localhost')
    await root?.query('SET GLOBAL require_secure_transport = ON')
    try {
      const plain = await capture('nova', 'localhost', '')
      expect(plain.exitCode).toBe(2)
      expect(plain.stderr).toMatch(/wrong user name or password, or the server\/account requires TLS: add \?ssl_ca=/)
      expect((await pymysql(url('nova', 'localhost', cloud.databases.api, ''))).ok).toBe(false)
      const tls = await capture('nova', 'localhost', 'ssl_ca=DIR/ca.pem')
      expect(tls.exitCode, tls.stderr).toBe(0)
    } finally {
      await root?.query('SET GLOBAL require_secure_transport = OFF')
    }
  }, 60_000)
})
