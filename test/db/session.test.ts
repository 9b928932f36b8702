import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {resolveConnections} from '../../src/lib/config/resolve.js'
import {checkUrlParameters, confSyncWaits, effectiveSyncWait, URL_PARAMETERS} from '../../src/lib/db/session.js'
import {parseDbUrl} from '../../src/lib/db/url.js'
import {ConfigError} from '../../src/lib/errors.js'

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

/** The README's "Other URL parameters" table: parameter -> honoured | ignored | refused. */
function readmeTable(): Map<string, string> {
  const section = README.slice(README.indexOf('### Other URL parameters'), README.indexOf('### Galera clusters'))
  const out = new Map<string, string>()
  for (const line of section.split('\n')) {
    const m = /^\| (.+?) \| (\*\*)?(honoured|ignored|refused)/.exec(line)
    if (!m) continue
    for (const name of m[1].matchAll(/`([a-z_]+)`/g)) out.set(name[1], m[3])
  }
  return out
}

describe('URL parameters other than ssl_*', () => {
  it('the README table and URL_PARAMETERS say the same for every parameter', () => {
    expect(Object.fromEntries(readmeTable())).toEqual(URL_PARAMETERS)
  })

  it.each([
    ['a name PyMySQL does not know', 'chraset=utf8', /query parameter 'chraset', which PyMySQL does not know/],
    ['a refused one', 'compress=1', /sets compress: cloudctl does not implement/],
    ['an init_command with other SQL', 'init_command=SET NAMES utf8', /init_command cloudctl does not run/],
    ['an init_command with two statements', 'init_command=SET SESSION wsrep_sync_wait=1; DELETE FROM x', /init_command cloudctl does not run/],
    ['a wsrep_sync_wait out of range', 'init_command=SET SESSION wsrep_sync_wait=16', /wsrep_sync_wait must be an integer from 0 to 15/],
  ])('%s: exit 2, the parameter named, no password', (_what, query, message) => {
    let error: unknown
    try {
      parseDbUrl(`mysql+pymysql://nova:Sekr3t@db1/nova_api?${query}`, 'nova_api database URL')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).exitCode).toBe(2)
    expect((error as ConfigError).message).toMatch(message)
    expect((error as ConfigError).message).not.toContain('Sekr3t')
  })

  it.each([
    ['SET SESSION wsrep_sync_wait=3', 3],
    ['set session wsrep_sync_wait = 0;', 0],
    ['SET @@SESSION.wsrep_sync_wait=7', 7],
    ['SET wsrep_sync_wait=15', 15],
  ])('init_command %j sets wsrep_sync_wait %i', (command, value) => {
    expect(parseDbUrl(`mysql://nova@db1/nova_api?init_command=${encodeURIComponent(command)}`).syncWait?.value).toBe(value)
    expect(checkUrlParameters({init_command: command, charset: 'utf8'}, 'x')?.value).toBe(value)
  })

  it('ignored parameters are accepted; no init_command sets nothing', () => {
    expect(parseDbUrl('mysql://nova@db1/nova_api?charset=utf8&read_timeout=30&autocommit=true').syncWait).toBeUndefined()
  })

  it('a Galera session reads with bit 1 always, nova.conf winning over the URL as in oslo.db', () => {
    expect(effectiveSyncWait(undefined, undefined)).toBe(1)
    expect(effectiveSyncWait({value: 0, origin: 'u'}, undefined)).toBe(1)
    expect(effectiveSyncWait({value: 2, origin: 'u'}, undefined)).toBe(3)
    expect(effectiveSyncWait({value: 2, origin: 'u'}, {value: 4, origin: 'c'})).toBe(5)
    expect(effectiveSyncWait(undefined, {value: 7, origin: 'c'})).toBe(7)
  })
})

describe("nova.conf's mysql_wsrep_sync_wait", () => {
  const dir = mkdtempSync(join(tmpdir(), 'cloudctl-session-'))
  const conf = (text: string) => {
    const path = join(dir, `nova-${Math.random().toString(16).slice(2)}.conf`)
    writeFileSync(path, text)
    return path
  }
  const urls = {apiDb: 'mysql://nova@db1/nova_api', placementDb: 'mysql://nova@db1/placement'}

  it('each section for its own databases', () => {
    const path = conf('[api_database]\nmysql_wsrep_sync_wait = 2\n[database]\nmysql_wsrep_sync_wait = 6\n')
    const w = confSyncWaits(resolveConnections({...urls, novaConf: path}, {}))
    expect(w.api).toEqual({value: 2, origin: `${path} [api_database] mysql_wsrep_sync_wait`})
    expect(w.cell?.value).toBe(6)
    expect(w.placement).toBeUndefined()
  })

  it('a value oslo.db would refuse: exit 2 naming the file and section', () => {
    const path = conf('[database]\nmysql_wsrep_sync_wait = often\n')
    expect(() => confSyncWaits(resolveConnections({...urls, novaConf: path}, {}))).toThrow(
      /\[database\] mysql_wsrep_sync_wait: wsrep_sync_wait must be an integer/,
    )
  })

  it('without a nova.conf nothing is set', () => {
    expect(confSyncWaits(resolveConnections(urls, {}))).toEqual({api: undefined, placement: undefined, cell: undefined})
  })
})
