/**
 * End to end: the built CLI (`npm test` builds dist/ first) on a snapshot file reproducing seed 004.
 */
import {mkdtemp} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {seed004Cloud} from '../engine/cloud.js'
import {cloudctl} from '../support/cli.js'

let file = ''
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-sim-'))
  file = join(dir, 'seed004.json')
  await writeSnapshotFile(seed004Cloud(), file)
}, 300_000)

describe('cloudctl simulate boot', () => {
  it('explains the seed-004 NoValidHost and exits 3', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.pinned', '--filters', 'ComputeFilter,NUMATopologyFilter', '--why', 'pinned-1'])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toContain('GET /allocation_candidates?')
    expect(r.stdout).toContain('NUMATopologyFilter: 3 -> 0 hosts')
    expect(r.stdout).toMatch(/pinned-1: \[filter NUMATopologyFilter\] .*pinned_cpus \{4-7\}/)
    expect(r.stdout).toContain('0/3 hosts are available: 3 NUMATopologyFilter: insufficient free pCPUs in a NUMA cell (need 2, best has 0)')
  })

  it('--json carries the result and exit 0 when placed', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--json', '--seed', '7'])
    expect(r.exitCode).toBe(0)
    const doc = JSON.parse(r.stdout) as {seed: number; placedAll: boolean; query: string}
    expect(doc.seed).toBe(7)
    expect(doc.placedAll).toBe(true)
    expect(doc.query).toContain('root_required=!COMPUTE_STATUS_DISABLED')
  })

  it('an unknown flavor is a one-line error with exit 2', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'nope'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Error: flavor "nope" not found')
    expect(r.stderr).not.toContain('    at ')
  })
})
