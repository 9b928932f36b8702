/**
 * cloudctl on databases real nova Zed wrote (the host's nova 26): the scenario suite (suite.ts) with
 * the expectations both releases share (expectations.ts). $REALNOVA_REPORT: also runs nova-manage
 * placement audit before the repairs and writes per scenario what each side found (JSON and markdown).
 */
import {describe, expect, it} from 'vitest'

import {realNovaSuite} from './suite.js'
import {ENABLE_HINT, missingNova} from './support.js'

const missing = missingNova()
const available = missing.length === 0
if (!available && process.env.CI !== 'true') console.warn(ENABLE_HINT)

describe.runIf(!available && process.env.CI === 'true')('realnova on CI', () => {
  it('has real nova installed', () => {
    expect(missing, ENABLE_HINT).toEqual([])
  })
})

realNovaSuite('zed', available, process.env.REALNOVA_REPORT)
