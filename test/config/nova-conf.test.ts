import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {defaultAvailabilityZone, getOption, optionalConnection, parseNovaConf, readNovaConf, requireConnection} from '../../src/lib/config/nova-conf.js'
import {ConfigError} from '../../src/lib/errors.js'
import {scrub} from '../../src/lib/util/redact.js'

const NOVA_CONF = `
# nova.conf written by an operator
[DEFAULT]
state_path = /var/lib/nova
instances_path = $state_path/instances
debug=True
my_ip: 10.0.0.11
; a semicolon comment

[api_database]
#connection = mysql+pymysql://nova:OLD@db0/nova_api
connection = mysql+pymysql://nova:first@db1/nova_api
connection = mysql+pymysql://nova:last#not-a-comment@db1/nova_api?charset=utf8

[Placement_Database]
connection = "mysql+pymysql://placement:pl@db1/placement"

[database]
connection = mysql+pymysql://nova:celldb@db2/nova_cell1

[filter_scheduler]
enabled_filters = ComputeFilter,
    AggregateInstanceExtraSpecsFilter,
\tNUMATopologyFilter
ram_weight_multiplier = 2.0
host_subset_size = 3

[pci]
alias = {"name": "a1", "vendor_id": "8086"}
alias = {"name": "a2", "vendor_id": "10de"}
`

describe('parseNovaConf (oslo.config rules)', () => {
  const conf = parseNovaConf(NOVA_CONF, '/etc/nova/nova.conf')

  it('reads sections, both separators, and DEFAULT', () => {
    expect(conf.sections.DEFAULT).toMatchObject({debug: 'True', my_ip: '10.0.0.11', state_path: '/var/lib/nova'})
    expect(Object.keys(conf.sections)).toEqual(['DEFAULT', 'api_database', 'placement_database', 'database', 'filter_scheduler', 'pci'])
  })

  it('keeps the last value of a repeated option and every value for multi-valued ones', () => {
    expect(conf.sections.api_database.connection).toBe('mysql+pymysql://nova:last#not-a-comment@db1/nova_api?charset=utf8')
    expect(conf.multi.pci.alias).toEqual(['{"name": "a1", "vendor_id": "8086"}', '{"name": "a2", "vendor_id": "10de"}'])
  })

  it('has no inline comments: # inside a value (a password) is kept', () => {
    expect(optionalConnection(conf, 'api_database')).toContain('last#not-a-comment')
  })

  it('joins continuation lines (leading space or tab) with newlines', () => {
    expect(conf.sections.filter_scheduler.enabled_filters).toBe('ComputeFilter,\nAggregateInstanceExtraSpecsFilter,\nNUMATopologyFilter')
    expect(conf.sections.filter_scheduler.ram_weight_multiplier).toBe('2.0')
  })

  it('strips matching quotes and lower-cases section names', () => {
    expect(requireConnection(conf, 'placement_database')).toBe('mysql+pymysql://placement:pl@db1/placement')
  })

  it('substitutes $name from the same section or DEFAULT, and $$ as $', () => {
    expect(getOption(conf, 'DEFAULT', 'instances_path')).toBe('/var/lib/nova/instances')
    const c = parseNovaConf('[database]\nconnection = mysql://nova:pa$$word@db/nova\n')
    expect(optionalConnection(c, 'database')).toBe('mysql://nova:pa$word@db/nova')
  })

  // Each expected value is what oslo.config 9.0 (nova Zed) gives CONF.default_availability_zone for the same text.
  it.each([
    ['$name from DEFAULT', 'my_ip = 10.0.0.1\ndefault_availability_zone = az-$my_ip', 'az-10.0.0.1'],
    ['${name}', 'host = h1\ndefault_availability_zone = ${host}-z', 'h1-z'],
    ['$group.name', 'default_availability_zone = $api.auth_strategy\n[api]\nauth_strategy = noauth2', 'noauth2'],
    ['$$', 'default_availability_zone = a$$b', 'a$b'],
    ['\\$', 'default_availability_zone = a\\$b', 'a$b'],
    ['quotes stripped', 'default_availability_zone = "az x"', 'az x'],
    ['last value wins', 'default_availability_zone = az1\ndefault_availability_zone = az2', 'az2'],
    ['set but empty: an empty name', 'default_availability_zone =', ''],
    ['unset: nova', 'debug = true', 'nova'],
  ])('default_availability_zone: %s', (_name, text, zone) => {
    expect(defaultAvailabilityZone(parseNovaConf(`[DEFAULT]\n${text}\n`))).toBe(zone)
  })

  it('registers the passwords it reads so messages are scrubbed, distinctive ones only', () => {
    optionalConnection(parseNovaConf('[database]\nconnection = mysql://nova:Cel1-db#pw@db/nova\n'), 'database')
    expect(scrub('error: Cel1-db#pw rejected')).toBe('error: *** rejected')
    // 'celldb' (the fixture's password) is a plain word: only its URL position is redacted
    optionalConnection(conf, 'database')
    expect(scrub('error: celldb rejected')).toBe('error: celldb rejected')
  })

  it('a missing section is a ConfigError naming the file and the section', () => {
    const c = parseNovaConf('[DEFAULT]\ndebug = true\n', '/etc/nova/nova-compute.conf')
    expect(() => requireConnection(c, 'api_database')).toThrow(ConfigError)
    expect(() => requireConnection(c, 'api_database')).toThrow('/etc/nova/nova-compute.conf has no [api_database] connection')
    expect(optionalConnection(parseNovaConf('[api_database]\nconnection =\n'), 'api_database')).toBeUndefined()
  })

  it.each([
    ['key = value\n', /:1: option 'key' appears before any \[section\]/],
    ['[DEFAULT]\n  indented = value\n', /:2: option 'indented' is indented but continues no option in \[DEFAULT\]/],
    ['[DEFAULT\n', /:1: malformed section header/],
    ['[DEFAULT]\njust words\n', /:2: the line in \[DEFAULT\] has no '=' or ':'$/],
    ['[DEFAULT]\n= value\n', /:2: option without a name/],
  ])('rejects %j with the line number', (text, message) => {
    expect(() => parseNovaConf(text, 'x.conf')).toThrow(message)
  })

  it('a blank line ends a multi-line value; CRLF and a BOM are fine', () => {
    const c = parseNovaConf('\uFEFF[a]\r\nk = 1\r\n  2\r\n\r\nj = 3\r\n')
    expect(c.sections.a).toEqual({k: '1\n2', j: '3'})
  })

  it('readNovaConf: a missing file is a ConfigError', () => {
    expect(() => readNovaConf('/nonexistent/nova.conf')).toThrow(/cannot read nova.conf \/nonexistent\/nova.conf: no such file/)
    const dir = mkdtempSync(join(tmpdir(), 'novaconf-'))
    writeFileSync(join(dir, 'nova.conf'), NOVA_CONF)
    expect(readNovaConf(join(dir, 'nova.conf')).sections.database.connection).toBe('mysql+pymysql://nova:celldb@db2/nova_cell1')
  })
})
