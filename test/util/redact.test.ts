import {describe, expect, it} from 'vitest'

import {redact, registerSecret, scrub} from '../../src/lib/util/redact.js'

describe('redact', () => {
  it.each([
    ['mysql+pymysql://nova:SECRET@10.0.0.5/nova?charset=utf8', 'mysql+pymysql://nova:***@10.0.0.5/nova?charset=utf8'],
    ['mysql://root:p%40ss@db:3306/nova_api', 'mysql://root:***@db:3306/nova_api'],
    ['rabbit://openstack:pw1@mq1:5672,openstack:pw2@mq2:5672/', 'rabbit://openstack:***@mq1:5672,openstack:***@mq2:5672/'],
    ['mysql://nova@db/nova', 'mysql://nova@db/nova'],
    ['mysql://db/nova?user=nova&password=SECRET', 'mysql://db/nova?user=nova&password=***'],
    ['connect to mysql+pymysql://nova:SECRET@db/nova failed', 'connect to mysql+pymysql://nova:***@db/nova failed'],
    ['none:///', 'none:///'],
  ])('%s', (input, want) => {
    expect(redact(input)).toBe(want)
  })

  it('scrubs a registered password echoed verbatim by a driver', () => {
    registerSecret('Tr0ub4dor&3')
    expect(scrub("Access denied for user 'nova' (using password: Tr0ub4dor&3)")).not.toContain('Tr0ub4dor&3')
  })
})
