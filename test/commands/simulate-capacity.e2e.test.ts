/**
 * End to end: the built CLI (`npm test` builds dist/ first) on the bundled demo cloud
 * (examples/README.md describes it; the incidents are in examples/demo-incidents.json).
 *
 * Hand counts used below, from the README's host shapes:
 * - a shared host (32 CPUs x 4.0, 128 GiB x 1.5 with 512 MB reserved, 1800 GB x 1.0), empty, takes
 *   min(128 / 4, 195840 / 8192, 1800 / 80) = min(32, 23, 22) = 22 m1.large;
 * - a pinned host has 4 dedicated CPUs per NUMA cell, so an m1.pinned (4 dedicated vCPUs, one
 *   NUMA cell) takes a whole cell: 2 per empty pinned host. The only pinned host with free PCPU in
 *   placement is pin-r1-02, whose pinned_cpus are stuck full: 0 fit with NUMATopologyFilter
 *   (examples/nova.conf enables it) and 2 once the stuck pins are repaired.
 */
import {readFileSync} from 'node:fs'
import {mkdtemp, readFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import type {CapacityResult as CapacityReport} from '../../src/lib/capacity/what-if.js'
import type {SimulateBootResult} from '../../src/commands/simulate/boot.js'
import {cloudctl, oneJsonDocument} from '../support/cli.js'
import type {JsonOf} from '../../src/lib/output/json-view.js'

type CapacityResult = JsonOf<CapacityReport>

const DEMO = 'examples/demo-cloud.yaml'
const CONF = 'examples/nova.conf'
const incidents = JSON.parse(readFileSync(new URL('../../examples/demo-incidents.json', import.meta.url), 'utf8')) as {
  pinned_leak: {host: string}
  host_died: {host: string; provider_uuid: string}
}

async function json(args: string[]): Promise<CapacityResult> {
  const r = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, ...args, '--json'])
  expect(r.exitCode, r.stderr).toBe(0)
  return oneJsonDocument(r.stdout) as CapacityResult
}

const flavor = (r: CapacityResult, name: string) => {
  const f = r.flavors.find((x) => x.flavor === name)
  if (!f) throw new Error(`no ${name} in the report`)
  return f
}

