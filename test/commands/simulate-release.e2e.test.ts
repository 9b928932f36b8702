/**
 * End to end: `simulate boot` / `simulate capacity` use the scheduler defaults of the release the
 * snapshot was captured from (issue 12, item 3), `--release` overrides, and --nova-conf still
 * overrides either. The cloud: three identical hosts but for their hypervisor version, so only
 * 2025.1's HypervisorVersionWeigher (multiplier 1.0 by default) tells them apart.
 */
import {mkdtemp} from 'node:fs/promises'
import {writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {cloudRelease, databaseRelease} from '../../src/lib/domain/release.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'

const files: Record<'epoxy' | 'zed' | 'none', string> = {epoxy: '', zed: '', none: ''}
let conf = ''

function cloudWithVersions(): Snapshot {
  const b = new CloudBuilder()
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
  for (const host of ['cmp-a', 'cmp-b', 'cmp-c']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 1000})
  const s = b.build()
  const versions: Record<string, number> = {'cmp-a': 6002000, 'cmp-b': 9001000, 'cmp-c': 8002000}
  for (const cn of s.nova.compute_nodes) cn.hypervisor_version = versions[cn.host as string] as number
  return s
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-release-'))
  // nova-compute of 2025.1 writes service version 68 (2903cd72dc14 is also 2025.2's and 2026.1's head)
  const cell = (alembic: string) => ({c: databaseRelease('nova', alembic, {serviceVersion: alembic === '2903cd72dc14' ? 68 : null})})
  const epoxy = cloudWithVersions()
  epoxy.release = cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), cell('2903cd72dc14'))
  const zed = cloudWithVersions()
  zed.release = cloudRelease(databaseRelease('nova_api', 'b30f573d3377'), databaseRelease('placement', '422ece571366'), cell('ccb0fa1a2252'))
  files.epoxy = join(dir, 'epoxy.json')
  files.zed = join(dir, 'zed.json')
  files.none = join(dir, 'none.json')
  await writeSnapshotFile(epoxy, files.epoxy)
  await writeSnapshotFile(zed, files.zed)
  await writeSnapshotFile(cloudWithVersions(), files.none)
  conf = join(dir, 'nova.conf')
  writeFileSync(conf, '[filter_scheduler]\nhypervisor_version_weight_multiplier = -1.0\n')
}, 300_000)

interface Doc {
  instances: Array<{host: string | null}>
  scheduler_release: {release: string; note: string}
  weighed: Array<{host: string; parts: Array<{weigher: string; multiplier: number}>}>
}

async function boot(args: string[]): Promise<Doc> {
  const r = await cloudctl(['simulate', 'boot', '--flavor', 'm1.small', '--json', ...args])
  expect(r.exitCode, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Doc
}

describe('simulate boot: the release of the snapshot picks the defaults', () => {
  it('a 2025.1 snapshot prefers the newest hypervisor; a Zed one knows no such weigher', async () => {
    const epoxy = await boot(['--snapshot', files.epoxy])
    expect(epoxy.scheduler_release).toEqual({release: '2025.1', note: 'detected 2025.1'})
    expect(epoxy.instances[0]?.host).toBe('cmp-b')
    expect(epoxy.weighed[0]?.parts.map((p) => p.weigher)).toContain('HypervisorVersionWeigher')
    const zed = await boot(['--snapshot', files.zed])
    expect(zed.scheduler_release.release).toBe('zed')
    expect(zed.instances[0]?.host).toBe('cmp-a')
    expect(zed.weighed[0]?.parts.map((p) => p.weigher)).not.toContain('HypervisorVersionWeigher')
    // no release recorded: Zed's, as before releases were told apart
    expect((await boot(['--snapshot', files.none])).scheduler_release.release).toBe('zed')
  })

  it('--release overrides the detected release; nova.conf overrides the release default', async () => {
    const asZed = await boot(['--snapshot', files.epoxy, '--release', 'zed'])
    expect(asZed.scheduler_release).toEqual({release: 'zed', note: '--release zed'})
    expect(asZed.instances[0]?.host).toBe('cmp-a')
    expect((await boot(['--snapshot', files.zed, '--release', '2025.1'])).instances[0]?.host).toBe('cmp-b')
    // prefer the oldest hypervisor instead
    expect((await boot(['--snapshot', files.epoxy, '--nova-conf', conf])).instances[0]?.host).toBe('cmp-a')
    expect((await boot(['--snapshot', files.epoxy, '--multiplier', 'hypervisor_version=0'])).instances[0]?.host).toBe('cmp-a')
  })

  it('the human output names the release; a filter the release lacks is exit 2', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', files.epoxy, '--flavor', 'm1.small'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('Scheduler of nova 2025.1 (detected 2025.1)')
    const az = await cloudctl(['simulate', 'boot', '--snapshot', files.epoxy, '--flavor', 'm1.small', '--filters', 'ComputeFilter,AvailabilityZoneFilter'])
    expect(az.exitCode).toBe(2)
    expect(az.stderr).toContain('nova 2025.1 has no AvailabilityZoneFilter')
    const zedAz = await cloudctl(['simulate', 'boot', '--snapshot', files.zed, '--flavor', 'm1.small', '--filters', 'ComputeFilter,AvailabilityZoneFilter'])
    expect(zedAz.exitCode).toBe(0)
    const bad = await cloudctl(['simulate', 'boot', '--snapshot', files.zed, '--flavor', 'm1.small', '--release', 'yoga'])
    expect(bad.exitCode).toBe(2)
  })
})

describe('simulate migrate', () => {
  it('a 2025.1 instance moves to the newest hypervisor; as Zed, to the first of the equal hosts', async () => {
    const b = new CloudBuilder({seed: 3})
    b.addCell('cell1')
    b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 10})
    for (const host of ['cmp-1', 'cmp-2', 'cmp-3', 'cmp-4']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 24576, local_gb: 500, ram_allocation_ratio: 1.0})
    const uuid = b.addInstance('cmp-1', 'm1.small', {az: null}).row.uuid
    const s = b.build()
    const versions: Record<string, number> = {'cmp-1': 6002000, 'cmp-2': 6002000, 'cmp-3': 9001000, 'cmp-4': 6002000}
    for (const cn of s.nova.compute_nodes) cn.hypervisor_version = versions[cn.host as string] as number
    s.release = cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), {
      c: databaseRelease('nova', '2903cd72dc14', {serviceVersion: null}),
    })
    const file = join(await mkdtemp(join(tmpdir(), 'cloudctl-release-mig-')), 'mig.json')
    await writeSnapshotFile(s, file)
    const run = async (...extra: string[]) => {
      const r = await cloudctl(['simulate', 'migrate', '--snapshot', file, '--instance', uuid, '--json', ...extra])
      expect(r.exitCode, r.stderr).toBe(0)
      return JSON.parse(r.stdout) as {destination: {host: string} | null; scheduler_release: {release: string}}
    }
    const epoxy = await run()
    expect(epoxy.scheduler_release.release).toBe('2025.1')
    expect(epoxy.destination?.host).toBe('cmp-3')
    const zed = await run('--release', 'zed')
    expect(zed.scheduler_release.release).toBe('zed')
    expect(zed.destination?.host).toBe('cmp-2')
  })
})

describe('simulate capacity', () => {
  it('says which release it simulated', async () => {
    const r = await cloudctl(['simulate', 'capacity', '--snapshot', files.epoxy, '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect((JSON.parse(r.stdout) as Doc).scheduler_release.release).toBe('2025.1')
  })
})
