import {describe, expect, it} from 'vitest'

import {connectionOptions, displayDbUrl, formatTemplatedDbUrl, parseDbUrl, withDatabase} from '../../src/lib/db/url.js'
import {ConfigError} from '../../src/lib/errors.js'
import {scrub} from '../../src/lib/util/redact.js'

describe('parseDbUrl', () => {
  it.each([
    {
      url: 'mysql+pymysql://nova:secretpw@db1:3307/nova_api?charset=utf8',
      want: {scheme: 'mysql+pymysql', user: 'nova', password: 'secretpw', host: 'db1', port: 3307, database: 'nova_api', params: {charset: 'utf8'}},
      display: 'mysql+pymysql://nova:***@db1:3307/nova_api',
    },
    {
      url: 'mysql://nova:pw1@10.0.0.5/nova',
      want: {scheme: 'mysql', host: '10.0.0.5', port: 3306, database: 'nova', socketPath: undefined},
      display: 'mysql://nova:***@10.0.0.5:3306/nova',
    },
    {
      url: 'mysql+mysqldb://root@localhost/placement',
      want: {scheme: 'mysql+mysqldb', user: 'root', password: undefined, host: 'localhost', port: 3306, database: 'placement'},
      display: 'mysql+mysqldb://root@localhost:3306/placement',
    },
    {
      url: 'mysql+pymysql://nova:p%40ss%2Fw%3Ard%25@db1/nova_cell1',
      want: {password: 'p@ss/w:rd%', host: 'db1', database: 'nova_cell1'},
      display: 'mysql+pymysql://nova:***@db1:3306/nova_cell1',
    },
    {
      // SQLAlchemy also accepts a raw '@' in the password: the user info ends at the last '@'
      url: 'mysql+pymysql://nova:p@ss#1@db1/nova',
      want: {password: 'p@ss#1', host: 'db1', database: 'nova'},
      display: 'mysql+pymysql://nova:***@db1:3306/nova',
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
    {
      url: 'mariadb+pymysql://nova:pw4@db1/nova_api?connect_timeout=3&ssl_ca=/etc/ssl/ca.pem',
      want: {scheme: 'mariadb+pymysql', params: {connect_timeout: '3', ssl_ca: '/etc/ssl/ca.pem'}},
      display: 'mariadb+pymysql://nova:***@db1:3306/nova_api',
    },
    {
      url: 'mysql://nova@db1',
      want: {database: undefined, password: undefined},
      display: 'mysql://nova@db1:3306',
    },
  ])('$url', ({url, want, display}) => {
    const u = parseDbUrl(url)
    expect(u).toMatchObject(want)
    expect(u.display).toBe(display)
    if (u.password) {
      expect(u.display).not.toContain(u.password)
      // the password is registered: a message echoing it is scrubbed
      expect(scrub(`driver said ${u.password}`)).toBe('driver said ***')
    }
  })

  it.each([
    ['', /not a URL/],
    ['db1:3306/nova', /not a URL/],
    ['postgresql://nova:pw5@db1/nova', /reads MySQL\/MariaDB databases only/],
    ['sqlite:///nova.sqlite', /reads MySQL\/MariaDB databases only/],
    ['mysql://nova:pw6@db1:33o6/nova', /bad port '33o6'/],
    ['mysql://nova:pw7@db1:70000/nova', /bad port '70000'/],
    ['mysql://nova:p%zzword@db1/nova', /malformed percent-encoding in the password/],
    ['mysql://:pw8@db1/nova', /no user name/],
    ['mysql://nova:pw9@[fd00::1/nova', /unterminated IPv6/],
    ['mysql://nova:pw10@db1/nova?read_default_file=/etc/my.cnf', /read_default_file/],
  ])('rejects %s', (url, message) => {
    let error: unknown
    try {
      parseDbUrl(url)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    const e = error as ConfigError
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(message)
    expect(e.hint).toBeTruthy()
    expect(e.message).not.toMatch(/pw\d+|p%zzword/)
  })

  it('maps to mysql2 options: TCP or socket, connect timeout, TLS files', () => {
    expect(connectionOptions(parseDbUrl('mysql://nova:pw@db1:3307/nova?connect_timeout=2.5'))).toEqual({
      user: 'nova', password: 'pw', database: 'nova', host: 'db1', port: 3307, connectTimeout: 2500,
    })
    expect(connectionOptions(parseDbUrl('mysql://nova@/nova?unix_socket=/tmp/s.sock'))).toEqual({
      user: 'nova', password: undefined, database: 'nova', socketPath: '/tmp/s.sock', connectTimeout: 10_000,
    })
    expect(connectionOptions(parseDbUrl('mysql://nova@db/nova?ssl_ca=/ca.pem&ssl_verify_cert=false')).ssl).toEqual({
      ca: '/ca.pem', cert: undefined, key: undefined, rejectUnauthorized: false,
    })
  })

  it('withDatabase keeps server and credentials and swaps the database', () => {
    const other = withDatabase('mysql+pymysql://nova:p%40ss@db1:3307/nova_api?charset=utf8', 'nova_cell1')
    expect(parseDbUrl(other)).toMatchObject({user: 'nova', password: 'p@ss', host: 'db1', port: 3307, database: 'nova_cell1', params: {charset: 'utf8'}})
  })

  it('displayDbUrl never throws and never shows the password', () => {
    expect(displayDbUrl('mysql://nova:hunter22@db1/nova')).toBe('mysql://nova:***@db1:3306/nova')
    expect(displayDbUrl('mysql://nova:hunter23@db1:bad/nova')).not.toContain('hunter23')
  })

  it('fills templated cell URLs like nova does, from the local [database] connection', () => {
    const local = 'mysql+pymysql://nova:t%40mpl@db9:3307/nova?charset=utf8'
    const url = formatTemplatedDbUrl('{scheme}://{username}:{password}@{hostname}:{port}/nova_cell1?{query}', local)
    expect(parseDbUrl(url)).toMatchObject({scheme: 'mysql+pymysql', user: 'nova', password: 't@mpl', host: 'db9', port: 3307, database: 'nova_cell1', params: {charset: 'utf8'}})
    expect(formatTemplatedDbUrl('mysql://a:b@h/db', undefined)).toBe('mysql://a:b@h/db')
    expect(() => formatTemplatedDbUrl('{scheme}://x@h/db', undefined)).toThrow(/template/)
    expect(() => formatTemplatedDbUrl('{nope}://x@h/db', local)).toThrow(/unknown field \{nope\}/)
  })
})
