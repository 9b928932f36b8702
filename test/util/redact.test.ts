import {describe, expect, it} from 'vitest'

import {isDistinctiveSecret, redact, registerSecret, scrub} from '../../src/lib/util/redact.js'

describe('redact (by URL structure)', () => {
  it.each([
    ['mysql+pymysql://nova:SECRET@10.0.0.5/nova?charset=utf8', 'mysql+pymysql://nova:***@10.0.0.5/nova?charset=utf8'],
    ['mysql://root:p%40ss@db:3306/nova_api', 'mysql://root:***@db:3306/nova_api'],
    // raw / ? # : in the password (SQLAlchemy accepts them)
    ['mysql+pymysql://rsl:Zk/9?x#Q@127.0.0.1/nova', 'mysql+pymysql://rsl:***@127.0.0.1/nova'],
    // a raw '@' too: nothing of it survives, whatever parser reads the URL
    ['mysql://rtest:p@ss:w/rd%@127.0.0.1/db', 'mysql://rtest:***@127.0.0.1/db'],
    ['mysql://a@b:pw@h/db', 'mysql://a@b:***@h/db'],
    // no scheme: a mistyped --api-db value
    ['rsec:Sekr3tPw7731@127.0.0.1/nova_api', 'rsec:***@127.0.0.1/nova_api'],
    ['rabbit://openstack:pw1@mq1:5672,openstack:pw2@mq2:5672/', 'rabbit://openstack:***@mq1:5672,openstack:***@mq2:5672/'],
    // a comma in a transport password is not a host list
    ['rabbit://openstack:p,w@x@mq1:5672/', 'rabbit://openstack:***@mq1:5672/'],
    ['mysql://nova@db/nova', 'mysql://nova@db/nova'],
    ['mysql://db/nova?user=nova&password=SECRET', 'mysql://db/nova?user=nova&password=***'],
    ['connect to mysql+pymysql://nova:SECRET@db/nova failed', 'connect to mysql+pymysql://nova:***@db/nova failed'],
    ['a mysql://u:x1@h/d and b mysql://v:y2@h/d', 'a mysql://u:***@h/d and b mysql://v:***@h/d'],
    ['none:///', 'none:///'],
    ['http://host:8080/path', 'http://host:8080/path'],
    // cloudctl's own display form, followed by a driver message: left alone
    ["mysql://nova:***@db1:3306/nova: Access denied for user 'nova'@'10.0.0.1'", "mysql://nova:***@db1:3306/nova: Access denied for user 'nova'@'10.0.0.1'"],
    // the sentence after a URL is not part of it
    ['Expected mysql://USER:PASSWORD@HOST/DB. An @ must be written %40', 'Expected mysql://USER:***@HOST/DB. An @ must be written %40'],
    ['bad mysql://u:p@ss@h/db here, user@example', 'bad mysql://u:***@h/db here, user@example'],
    // nova's template form holds no password; a literal one in a template is one
    ['{scheme}://{username}:{password}@{hostname}:{port}/nova_cell1?{query}', '{scheme}://{username}:{password}@{hostname}:{port}/nova_cell1?{query}'],
    ['{scheme}://nova:S3cret@{hostname}/nova_cell1', '{scheme}://nova:***@{hostname}/nova_cell1'],
    // ordinary words stay ordinary
    ['nova-api r2_nova_api availability zone nova', 'nova-api r2_nova_api availability zone nova'],
  ])('%s', (input, want) => {
    expect(redact(input)).toBe(want)
  })
})

describe('scrub (structure, then distinctive registered passwords as whole tokens)', () => {
  it('scrubs a registered password echoed verbatim by a driver', () => {
    registerSecret('Tr0ub4dor&3')
    expect(scrub("Access denied for user 'nova' (using password: Tr0ub4dor&3)")).toBe("Access denied for user 'nova' (using password: ***)")
    expect(scrub('{"error":"Tr0ub4dor&3"}')).toBe('{"error":"***"}')
  })

  it('a JSON-escaped password is scrubbed in JSON text', () => {
    registerSecret('q"uo\\te9x')
    expect(scrub(JSON.stringify({e: 'pw q"uo\\te9x end'}))).toBe('{"e":"pw *** end"}')
  })

  it('never rewrites ordinary words: a short or plain password is protected by structure only', () => {
    for (const weak of ['nova', 'secret', 'password', '3306', 'celldb']) {
      registerSecret(weak)
      expect(isDistinctiveSecret(weak)).toBe(false)
    }
    const text = 'nova-api r2_nova_api zone nova, port 3306, secret sauce, celldb'
    expect(scrub(text)).toBe(text)
    expect(scrub('mysql://nova:nova@db/nova_api')).toBe('mysql://nova:***@db/nova_api')
  })

  it('a distinctive password inside a longer word is not a match', () => {
    registerSecret('Xk9-pass')
    expect(scrub('host Xk9-passage Xk9-pass')).toBe('host Xk9-passage ***')
  })

  it.each(['Zk/9?x#Q', 'Sekr3tPw7731', 'p@ss:w/rd%', 'aZbXkqLpwmnRtsYuQ'])('%s is distinctive', (s) => {
    expect(isDistinctiveSecret(s)).toBe(true)
  })
})
