/**
 * The nine real-nova scenarios played by a newer release's own functional harness inside its chroot
 * (factory.py with REALNOVA_RELEASE), loaded into the schemas that release's nova-manage creates, and
 * put through the same suite as Zed's (test/realnova/suite.ts) with the same expectations
 * (test/realnova/expectations.ts, which states where a release plays a scenario differently and why).
 * nova-manage and placement-api are that release's, run in its chroot. Dumps are cached like Zed's
 * (test/realnova/.cache, by release and nova version). One test file per release calls this.
 */
import {execFileSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {realNovaSuite} from '../realnova/suite.js'
import {missingNova} from '../realnova/support.js'
import {RELEASE_CHROOTS, RELEASE_SUITES, type TestRelease} from './support.js'

type ChrootRelease = Exclude<TestRelease, 'zed'>

/** Why `release`'s harness cannot run here (its chroot with nova's test packages, root, factory's own needs). */
function unavailable(release: ChrootRelease): string | undefined {
  if (missingNova().length > 0) return `real nova (Zed) tools missing: ${missingNova().join(', ')}`
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not root (the plays run in a chroot)'
  const {suite} = RELEASE_SUITES[release]
  try {
    execFileSync('bash', [fileURLToPath(new URL('release-chroot.sh', import.meta.url)), suite, '--check'], {stdio: 'ignore'})
  } catch {
    return `no ready nova ${release} chroot at ${RELEASE_CHROOTS[release]}: bash test/releases/release-chroot.sh ${suite} (root, ~7 min) or .ci/run`
  }
  return undefined
}

/**
 * The suite for `release`. `only`: the scenarios played on this release (the CI budget plays every
 * one on the oldest and newest release and a fixed subset between them); all of them when absent.
 */
export function releaseRealNovaSuite(release: ChrootRelease, only?: string[]): void {
  const why = unavailable(release)
  if (why !== undefined && process.env.CI !== 'true') console.warn(`realnova ${release} tests skipped: ${why}`)

  describe.runIf(process.env.CI === 'true')(`realnova ${release} on CI`, () => {
    it(`can play scenarios with ${RELEASE_SUITES[release].nova} (.ci/run builds the chroot)`, () => {
      expect(why).toBeUndefined()
    })
  })

  // $REALNOVA_REPORT as for Zed (test/realnova/audit.test.ts), written beside Zed's with the release in its name.
  const report = process.env.REALNOVA_REPORT
  realNovaSuite(release, why === undefined, report ? report.replace(/(\.json)?$/, `-${release}.json`) : undefined, only)
}