describe('cloudctl simulate capacity', () => {
  it('prints the engine count beside the division per flavor and per AZ, exit 0', async () => {
    const r = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, '--nova-conf', CONF])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/Capacity: additional instances that fit, 11 compute node\(s\)/)
    expect(r.stdout).toContain('NUMATopologyFilter')
    // Every public flavor of the demo, by default.
    for (const name of ['m1.tiny', 'm1.small', 'm1.medium', 'm1.large', 'm1.xlarge', 'm1.pinned', 'r1.large'])
      expect(r.stdout).toMatch(new RegExp(`│ ${name.replace('.', '\\.')} +│`))
    // m1.pinned: 0 fit, the division says 2 (pin-r1-02's PCPU inventory looks free).
    expect(r.stdout).toMatch(/│ m1\.pinned +│ +4 │ +8192 │ +40 │ +0 │ +2 │ +2 │/)
    expect(r.stdout).toContain('Per availability zone: fits (naive ÷)')
    expect(r.stdout).toMatch(/az1 \[5 hosts\].*az2 \[6 hosts\]/)
    // Not a TTY: no bars.
    expect(r.stdout).not.toContain('█')
  })

  it('--apply-repairs shows the capacity recovered from the seeded leaks and stuck pins', async () => {
    const r = await json(['--nova-conf', CONF, '--apply-repairs'])
    const s = r.scenario
    expect(s).not.toBeNull()
    const pinned = s?.flavors.find((f) => f.flavor === 'm1.pinned')
    expect(pinned).toMatchObject({before: 0, after: 2, change: 2})
    // The stuck pins: both NUMA cells of pin-r1-02, 4 dedicated CPUs each.
    expect(s?.repairs?.pins.map((p) => [p.host, p.numa_cell, p.released])).toEqual([
      [incidents.pinned_leak.host, 0, [4, 5, 6, 7]],
      [incidents.pinned_leak.host, 1, [12, 13, 14, 15]],
    ])
    // The leaks (incidents 1 and 2: VCPU 2 + 4, MEMORY_MB 4096 + 8192, DISK_GB 40 + 80) sit on the dead
    // host's stale provider: freed in placement, but no live compute node can use them.
    expect(s?.repairs?.freed).toEqual({VCPU: 6, MEMORY_MB: 12288, DISK_GB: 120})
    expect(s?.repairs?.freed_by_provider).toEqual([
      {provider: incidents.host_died.provider_uuid, name: incidents.host_died.host, schedulable: false, resources: {VCPU: 6, MEMORY_MB: 12288, DISK_GB: 120}},
    ])
    // Nothing else moves.
    for (const f of s?.flavors ?? []) if (f.flavor !== 'm1.pinned') expect(f.change, f.flavor).toBe(0)

    const text = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, '--nova-conf', CONF, '--apply-repairs', '--flavor', 'm1.pinned'])
    expect(text.exitCode).toBe(0)
    expect(text.stdout).toContain('Planned repairs (as if applied)')
    expect(text.stdout).toContain('stuck pinned CPUs released on pin-r1-02: NUMA cell 0: 4-7; NUMA cell 1: 12-15')
    expect(text.stdout).toContain('capacity recovered: m1.pinned 0 -> 2 (+2)')
  })

  it('without NUMATopologyFilter (Zed defaults) the stuck pins do not block: nothing to recover for m1.pinned', async () => {
    const r = await json(['--apply-repairs', '--flavor', 'm1.pinned'])
    expect(r.enabled_filters).not.toContain('NUMATopologyFilter')
    expect(r.scenario?.flavors).toEqual([expect.objectContaining({flavor: 'm1.pinned', before: 2, after: 2, change: 0})])
  })

  it('--per-host names what refuses the next instance on each host', async () => {
    const r = await json(['--nova-conf', CONF, '--flavor', 'm1.pinned', '--flavor', 'm1.large', '--per-host'])
    const byHost = Object.fromEntries((flavor(r, 'm1.pinned').hosts ?? []).map((h) => [h.host, h]))
    expect(byHost['pin-r1-02']).toMatchObject({fits: 0, naive: 2, limit: 'NUMA: no cell with 4 free dedicated CPUs'})
    expect(byHost['cmp-r1-01']?.limit).toBe('placement: no PCPU inventory')
    expect(byHost['cmp-r2-05.cloud.example.com']?.limit).toBe('no resource provider')
    const large = flavor(r, 'm1.large')
    expect(large.hosts?.reduce((n, h) => n + h.fits, 0)).toBe(large.fits)
    expect(r.host_usage?.length).toBe(11)
  })

  it('--add-hosts 2 --like cmp-r1-02 adds 22 m1.large per empty copy', async () => {
    const r = await json(['--flavor', 'm1.large', '--add-hosts', '2', '--like', 'cmp-r1-02', '--per-host'])
    const copies = flavor(r, 'm1.large').hosts?.filter((h) => h.host.startsWith('cmp-r1-02-copy-'))
    expect(copies?.map((h) => [h.host, h.az, h.fits, h.limit])).toEqual([
      ['cmp-r1-02-copy-1', 'az1', 22, 'DISK_GB exhausted'],
      ['cmp-r1-02-copy-2', 'az1', 22, 'DISK_GB exhausted'],
    ])
    expect(r.scenario?.flavors[0]?.change).toBe(44)
    expect(r.scenario?.hosts_before).toBe(11)
    expect(r.scope.hosts).toBe(13)
  })

  it('--drain re-places the host instances first and reports every one of them', async () => {
    const snap = (await import('yaml')).parse(await readFile(DEMO, 'utf8')) as {
      nova: {instances: Array<{host: string | null; deleted: number; vm_state: string}>}
    }
    const onHost = snap.nova.instances.filter(
      (i) => i.host === 'cmp-r1-01' && i.deleted === 0 && i.vm_state !== 'deleted' && i.vm_state !== 'shelved_offloaded',
    ).length
    const r = await json(['--flavor', 'm1.large', '--drain', 'cmp-r1-01', '--per-host'])
    const d = r.scenario?.drains[0]
    expect(d?.host).toBe('cmp-r1-01')
    expect(d?.instances).toBe(onHost)
    expect((d?.replaced.length ?? 0) + (d?.failed.length ?? 0)).toBe(onHost)
    expect(flavor(r, 'm1.large').hosts?.find((h) => h.host === 'cmp-r1-01')).toMatchObject({fits: 0, limit: 'placement: disabled (COMPUTE_STATUS_DISABLED)'})
    expect(r.scenario?.flavors[0]?.change).toBeLessThan(0)
  })

  it('--mix boots the flavors in proportion', async () => {
    const r = await json(['--mix', 'm1.small=50%,m1.large=50%'])
    const m = r.mix
    expect(m?.by_flavor.map((x) => x.flavor)).toEqual(['m1.small', 'm1.large'])
    const [small, large] = m?.by_flavor.map((x) => x.fits) ?? []
    // Alternating from m1.small: equal counts, or one more small when the next large does not fit.
    expect((small ?? 0) - (large ?? 0)).toBeGreaterThanOrEqual(0)
    expect((small ?? 0) - (large ?? 0)).toBeLessThanOrEqual(1)
    expect(m?.total).toBe((small ?? 0) + (large ?? 0))
    expect(m?.stopped_by).not.toBeNull()
    expect(r.flavors).toEqual([])
  })

  it('--html writes a standalone page with a chart per AZ', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cloudctl-cap-'))
    const file = join(dir, 'capacity.html')
    const r = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, '--nova-conf', CONF, '--html', file])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain(`HTML report written to ${file}`)
    const html = await readFile(file, 'utf8')
    expect(html.match(/<svg class="chart chart-flavors"/g)).toHaveLength(2)
    expect(html.match(/<svg class="chart chart-hosts"/g)).toHaveLength(2)
    // Nothing to fetch: no external URL besides the SVG namespace.
    expect(html.replaceAll('http://www.w3.org/2000/svg', '')).not.toMatch(/(?:src|href)=|https?:\/\//)
  })

  it('an unknown host or aggregate is one line with a hint, exit 2, also with --json', async () => {
    for (const args of [
      ['--disable-host', 'nope'],
      ['--drain', 'nope'],
      ['--add-hosts', '1', '--like', 'nope'],
      ['--set-allocation-ratio', 'VCPU=2.0@nope'],
      ['--aggregate', 'nope'],
    ]) {
      const r = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, ...args])
      expect(r.exitCode, args.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^Error: .*nope/m)
      expect(r.stderr).toMatch(/^Hint: (Hosts|Aggregates): /m)
      expect(r.stderr).not.toMatch(/\n\s+at /)
    }
    const j = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, '--drain', 'nope', '--json'])
    expect(j.exitCode).toBe(2)
    expect(oneJsonDocument(j.stdout)).toHaveProperty('error.message', '--drain: host "nope" is not a live compute node of this snapshot')
    const pair = await cloudctl(['simulate', 'capacity', '--snapshot', DEMO, '--add-hosts', '2'])
    expect(pair.exitCode).toBe(2)
    expect(pair.stderr).toContain('Error: --add-hosts and --like go together')
  })
})

