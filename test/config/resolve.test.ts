import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {defaultConfigPath, loadConfigFile, parseConfigText, selectProfile} from '../../src/lib/config/file.js'
import {parseCellDbFlags, resolveConnections} from '../../src/lib/config/resolve.js'
import {ConfigError} from '../../src/lib/errors.js'
import {scrub} from '../../src/lib/util/redact.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-resolve-'))
const write = (name: string, text: string): string => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

const novaConf = write(
  'nova.conf',
  `[api_database]\nconnection = mysql+pymysql://nova:conf-api@conf/nova_api\n[placement_database]\nconnection = mysql+pymysql://placement:conf-pl@conf/placement\n[database]\nconnection = mysql+pymysql://nova:conf-cell@conf/nova\n`,
)
const computeConf = write('nova-compute.conf', '[DEFAULT]\ncompute_driver = libvirt.LibvirtDriver\n[database]\nconnection = mysql://nova:x1y@db/nova\n')
const apiOnlyConf = write('nova-api-only.conf', '[api_database]\nconnection = mysql://nova:a1b@db/nova_api\n')
const config = write(
  'config.yaml',
  `default_profile: prod
profiles:
  prod:
    api_db: mysql+pymysql://nova:prof-api@prod/nova_api
    placement_db: mysql+pymysql://placement:prof-pl@prod/placement
    cell_db:
      cell1: mysql+pymysql://nova:prof-c1@prod-c1/nova_cell1
      7d5e4b1a-0000-4000-8000-000000000001: mysql://nova:prof-c2@prod-c2/nova_cell2
  staging:
    nova_conf: ${novaConf}
`,
)
/** An environment with no config file in the default place. */
const emptyEnv = {HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg-none')}

describe('resolveConnections precedence: flags > env > profile > nova.conf', () => {
  it('flags win over everything', () => {
    const r = resolveConnections(
      {apiDb: 'mysql://nova:flag-api@flag/nova_api', placementDb: 'mysql://p:flag-pl@flag/placement', novaConf, config},
      {...emptyEnv, CLOUDCTL_API_DB: 'mysql://n:env-api@env/nova_api', CLOUDCTL_PLACEMENT_DB: 'mysql://n:env-pl@env/placement'},
    )
    expect(r).toMatchObject({apiDb: 'mysql://nova:flag-api@flag/nova_api', placementDb: 'mysql://p:flag-pl@flag/placement', profile: 'prod'})
    expect(r.origin).toMatchObject({apiDb: '--api-db', placementDb: '--placement-db'})
    // nova.conf is still read for its [database] connection and scheduler options
    expect(r.novaConfDatabase).toBe('mysql+pymysql://nova:conf-cell@conf/nova')
    expect(r.novaConf?.path).toBe(novaConf)
  })

  it('environment wins over the profile', () => {
    const r = resolveConnections({config}, {...emptyEnv, CLOUDCTL_API_DB: 'mysql://n:env-api@env/nova_api'})
    expect(r.apiDb).toBe('mysql://n:env-api@env/nova_api')
    expect(r.origin.apiDb).toBe('CLOUDCTL_API_DB')
    expect(r.placementDb).toBe('mysql+pymysql://placement:prof-pl@prod/placement')
    expect(r.origin.placementDb).toBe("profile 'prod'")
    expect(r.cellDb).toEqual({
      cell1: 'mysql+pymysql://nova:prof-c1@prod-c1/nova_cell1',
      '7d5e4b1a-0000-4000-8000-000000000001': 'mysql://nova:prof-c2@prod-c2/nova_cell2',
    })
  })

  it('profile wins over nova.conf; --cell-db wins over the profile per cell', () => {
    const r = resolveConnections({config, novaConf, cellDb: ['cell1=mysql://nova:flag-c1@flag-c1/nova_cell1']}, emptyEnv)
    expect(r.apiDb).toBe('mysql+pymysql://nova:prof-api@prod/nova_api')
    expect(r.cellDb.cell1).toBe('mysql://nova:flag-c1@flag-c1/nova_cell1')
    expect(r.origin.cellDb.cell1).toBe('--cell-db')
    expect(r.cellDb['7d5e4b1a-0000-4000-8000-000000000001']).toBe('mysql://nova:prof-c2@prod-c2/nova_cell2')
  })

  it('nova.conf fills what nothing else gave (flag, CLOUDCTL_NOVA_CONF or the profile)', () => {
    for (const [opts, env] of [
      [{novaConf}, emptyEnv],
      [{}, {...emptyEnv, CLOUDCTL_NOVA_CONF: novaConf}],
      [{config, profile: 'staging'}, emptyEnv],
      [{config}, {...emptyEnv, CLOUDCTL_PROFILE: 'staging'}],
    ] as const) {
      const r = resolveConnections(opts, env)
      expect(r.apiDb).toBe('mysql+pymysql://nova:conf-api@conf/nova_api')
      expect(r.placementDb).toBe('mysql+pymysql://placement:conf-pl@conf/placement')
      expect(r.origin.apiDb).toBe(`${novaConf} [api_database]`)
    }
  })

  it('finds the config file through CLOUDCTL_CONFIG and XDG_CONFIG_HOME', () => {
    expect(resolveConnections({}, {...emptyEnv, CLOUDCTL_CONFIG: config}).profile).toBe('prod')
    const xdg = mkdtempSync(join(tmpdir(), 'cloudctl-xdg-'))
    const path = defaultConfigPath({XDG_CONFIG_HOME: xdg})
    expect(path).toBe(join(xdg, 'cloudctl', 'config.yaml'))
    expect(defaultConfigPath({HOME: '/home/op', XDG_CONFIG_HOME: ''})).toBe('/home/op/.config/cloudctl/config.yaml')
  })

  it('nothing configured: a ConfigError listing the ways', () => {
    let error: unknown
    try {
      resolveConnections({}, emptyEnv)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).exitCode).toBe(2)
    expect((error as ConfigError).message).toMatch(/no database configured/)
    for (const way of ['--api-db', '--nova-conf', 'CLOUDCTL_API_DB', 'config.yaml', '--profile', '--snapshot'])
      expect((error as ConfigError).hint).toContain(way)
  })

  it('a nova.conf without [api_database] or [placement_database] names the file and section', () => {
    expect(() => resolveConnections({novaConf: computeConf}, emptyEnv)).toThrow(`${computeConf} has no [api_database] connection`)
    expect(() => resolveConnections({novaConf: apiOnlyConf}, emptyEnv)).toThrow(`${apiOnlyConf} has no [placement_database] connection`)
  })

  it('no placement URL anywhere: an error, never a guess', () => {
    let error: ConfigError | undefined
    try {
      resolveConnections({apiDb: 'mysql://nova:q1w@db/nova_api'}, emptyEnv)
    } catch (e) {
      error = e as ConfigError
    }
    expect(error?.message).toBe('no placement database configured')
    expect(error?.hint).toMatch(/--placement-db/)
  })

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])('a profile named %s is unknown, not an Object property', (name) => {
    let error: unknown
    try {
      resolveConnections({config, profile: name}, emptyEnv)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).exitCode).toBe(2)
    expect((error as ConfigError).message).toContain(`unknown profile '${name}'`)
    expect((error as ConfigError).hint).toBe('Known profiles: prod, staging.')
  })

  it('profiles and cells named like Object properties are ordinary names', () => {
    const c = parseConfigText(
      'profiles:\n  constructor: {api_db: "mysql://a@h/api", cell_db: {toString: "mysql://a@h/c1", __proto__: "mysql://a@h/c2"}}\n',
      'c.yaml',
    )
    expect(selectProfile(c, 'constructor')?.profile.api_db).toBe('mysql://a@h/api')
    expect(Object.keys(selectProfile(c, 'constructor')?.profile.cell_db ?? {})).toEqual(['toString', '__proto__'])
    const r = resolveConnections({apiDb: 'mysql://a@h/api', placementDb: 'mysql://a@h/p', cellDb: ['valueOf=mysql://a@h/v']}, emptyEnv)
    expect(r.cellDb.constructor).toBeUndefined()
    expect(r.cellDb.toString).toBeUndefined()
    expect(r.cellDb.valueOf).toBe('mysql://a@h/v')
  })

  it('unknown profile lists the known ones', () => {
    expect(() => resolveConnections({config, profile: 'qa'}, emptyEnv)).toThrow(/unknown profile 'qa'/)
    try {
      resolveConnections({config, profile: 'qa'}, emptyEnv)
    } catch (e) {
      expect((e as ConfigError).hint).toBe('Known profiles: prod, staging.')
    }
  })

  it('a named config file must exist; the default one may not', () => {
    expect(() => resolveConnections({config: join(dir, 'nope.yaml'), apiDb: 'mysql://a@b/c', placementDb: 'mysql://a@b/d'}, emptyEnv)).toThrow(
      /cannot read config file .*nope.yaml: no such file/,
    )
    expect({...loadConfigFile(undefined, emptyEnv).profiles}).toEqual({})
  })

  it('registers every password it sees', () => {
    resolveConnections({config}, emptyEnv)
    expect(scrub('x prof-api y prof-c1 z')).toBe('x *** y *** z')
  })
})

