/**
 * Clouds that real nova 2025.1 wrote (issue 12, item 4): every scenario of test/realnova played by
 * nova 31 / placement 13's own functional harness inside the Epoxy chroot (factory.py with
 * REALNOVA_RELEASE), loaded into the schemas nova 31's nova-manage creates, then put through the same
 * suite as Zed's (test/realnova/suite.ts) with the same expectations (test/realnova/expectations.ts,
 * which states where nova 31 plays a scenario differently and why). nova-manage and placement-api are
 * nova 31's and placement 13's, run in the chroot. Dumps are cached like Zed's (test/realnova/.cache,
 * by release).
 */
import {execFileSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {realNovaSuite} from '../realnova/suite.js'
import {missingNova} from '../realnova/support.js'
import {EPOXY_CHROOT} from './support.js'

/** Why nova 31's harness cannot run here (the chroot with nova's test packages, root, factory's own needs). */
function unavailable(): string | undefined {
  if (missingNova().length > 0) return `real nova (Zed) tools missing: ${missingNova().join(', ')}`
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root (the plays run in a chroot)'
  try {
    execFileSync('bash', [fileURLToPath(new URL('epoxy-chroot.sh', import.meta.url)), '--check'], {stdio: 'ignore'})
  } catch {
    return `no ready nova 2025.1 chroot at ${EPOXY_CHROOT}: bash test/releases/epoxy-chroot.sh (root, ~7 min) or .ci/run`
  }
  return undefined
}

const why = unavailable()
if (why !== undefined && process.env.CI !== 'true') console.warn(`realnova 2025.1 tests skipped: ${why}`)

describe.runIf(process.env.CI === 'true')('realnova 2025.1 on CI', () => {
  it('can play scenarios with nova 31 (.ci/run builds the chroot)', () => {
    expect(why).toBeUndefined()
  })
})

// $REALNOVA_REPORT as for Zed (test/realnova/audit.test.ts), written beside Zed's with the release in its name.
const report = process.env.REALNOVA_REPORT
realNovaSuite('2025.1', why === undefined, report ? report.replace(/(\.json)?$/, '-2025.1.json') : undefined)