describe('cloudctl simulate boot with what-if flags', () => {
  it('--apply-repairs turns the seed-004 NoValidHost into a placement on pin-r1-02', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', DEMO, '--nova-conf', CONF, '--flavor', 'm1.pinned', '--apply-repairs', '--json'])
    expect(r.exitCode).toBe(0)
    const doc = oneJsonDocument(r.stdout) as JsonOf<SimulateBootResult>
    expect(doc.scenario?.before.placed_all).toBe(false)
    expect(doc.scenario?.before.summary).toContain('NUMATopologyFilter')
    expect(doc.instances[0]?.host).toBe(incidents.pinned_leak.host)
    const plain = await cloudctl(['simulate', 'boot', '--snapshot', DEMO, '--nova-conf', CONF, '--flavor', 'm1.pinned', '--apply-repairs'])
    expect(plain.stdout).toMatch(/^What-if$/m)
    expect(plain.stdout).toContain('repairs: rewrote pinned_cpus of 2 NUMA cell(s)')
    expect(plain.stdout).toMatch(/on the snapshot as captured: NoValidHost/)
  })

  it('--disable-host of the only candidate gives NoValidHost, exit 3', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.pinned', '--disable-host', 'pin-r1-02'])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toContain('pin-r1-02: nova-compute disabled')
    expect(r.stdout).toMatch(/on the snapshot as captured: 1\/1 instance\(s\) placed/)
  })
})