describe('config file validation', () => {
  it.each([
    ['profiles: [a, b]', /'profiles' must be a mapping/],
    ['profiles:\n  p: {api_db: 3}', /api_db must be a non-empty string/],
    ['profiles:\n  p: {apidb: mysql://a@b/c}', /unknown key 'apidb'/],
    ['profiles:\n  p: {cell_db: [x]}', /cell_db must map/],
    ['profile: {}', /unknown key 'profile'/],
    ['profiles: {p: {}}\ndefault_profile: [x]', /default_profile must be a profile name/],
    ['profiles: {p: {api_db: "x"', /not valid YAML/],
  ])('%j', (text, message) => {
    expect(() => parseConfigText(text, 'c.yaml')).toThrow(message)
  })

  it('an empty file is an empty config; default_profile must exist', () => {
    expect(parseConfigText('', 'c.yaml')).toEqual({path: 'c.yaml', profiles: {}})
    const c = parseConfigText('default_profile: gone\nprofiles: {a: {}}', 'c.yaml')
    expect(() => selectProfile(c, undefined)).toThrow(/unknown profile 'gone' \(default_profile\)/)
    expect(selectProfile(c, 'a')).toEqual({name: 'a', profile: {}})
  })
})

describe('--cell-db NAME=URL', () => {
  it('parses name or uuid keys, splitting at the first =', () => {
    expect(parseCellDbFlags(['cell1=mysql://nova:c1@db/nova_cell1?charset=utf8', 'abc-uuid=mysql://n@h/d'])).toEqual({
      cell1: 'mysql://nova:c1@db/nova_cell1?charset=utf8',
      'abc-uuid': 'mysql://n@h/d',
    })
  })
  it.each(['cell1', '=mysql://a@b/c', 'cell1=', 'mysql://a:b@c/d?x=1', 'rsec:Sekr3tPw7731@127.0.0.1/nova'])('rejects %j without echoing it', (v) => {
    expect(() => parseCellDbFlags([v])).toThrow(/--cell-db expects NAME=URL/)
    expect(() => parseCellDbFlags([v])).not.toThrow(/Sekr3t|a:b@/)
  })
})
