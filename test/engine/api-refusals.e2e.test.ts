/**
 * End to end: `simulate boot` refuses what nova-api refuses, before scheduling: exit 2, nova's
 * exception name and message, one line and a hint, no stack trace (build first: npm run build).
 */
import {mkdtemp} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {cloudctl} from '../support/cli.js'
import {seed004Cloud} from '../support/builders/seed004.js'

let file = ''
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-refusal-'))
  file = join(dir, 'seed004.json')
  await writeSnapshotFile(seed004Cloud(), file)
}, 300_000)

describe('simulate boot: requests nova-api refuses', () => {
  it.each([
    [
      'shared flavor, dedicated image',
      ['--extra-spec', 'hw:cpu_policy=shared', '--image-property', 'hw_cpu_policy=dedicated'],
      "400 ImageCPUPinningForbidden): Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor",
    ],
    [
      'an absurd dedicated mask (bounded, no "Set maximum size exceeded")',
      ['--extra-spec', 'hw:cpu_policy=mixed', '--extra-spec', 'hw:cpu_dedicated_mask=0-99999999'],
      '400 InvalidMixedInstanceDedicatedMask): Mixed instance must have at least 1 pinned vCPU and 1 unpinned vCPU.',
    ],
    [
      'PCPU and VCPU together',
      ['--extra-spec', 'resources:PCPU=1', '--extra-spec', 'resources:VCPU=1'],
      "400 InvalidRequest): It is not possible to specify both 'resources:VCPU' and 'resources:PCPU' extra specs; use one or the other",
    ],
  ])('%s: exit 2 with the exception and message', async (_name, args, message) => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', ...args])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(`nova-api refuses the request (${message}`)
    expect(r.stdout).not.toContain('allocation_candidates')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('--json: still exit 2 and no result document', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--extra-spec', 'hw:cpu_policy=foo', '--json'])
    expect(r.exitCode).toBe(2)
    expect(r.stdout + r.stderr).toContain('InvalidCPUAllocationPolicy')
    expect(r.stdout).not.toContain('"placedAll"')
  })
})
