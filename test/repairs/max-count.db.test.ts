/**
 * --max-count N through the built CLI on MariaDB, as nova-manage batches: each run applies at most N
 * findings (whole: never part of a finding's steps), exits 6 while more are left and 4 after the last
 * batch, and a run with nothing left exits 0. After every batch the databases hold exactly what that
 * batch's plan writes (applyPlan), and at the end the findings are gone.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {formatTs} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'
import {type FaultCode, generateCloud} from '../support/generator.js'
import {type RepairWorld, dbNow, expectAppliedState, repairWorld} from './support.js'

interface Case {
  name: string
  args: string[]
  faults: Partial<Record<FaultCode, number>>
  /** Finding codes the command repairs. */
  codes: string[]
  /** Units of work the faults make (a consumer's leaks are one). */
  units: number
}

const CASES: Case[] = [
  {
    name: 'repair leaks',
    args: ['repair', 'leaks'],
    faults: {'allocation.consumer-deleted': 3, 'allocation.consumer-unknown': 2},
    codes: ['allocation.consumer-deleted', 'allocation.consumer-unknown'],
    units: 5,
  },
  {name: 'repair providers', args: ['repair', 'providers'], faults: {'provider.stale': 3}, codes: ['provider.stale'], units: 3},
]

const N = 2

describe('--max-count batches through the CLI (MariaDB)', () => {
  const worlds: RepairWorld[] = []
  afterAll(async () => {
    for (const w of worlds) await w.drop()
  })

  it.each(CASES.map((c) => [c.name, c] as const))('%s --max-count 2: exit 6 while work remains, 4 on the last batch, then 0', async (_name, c) => {
    const g = generateCloud({seed: 29, hosts: 8, instances: 16, pinnedHostFraction: 0, now: formatTs(Date.now()), faults: c.faults})
    const world = await repairWorld(`rmax_${c.args[1]}`, g.snapshot)
    worlds.push(world)
    const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-maxcount-'))
    const src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    const state = ['--undo-dir', join(tmp, 'undo'), '--audit-log', join(tmp, 'audit.log')]
    // A stale provider's leaked allocations are removed with it: those findings ride along in its unit.
    const addressed = (plan: RepairPlan) => plan.findings.filter((f) => c.codes.includes(f.code))
    const open = async () => runChecks(buildModel(await world.capture())).findings.filter((f) => c.codes.includes(f.code))
    expect(await open()).toHaveLength(c.units)

    // A dry run plans the first batch only, and says there is more.
    const dry = await cloudctl([...c.args, ...src, '--max-count', String(N), '--dry-run', '--json'])
    expect(dry.exitCode, dry.stderr).toBe(3)
    const dryPlan = (JSON.parse(dry.stdout) as {plan: RepairPlan}).plan
    expect(dryPlan.partial).toBe(true)
    expect(addressed(dryPlan)).toHaveLength(N)

    const batches = Math.ceil(c.units / N)
    for (let i = 0; i < batches; i++) {
      const before = await world.capture()
      const since = dbNow()
      const r = await cloudctl([...c.args, ...src, '--max-count', String(N), '--apply', '--yes', '--json', ...state])
      const last = i === batches - 1
      expect(r.exitCode, `batch ${i + 1}: ${r.stderr}`).toBe(last ? 4 : 6)
      const plan = (JSON.parse(r.stdout) as {plan: RepairPlan}).plan
      expect(addressed(plan), `batch ${i + 1}`).toHaveLength(Math.min(N, c.units - i * N))
      expect(Boolean(plan.partial)).toBe(!last)
      expectAppliedState(await world.capture(), before, plan, since)
      expect(await open()).toHaveLength(c.units - Math.min(c.units, (i + 1) * N))
    }
    const done = await cloudctl([...c.args, ...src, '--max-count', String(N), '--apply', '--yes', ...state])
    expect(done.exitCode, done.stdout).toBe(0)

    const human = await cloudctl([...c.args, ...src, '--max-count', '0'])
    expect(human.exitCode).toBe(2)
  })

  it('repair undo refuses --max-count (exit 2): it restores a whole undo file', async () => {
    const r = await cloudctl(['repair', 'undo', '/nonexistent-undo.json', '--max-count', '1', '--api-db', 'mysql://root@127.0.0.1:1/x'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--max-count does not apply')
  })
})
