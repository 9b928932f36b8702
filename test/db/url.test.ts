/**
 * URL parsing checked against the real thing: SQLAlchemy 1.4.46's make_url and nova's
 * CellMapping._format_url, run with /usr/bin/python3 (the python nova is installed for) on the
 * same table of nasty URLs. cloudctl must read the same user, password, host, port, database and
 * query as nova, and reject what nova cannot parse.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {formatTemplatedDbUrl} from '../../src/lib/db/url-template.js'
import {connectionOptions, displayDbUrl, parseDbUrl, withDatabase} from '../../src/lib/db/url.js'
import {parseSqlalchemyUrl} from '../../src/lib/util/sqlalchemy-url.js'
import {ConfigError} from '../../src/lib/errors.js'

const PYTHON = '/usr/bin/python3'

function python(script: string, input: unknown): unknown {
  return JSON.parse(execFileSync(PYTHON, ['-c', script], {input: JSON.stringify(input), encoding: 'utf8'}))
}

const MAKE_URL = `
import json, sys
from sqlalchemy.engine.url import make_url
out = []
for u in json.load(sys.stdin):
    try:
        x = make_url(u)
        out.append({"drivername": x.drivername, "username": x.username, "password": x.password, "host": x.host,
                    "port": x.port, "database": x.database, "query": dict(x.query)})
    except Exception as e:
        out.append(None)
print(json.dumps(out))
`

const NASTY = [
  'mysql+pymysql://rsl:Zk/9?x#Q@127.0.0.1/nova',
  'mysql+pymysql://nova:secretpw@db1:3307/nova_api?charset=utf8',
  'mysql+pymysql://nova:p%40ss%2Fw%3Ard%25@db1/nova_cell1',
  'mysql://rtest:p@ss:w/rd%@127.0.0.1/db',
  'mysql://u:p@ss@h/db',
  'mysql://a@b:pw@h/db',
  'mysql://u@h:3306/db',
  'mysql://u:pw@h:/db',
  'mysql://u:pw@h: 33_06 /db',
  'mysql://u:pw@h:+3306/db',
  'mysql://u:pw@h:33o6/db',
  'mysql://u:pw@h/nova%5Fapi?x=1&x=2&y=&z&a+b=c%20d',
  'mysql://u:%ff%zz%@h',
  'mysql://u:%C3%A9t%C3@h/db',
  'mysql://u:a+b c@h/db',
  'mysql://u:pw@h:-5/db',
  'mysql://u:pw@[::1]:3306/db?unix_socket=/s',
  'mysql://u:pw@[fd00::1/nova',
  'mysql://u:pw@h/db\n?x=1',
  'mysql://:@h/db',
  'mysql://u:pw@h/db;a=b',
  'mysql://u:pw@h/db?read_default_file=%7E/.my.cnf&charset=utf8;x=y',
  'mysql://u:pw:colon@h/db',
  'mysql://u:pw@/db?unix_socket=/run/mysqld/mysqld.sock',
  'mysql://h/db',
  'mysql://u/x:pw@h/db',
  'mysql+pymysql://nova:Sekr3t#frag@db1:3306/nova?charset=utf8#x',
  'mysql_x+drv://u:pw@h/db',
  'my.sql://u:pw@h/db',
  'mysql:/u:pw@h/db',
  'rsec:Sekr3tPw7731@127.0.0.1/nova_api',
  'mysql://ü:pä@h/d',
  'mysql://u:pw@h/db?password=other&user=x',
]

describe('parseSqlalchemyUrl agrees with SQLAlchemy make_url', () => {
  const want = python(MAKE_URL, NASTY) as Array<Record<string, unknown> | null>

  it.each(NASTY.map((url, i) => ({url, i})))('$url', ({url, i}) => {
    const got = parseSqlalchemyUrl(url)
    if (want[i] === null) {
      expect(got).toBeUndefined()
      return
    }
    expect(got).toBeDefined()
    const {userinfoEnd: _, ...fields} = got!
    expect({...fields, query: {...fields.query}}).toEqual(want[i])
  })

  it('parseDbUrl accepts exactly what nova connects with, or refuses without echoing the URL', () => {
    for (const [i, url] of NASTY.entries()) {
      let parsed: ReturnType<typeof parseDbUrl> | undefined
      let error: unknown
      try {
        parsed = parseDbUrl(url, 'test URL')
      } catch (e) {
        error = e
      }
      if (parsed) {
        const s = want[i]!
        expect(s, url).not.toBeNull()
        expect(parsed.password ?? null, url).toBe((s.query as Record<string, string>).password ?? (s.password || null))
        expect(parsed.host, url).toBe(s.query && (s.query as Record<string, string>).host ? (s.query as Record<string, string>).host : (s.host ?? 'localhost'))
        expect(parsed.port, url).toBe(s.port ?? 3306)
        expect(parsed.database ?? null, url).toBe(s.database || null)
      } else {
        expect(error, url).toBeInstanceOf(ConfigError)
        const message = (error as ConfigError).message
        // Neither SQLAlchemy's password nor anything a human may have meant as one (up to the last '@').
        const pw = want[i]?.password as string | null | undefined
        if (pw && pw.length >= 2) expect(message, url).not.toContain(pw)
        const body = url.includes('://') ? url.slice(url.indexOf('://') + 3) : url
        const meant = body.slice(body.indexOf(':') + 1, body.lastIndexOf('@'))
        if (body.includes(':') && meant.length >= 2) expect(message, url).not.toContain(meant)
        expect((error as ConfigError).exitCode).toBe(2)
      }
    }
  })
})

describe('parseDbUrl', () => {
  it.each([
    {
      url: 'mysql+pymysql://nova:secretpw@db1:3307/nova_api?charset=utf8',
      want: {scheme: 'mysql+pymysql', user: 'nova', password: 'secretpw', host: 'db1', port: 3307, database: 'nova_api', params: {charset: 'utf8'}},
      display: 'mysql+pymysql://nova:***@db1:3307/nova_api',
    },
    {
      url: 'mysql+pymysql://rsl:Zk/9?x#Q@127.0.0.1/nova',
      want: {user: 'rsl', password: 'Zk/9?x#Q', host: '127.0.0.1', port: 3306, database: 'nova'},
      display: 'mysql+pymysql://rsl:***@127.0.0.1:3306/nova',
    },
    {
      url: 'mysql+pymysql://nova:p%40ss%2Fw%3Ard%25@db1/nova_cell1',
      want: {password: 'p@ss/w:rd%', host: 'db1', database: 'nova_cell1'},
      display: 'mysql+pymysql://nova:***@db1:3306/nova_cell1',
    },
    {
      url: 'mysql+pymysql://nova:pw2@/nova?unix_socket=/run/mysqld/mysqld.sock&charset=utf8',
      want: {socketPath: '/run/mysqld/mysqld.sock', host: 'localhost', database: 'nova', params: {charset: 'utf8'}},
      display: 'mysql+pymysql://nova:***@localhost/nova?unix_socket=/run/mysqld/mysqld.sock',
    },
    {
      url: 'mysql+pymysql://nova:pw3@[fd00::5]:3306/nova_api',
      want: {host: 'fd00::5', port: 3306},
      display: 'mysql+pymysql://nova:***@[fd00::5]:3306/nova_api',
    },
    {url: 'mysql://nova@db1', want: {database: undefined, password: undefined}, display: 'mysql://nova@db1:3306'},
    {
      // pymysql takes query parameters as keyword arguments, over the URL's own parts
      url: 'mysql://nova:old@db1/nova?password=n3w-Secret',
      want: {password: 'n3w-Secret'},
      display: 'mysql://nova:***@db1:3306/nova',
    },
  ])('$url', ({url, want, display}) => {
    const u = parseDbUrl(url)
    expect(u).toMatchObject(want)
    expect(u.display).toBe(display)
  })

  it.each([
    ['', /is empty/],
    ['rsec:Sekr3tPw7731@127.0.0.1/nova_api', /is not a URL/],
    ['postgresql://nova:pw5x@db1/nova', /reads MySQL\/MariaDB databases only/],
    ['mysql://nova:pw6x@db1:33o6/nova', /bad port '33o6'/],
    ['mysql://nova:pw7x@db1:70000/nova', /port 70000, outside/],
    ['mysql://rtest:p@ss:w/rd%@127.0.0.1/db', /cannot be parsed/],
    ['mysql://nova:pw8x@@db1/nova', /'@' outside the user info/],
    ['mysql://nova:ab@cdefgh@db1/nova', /'@' outside the user info/],
    ['mysql://:pw9x@db1/nova', /no user name/],
    ['mysql://nova:pw10x@db1/nova?port=3307', /port as a query parameter/],
  ])('rejects %s', (url, message) => {
    let error: unknown
    try {
      parseDbUrl(url, 'nova_api database URL')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const e = error as ConfigError
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(message)
    expect(e.message).toMatch(/^nova_api database URL /)
    expect(e.hint).toBeTruthy()
    expect(`${e.message} ${e.hint}`).not.toMatch(/pw\d+x|Sekr3t|ss:w|cdefgh|ab@/)
  })

  it('fills missing parts from a my.cnf option file (read_default_file), URL values first, as pymysql does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-url-'))
    const cnf = join(dir, 'my.cnf')
    writeFileSync(
      cnf,
      '[mysql]\npassword = not-this-one\n\n[client]\n# comment\nuser = opsro\npassword = "Opt#File:pw@9"\nhost=db7\nport = 3309\n\n[other]\nuser = x\n',
    )
    expect(parseDbUrl(`mysql+pymysql:///nova_api?read_default_file=${cnf}`)).toMatchObject({
      user: 'opsro',
      password: 'Opt#File:pw@9',
      host: 'db7',
      port: 3309,
      database: 'nova_api',
      optionFile: cnf,
    })
    expect(parseDbUrl(`mysql+pymysql://admin@db1/nova_api?read_default_file=${cnf}`)).toMatchObject({
      user: 'admin',
      password: 'Opt#File:pw@9',
      host: 'db1',
      port: 3309,
    })
    expect(parseDbUrl(`mysql+pymysql:///nova_api?read_default_file=${cnf}&read_default_group=other`)).toMatchObject({user: 'x', password: undefined})
    expect(parseDbUrl(`mysql+pymysql:///nova_api?read_default_file=${cnf}`).display).toBe(
      `mysql+pymysql://opsro:***@db7:3309/nova_api?read_default_file=${cnf}`,
    )
    expect(() => parseDbUrl(`mysql:///nova_api?read_default_file=${join(dir, 'absent.cnf')}`)).toThrow(/cannot read option file .*no such file/)
  })

  it('maps to mysql2 options: TCP or socket, connect timeout, TLS files', () => {
    expect(connectionOptions(parseDbUrl('mysql://nova:pw@db1:3307/nova?connect_timeout=2.5'))).toEqual({
      user: 'nova',
      password: 'pw',
      database: 'nova',
      host: 'db1',
      port: 3307,
      connectTimeout: 2500,
    })
    expect(connectionOptions(parseDbUrl('mysql://nova@/nova?unix_socket=/tmp/s.sock'))).toEqual({
      user: 'nova',
      password: undefined,
      database: 'nova',
      socketPath: '/tmp/s.sock',
      connectTimeout: 10_000,
    })
    expect(connectionOptions(parseDbUrl('mysql://nova@db/nova?ssl_ca=/ca.pem&ssl_cert=/c.pem&ssl_key=/k.pem')).ssl).toEqual({
      ca: '/ca.pem',
      capath: undefined,
      cert: '/c.pem',
      key: '/k.pem',
      verifyCert: true,
      checkHostname: true,
    })
  })

  // PyMySQL 1.0 behind SQLAlchemy 1.4's pymysql dialect; test/topology/tls.test.ts checks the same against PyMySQL and a server.
  it.each([
    ['', undefined],
    ['ssl_ca=/ca.pem', {ca: '/ca.pem', verifyCert: true, checkHostname: true}],
    ['ssl_capath=/cas', {capath: '/cas', verifyCert: true, checkHostname: true}],
    ['ssl_ca=/ca.pem&ssl_check_hostname=off', {ca: '/ca.pem', verifyCert: true, checkHostname: false}],
    ['ssl_cert=/c.pem&ssl_key=/k.pem', {cert: '/c.pem', key: '/k.pem', verifyCert: false, checkHostname: false}],
    ['ssl_check_hostname=true', {verifyCert: false, checkHostname: false}],
    ['ssl_verify_identity=true', {verifyCert: false, checkHostname: false}],
    ['ssl_verify_cert=false', {verifyCert: false, checkHostname: false}],
    ['ssl_verify_cert=required', {verifyCert: true, checkHostname: false}],
    // SQLAlchemy drops a blank query value before PyMySQL sees it.
    ['ssl_verify_cert=', undefined],
    ['ssl_ca=', undefined],
    ['ssl_disabled=true', undefined],
    ['ssl_disabled=', undefined],
  ])('TLS as PyMySQL decides it: ?%s', (query, tls) => {
    const u = parseDbUrl(`mysql+pymysql://nova:pw@db1/nova${query === '' ? '' : `?${query}`}`)
    expect(u.tls === undefined ? undefined : Object.fromEntries(Object.entries(u.tls).filter(([, v]) => v !== undefined))).toEqual(tls)
  })

  it.each([
    ['ssl_cipher=AES256-SHA', /ssl_cipher, which cloudctl does not implement/],
    ['ssl=1', /'ssl', which PyMySQL cannot use/],
    ['ssl_mode=REQUIRED', /'ssl_mode', which PyMySQL does not know/],
    ['ssl_disabled=false', /any non-empty value, even 'false'/],
    ['ssl_disabled=1&ssl_ca=/ca.pem', /ssl_disabled with ssl_ca: PyMySQL then ignores them/],
    ['ssl_verify_cert=true&ssl_ca=/ca.pem', /PyMySQL then drops ssl_ca/],
    ['ssl_verify_identity=true&ssl_cert=/c.pem', /PyMySQL then drops ssl_cert/],
    ['ssl_verify_cert=maybe', /ssl_verify_cert that is none of/],
    ['ssl_key=/k.pem', /ssl_key without ssl_cert/],
    ['ssl_ca=/ca.pem&ssl_check_hostname=perhaps', /not a boolean/],
  ])('refuses ?%s (exit 2), never ignores it', (query, why) => {
    expect(() => parseDbUrl(`mysql+pymysql://nova:pw@db1/nova?${query}`)).toThrow(why)
  })

  it("turns TLS on from the option file's ssl-ca / ssl-cert (URL values first), as PyMySQL does", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-url-'))
    const cnf = join(dir, 'my.cnf')
    writeFileSync(cnf, '[client]\nuser = nova\nssl-ca = /etc/mysql/ca.pem\nssl-cert = /c.pem\nssl-key = /k.pem\n')
    expect(parseDbUrl(`mysql+pymysql://db1/nova?read_default_file=${cnf}`).tls).toEqual({
      ca: '/etc/mysql/ca.pem',
      capath: undefined,
      cert: '/c.pem',
      key: '/k.pem',
      verifyCert: true,
      checkHostname: true,
    })
    expect(parseDbUrl(`mysql+pymysql://db1/nova?read_default_file=${cnf}&ssl_ca=/url-ca.pem`).tls).toMatchObject({ca: '/url-ca.pem', cert: '/c.pem'})
    expect(() => parseDbUrl(`mysql+pymysql://db1/nova?read_default_file=${cnf}&ssl_verify_cert=true`)).toThrow(/PyMySQL then drops ssl-ca \(option file\)/)
    writeFileSync(cnf, '[client]\nuser = nova\nssl-cipher = AES256-SHA\n')
    expect(() => parseDbUrl(`mysql+pymysql://db1/nova?read_default_file=${cnf}`)).toThrow(/ssl-cipher, which cloudctl does not implement/)
  })

  it('checks an address only where it can: a CA with an IP host is refused unless the host name is not checked', () => {
    expect(() => parseDbUrl('mysql+pymysql://nova:pw@127.0.0.1/nova?ssl_ca=/ca.pem')).toThrow(/cannot check a certificate's IP address/)
    expect(parseDbUrl('mysql+pymysql://nova:pw@127.0.0.1/nova?ssl_ca=/ca.pem&ssl_check_hostname=false').tls).toMatchObject({
      verifyCert: true,
      checkHostname: false,
    })
    expect(parseDbUrl('mysql+pymysql://nova:pw@/nova?unix_socket=/s.sock&ssl_ca=/ca.pem').tls).toMatchObject({checkHostname: true})
  })

  it('withDatabase keeps server and credentials and swaps the database', () => {
    const other = withDatabase('mysql+pymysql://nova:p%40ss%3Ax%25@db1:3307/nova_api?charset=utf8', 'nova_cell1')
    expect(parseDbUrl(other)).toMatchObject({user: 'nova', password: 'p@ss:x%', host: 'db1', port: 3307, database: 'nova_cell1', params: {charset: 'utf8'}})
  })

  it('displayDbUrl never throws and never shows the password', () => {
    expect(displayDbUrl('mysql://nova:hunter22@db1/nova')).toBe('mysql://nova:***@db1:3306/nova')
    expect(displayDbUrl('mysql://nova:hunter23@db1:bad/nova')).toBe('mysql://…')
    expect(displayDbUrl('nova:hunter24@db1/nova')).toBe('(not shown)')
  })
})

const NOVA_FORMAT = `
import json, sys
from nova.objects.cell_mapping import CellMapping
out = []
for t, local in json.load(sys.stdin):
    try:
        out.append(CellMapping._format_url(t, local))
    except Exception:
        out.append(None)
print(json.dumps(out))
`

describe('formatTemplatedDbUrl agrees with nova CellMapping._format_url', () => {
  const T = '{scheme}://{username}:{password}@{hostname}:{port}/nova_cell1?{query}'
  const cases: Array<[string, string]> = [
    [T, 'mysql+pymysql://nova:t%40mpl@db9:3307/nova?charset=utf8'],
    [T, 'mysql+pymysql://Nova:p%40ss%2Fx%25y@DB9:3307/nova?charset=utf8'],
    [T, 'mysql+pymysql://nova:plain@db9/nova'],
    ['{scheme}://{username}:{password}@{hostname}/{path}_cell1', 'MySQL+PyMySQL://nova:a%3Ab@[fd00::9]:3306/nova'],
    ['{scheme}://{username}:{password}@{hostname}/x?{query}#{fragment}', 'mysql://nova:pw@db1/nova?charset=utf8#frag'],
    [T, 'mysql+pymysql://rsl:Zk/9?x#Q@127.0.0.1/nova'],
    [T, 'mysql://nova:pw@db1:notaport/nova'],
    [T, 'mysql://nova:p[w]@db1/nova'],
    ['{scheme}://{username1}:{password1}@{hostname2}:{port2}/c', 'mysql://a:b@h1:1,c:d@h2:2/nova'],
    ['{{literal}}{scheme}://{username}@{hostname}/db', 'mysql://nova@db1/nova'],
    ['{scheme}://{nope}@{hostname}/db', 'mysql://nova@db1/nova'],
  ]
  const want = python(NOVA_FORMAT, cases) as Array<string | null>

  it.each(cases.map(([t, local], i) => ({t, local, i})))('$t from $local', ({t, local, i}) => {
    let got: string | null
    try {
      got = formatTemplatedDbUrl(t, local)
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).message).not.toMatch(/t%40mpl|plain|Zk|p\[w\]|notaport/)
      got = null
    }
    // nova logs and keeps the template when it cannot fill it; cloudctl says why instead.
    expect(got).toBe(want[i] === t ? null : want[i])
  })

  it('needs a [database] connection only for templates', () => {
    expect(formatTemplatedDbUrl('mysql://a:b@h/db', undefined)).toBe('mysql://a:b@h/db')
    expect(() => formatTemplatedDbUrl('{scheme}://x@h/db', undefined)).toThrow(/template/)
  })

  it('a percent-encoded password reaches the database decoded exactly once', () => {
    const url = formatTemplatedDbUrl(T, 'mysql+pymysql://nova:p%40ss%2Fx%25y@db9:3307/nova?charset=utf8')
    expect(parseDbUrl(url).password).toBe('p@ss/x%y')
  })
})
