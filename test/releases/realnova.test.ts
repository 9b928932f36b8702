/**
 * Clouds that real nova 2025.1 wrote (issue 12, item 4): test/realnova's scenarios played by nova 31 /
 * placement 13's own functional harness inside the Epoxy chroot (factory.py with REALNOVA_RELEASE),
 * loaded into MariaDB databases with the schemas nova 31's nova-manage creates, then audited and
 * repaired through the built CLI with the expectations the Zed suite (test/realnova/audit.test.ts)
 * holds for the same scenarios. Dumps are cached like Zed's (test/realnova/.cache, by release).
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'
import {missingNova, playScenarios, realCloud, type RealCloud} from '../realnova/support.js'
import {EPOXY_CHROOT} from './support.js'

interface Finding {
  code: string
  severity: string
}

/** The same codes test/realnova/audit.test.ts expects of these scenarios on Zed. */
const SCENARIOS: Record<string, {codes: string[]; repairs: string[][]; blockedBoot?: true}> = {
  healthy: {codes: [], repairs: []},
  usage_drift: {codes: ['usage.node-drift'], repairs: [['repair', 'usage', '--force']]},
  pinned_leak: {codes: ['pinning.leaked', 'usage.node-drift'], repairs: [['repair', 'pinning', '--force'], ['repair', 'usage', '--force']], blockedBoot: true},
}

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

const src = (cloud: RealCloud) => ['--api-db', cloud.api, '--placement-db', cloud.placement]
const incidents = (fs: Finding[]): string[] => [...new Set(fs.filter((f) => f.severity === 'error' || f.severity === 'warning').map((f) => f.code))].sort()

async function audit(cloud: RealCloud): Promise<{exitCode: number; findings: Finding[]; release: unknown}> {
  await cloud.freshen()
  const r = await cloudctl(['audit', 'all', '--json', ...src(cloud)])
  if (r.exitCode !== 0 && r.exitCode !== 3) throw new Error(`audit exited ${r.exitCode}: ${r.stdout}${r.stderr}`)
  const doc = JSON.parse(r.stdout) as {findings: Finding[]; release: unknown}
  return {exitCode: r.exitCode, findings: doc.findings, release: doc.release}
}

beforeAll(async () => {
  if (why === undefined) await playScenarios(Object.keys(SCENARIOS), 2, '2025.1')
}, 1_800_000)

describe.runIf(why === undefined).each(Object.entries(SCENARIOS))('real nova 2025.1 scenario %s', (scenario, spec) => {
  let cloud: RealCloud | undefined
  let stateDir: string

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'realnova-epoxy-'))
    cloud = await realCloud(scenario, '2025.1')
  }, 900_000)

  afterAll(async () => {
    await cloud?.drop()
    rmSync(stateDir, {recursive: true, force: true})
  })

  it(`audit all names the release 2025.1 and reports exactly ${spec.codes.length === 0 ? 'no error or warning' : spec.codes.join(', ')}`, async () => {
    const {exitCode, findings, release} = await audit(cloud as RealCloud)
    expect((release as {name?: string} | null)?.name).toBe('2025.1')
    expect(incidents(findings)).toEqual(spec.codes)
    if (findings.length === 0) expect(exitCode).toBe(0)
  })

  it.runIf(spec.blockedBoot === true)("the boot nova 31's scheduler refused is refused by the simulation too, with 2025.1's defaults", async () => {
    const b = (cloud as RealCloud).notes.blocked_boot as {flavor: string; host: string; enabled_filters: string[]; fault: string}
    expect(b.fault).toMatch(/^No valid host was found/)
    await (cloud as RealCloud).freshen()
    const r = await cloudctl(['simulate', 'boot', '--flavor', b.flavor, '--host', b.host, '--filters', b.enabled_filters.join(','), '--json', ...src(cloud as RealCloud)])
    expect(r.exitCode, r.stderr).toBe(3)
    const doc = JSON.parse(r.stdout) as {no_valid_host: boolean; scheduler_release: {release: string}}
    expect(doc.scheduler_release.release).toBe('2025.1')
    expect(doc.no_valid_host).toBe(true)
  })

  it.runIf(spec.repairs.length > 0)(`repairs (${spec.repairs.map((r) => r.slice(1).join(' ')).join('; ')}) on the 2025.1 schema leave no error or warning`, async () => {
    for (const args of spec.repairs) {
      await (cloud as RealCloud).freshen()
      const r = await cloudctl([...args, ...src(cloud as RealCloud), '--apply', '--yes', '--undo-dir', stateDir, '--audit-log', join(stateDir, 'audit.log')])
      expect([0, 3, 4], `${args.join(' ')}: ${r.stdout}${r.stderr}`).toContain(r.exitCode)
    }
    expect(incidents((await audit(cloud as RealCloud)).findings)).toEqual([])
  }, 300_000)

  it.runIf(spec.blockedBoot === true)('after the repairs the simulation places that boot on its host', async () => {
    const b = (cloud as RealCloud).notes.blocked_boot as {flavor: string; host: string; enabled_filters: string[]}
    await (cloud as RealCloud).freshen()
    const r = await cloudctl(['simulate', 'boot', '--flavor', b.flavor, '--host', b.host, '--filters', b.enabled_filters.join(','), '--json', ...src(cloud as RealCloud)])
    expect(r.exitCode, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as {instances: Array<{host: string | null}>}).instances[0]?.host).toBe(b.host)
  })
})
