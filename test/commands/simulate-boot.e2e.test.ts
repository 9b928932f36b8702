/**
 * End to end: the built CLI (`npm test` builds dist/ first) on a snapshot file reproducing seed 004.
 */
import {mkdtemp} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {seed004Cloud} from '../support/builders/seed004.js'
import {cloudctl} from '../support/cli.js'

let file = ''
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-sim-'))
  file = join(dir, 'seed004.json')
  await writeSnapshotFile(seed004Cloud(), file)
}, 300_000)

describe('cloudctl simulate boot', () => {
  it('explains the seed-004 NoValidHost and exits 3', async () => {
    // --max-width 0: every line whole (piped output is otherwise wrapped to 120 columns).
    const r = await cloudctl([
      'simulate',
      'boot',
      '--snapshot',
      file,
      '--flavor',
      'm1.pinned',
      '--filters',
      'ComputeFilter,NUMATopologyFilter',
      '--why',
      'pinned-1',
      '--max-width',
      '0',
    ])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toContain('GET /allocation_candidates?')
    expect(r.stdout).toContain('NUMATopologyFilter: 3 -> 0 hosts')
    expect(r.stdout).toMatch(/pinned-1: \[filter NUMATopologyFilter\] .*pinned_cpus \{4-7\}/)
    expect(r.stdout).toContain('0/3 hosts are available: 3 NUMATopologyFilter: insufficient free pCPUs in a NUMA cell (need 2, best has 0)')
  })

  it('--json carries the result and exit 0 when placed', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--json', '--seed', '7'])
    expect(r.exitCode).toBe(0)
    const doc = JSON.parse(r.stdout) as {seed: number; placed_all: boolean; query: string}
    expect(doc.seed).toBe(7)
    expect(doc.placed_all).toBe(true)
    expect(doc.query).toContain('root_required=!COMPUTE_STATUS_DISABLED')
  })

  it('an unknown flavor is a one-line error with exit 2', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'nope'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Error: flavor "nope" not found')
    expect(r.stderr).not.toContain('    at ')
  })

  it('--json is the same document on every run with the same seed (no timings)', async () => {
    const args = ['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--num-instances', '3', '--explain', '--json']
    const [a, b] = await Promise.all([cloudctl(args), cloudctl(args)])
    expect(a.exitCode).toBe(0)
    expect(a.stdout).toBe(b.stdout)
    expect(JSON.parse(a.stdout)).not.toHaveProperty('timings')
  })

  it("nova-api's availability-zone check is a stage: shown when it passes, the refusal shown before the error", async () => {
    const demo = 'examples/demo-cloud.yaml'
    const ok = await cloudctl(['simulate', 'boot', '--snapshot', demo, '--flavor', 'm1.small', '--availability-zone', 'az2'])
    expect(ok.exitCode).toBe(0)
    expect(ok.stdout).toMatch(/^ {2}availability_zone \(nova-api\): zone az2 is available \(zones with an enabled nova-compute: az1, az2\)$/m)
    const bad = await cloudctl(['simulate', 'boot', '--snapshot', demo, '--flavor', 'm1.small', '--availability-zone', 'az9'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stdout).toMatch(/availability_zone \(nova-api\): refused \(400\): zone az9 is not available/)
    expect(bad.stdout).not.toContain('GET /allocation_candidates')
    expect(bad.stderr).toMatch(/^Error: availability zone "az9" is not available/m)
    const json = await cloudctl(['simulate', 'boot', '--snapshot', demo, '--flavor', 'm1.small', '--availability-zone', 'az9', '--json'])
    expect(json.exitCode).toBe(2)
    expect((JSON.parse(json.stdout) as {error: {hint: string}}).error.hint).toBe('Zones with an enabled nova-compute: az1, az2')
  })
})
