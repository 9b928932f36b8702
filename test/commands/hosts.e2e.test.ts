import {parse as parseYaml} from 'yaml'
import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// cloudctl hosts list through the built CLI (npm run build first), checked against the demo file itself.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

interface DemoFile {
  nova: {
    compute_nodes: Array<{host: string; hypervisor_hostname: string; deleted: number; vcpus: number; vcpus_used: number; uuid: string}>
    services: Array<{host: string; binary: string; disabled: boolean | number; deleted: number}>
  }
  nova_api: {aggregates: Array<{name: string; hosts: string[]; metadata: Record<string, string>}>}
}

describe('cloudctl hosts list', () => {
  it('lists every live compute node with its provider, AZ, aggregates and usage', async () => {
    const {readFileSync} = await import('node:fs')
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as DemoFile
    const r = await cloudctl(['hosts', 'list', ...DEMO, '--json'])
    expect(r.exitCode).toBe(0)
    const all = (
      JSON.parse(r.stdout) as {
        hosts: Array<{
          host: string
          node: string
          service_state: string
          provider_uuid: string | null
          availability_zone: string
          aggregates: string[]
          service_status: string | null
          vcpus: {used: number; total: number}
        }>
      }
    ).hosts
    const hosts = all.filter((h) => h.service_state !== 'no compute node')
    const live = demo.nova.compute_nodes.filter((cn) => cn.deleted === 0)
    expect(hosts.map((h) => h.node).sort()).toEqual(live.map((cn) => cn.hypervisor_hostname).sort())
    for (const cn of live) {
      const h = hosts.find((x) => x.node === cn.hypervisor_hostname)!
      expect(h.vcpus).toMatchObject({used: cn.vcpus_used, total: cn.vcpus})
      const aggs = demo.nova_api.aggregates.filter((a) => a.hosts.includes(cn.host))
      expect(h.aggregates.sort()).toEqual(aggs.map((a) => a.name).sort())
      expect(h.availability_zone).toBe(aggs.find((a) => a.metadata.availability_zone)?.metadata.availability_zone ?? 'nova')
    }
    const v = await cloudctl(['hosts', 'list', ...DEMO, '-f', 'value', '-c', 'host', '-c', 'cell'])
    expect(v.stdout.trim().split('\n')).toHaveLength(all.length)
  })

  // Issue 29 item 14: the providers `--why` and `audit providers` call stale are in the list too.
  it('lists a provider with no compute node (deleted node, renamed hypervisor) as a "no compute node" row, one line at 80 columns', async () => {
    const {readFileSync, writeFileSync, mkdtempSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    type Rp = {id: number; uuid: string; name: string | null; parent_provider_id: number | null; root_provider_id?: number}
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as DemoFile & {
      placement: {resource_providers: Rp[]}
      cells: Array<{uuid: string; name: string; status: string}>
    }
    // The demo's cmp-r1-04: compute node deleted, provider left with allocations.
    const deleted = demo.nova.compute_nodes.find((cn) => cn.deleted !== 0)!
    const rpOf = (uuid: string) => demo.placement.resource_providers.find((rp) => rp.uuid === uuid)!
    type Row = {
      host: string | null
      node: string | null
      cell: string | null
      service_state: string
      provider_uuid: string | null
      availability_zone: string | null
      vcpus: {used: number | null; placement_capacity: number | null}
    }
    const list = async (file: string, extra: string[] = []) => {
      const r = await cloudctl(['hosts', 'list', '--snapshot', file, '--json', ...extra])
      expect(r.exitCode, r.stderr).toBe(0)
      return (JSON.parse(r.stdout) as {hosts: Row[]}).hosts
    }
    const demoRows = await list('examples/demo-cloud.yaml')
    const stale = demoRows.filter((h) => h.service_state === 'no compute node')
    expect(stale).toEqual([
      expect.objectContaining({
        host: deleted.host,
        node: rpOf(deleted.uuid).name,
        cell: 'cell1',
        provider_uuid: deleted.uuid,
        availability_zone: null,
        vcpus: expect.objectContaining({used: null}),
      }),
    ])
    expect(stale[0].vcpus.placement_capacity).toBeGreaterThan(0)
    // The provider.uuid-mismatch provider carries a live node's name: that node's, not an orphan.
    expect(demoRows.filter((h) => h.service_state === 'no compute node' && h.node === 'cmp-r2-05.cloud.example.com')).toEqual([])

    // A renamed hypervisor's old provider (no compute node row at all has its uuid), and a sharing provider that must not be listed.
    const maxId = Math.max(...demo.placement.resource_providers.map((rp) => rp.id))
    const renamed: Rp = {
      ...rpOf(deleted.uuid),
      id: maxId + 1,
      uuid: 'a7d5bb1e-0000-4000-8000-00000000c0de',
      name: 'old-name.example.com',
      parent_provider_id: null,
      root_provider_id: maxId + 1,
    }
    demo.placement.resource_providers.push(renamed)
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-hosts-orphans-'))
    writeFileSync(join(dir, 'cloud.json'), JSON.stringify(demo))
    const rows = await list(join(dir, 'cloud.json'))
    expect(
      rows
        .filter((h) => h.service_state === 'no compute node')
        .map((h) => h.node)
        .sort(),
    ).toEqual([rpOf(deleted.uuid).name, 'old-name.example.com'].sort())
    expect(rows.find((h) => h.node === 'old-name.example.com')).toMatchObject({host: null, cell: null, provider_uuid: renamed.uuid})
    // --cell lists a cell's compute nodes: a provider without one belongs to no cell.
    expect((await list(join(dir, 'cloud.json'), ['--cell', 'cell1'])).some((h) => h.service_state === 'no compute node')).toBe(false)

    // The same declared columns with and without them.
    const header = async (file: string) => (await cloudctl(['hosts', 'list', '--snapshot', file, '-f', 'csv'])).stdout.split('\n')[0]
    expect(await header(join(dir, 'cloud.json'))).toBe(await header('examples/demo-cloud.yaml'))

    const human = await cloudctl(['hosts', 'list', '--snapshot', join(dir, 'cloud.json'), '--max-width', '80'], {env: {COLUMNS: '80'}})
    expect(human.exitCode).toBe(0)
    const lines = human.stdout.split('\n')
    for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(80)
    const staleLines = lines.filter((l) => /│ stale /.test(l))
    expect(staleLines).toHaveLength(2)
    // One line each: the next line is a rule or the table's end, not a wrapped remainder.
    for (const l of staleLines) expect(lines[lines.indexOf(l) + 1]).toMatch(/^[├└]/)
    expect(human.stdout).toContain('stale: a provider with no compute node; see `cloudctl audit providers`.')
    expect(human.stdout).not.toContain('Not read:')

    // A cell that could not be read is not empty: the list says a "stale" one may have its node there.
    const down = {...demo, cells: demo.cells.map((c) => (c.name === 'cell2' ? {...c, status: 'unavailable'} : c))}
    writeFileSync(join(dir, 'down.json'), JSON.stringify(down))
    const d = await cloudctl(['hosts', 'list', '--snapshot', join(dir, 'down.json'), '--max-width', '80'])
    expect(d.exitCode, d.stderr).toBe(0)
    expect(d.stdout).toContain('Not read: cell cell2; a "stale" provider may have its compute node there.')
  })

  it('is where the --host hints point', async () => {
    const a = await cloudctl(['audit', 'all', ...DEMO, '--host', 'no-such-host'])
    expect(a.exitCode).toBe(2)
    expect(a.stderr).toContain('See `cloudctl hosts list` for the hosts.')
    const r = await cloudctl(['repair', 'pinning', ...DEMO, '--host', 'no-such-host'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('See `cloudctl hosts list` for the hosts.')
  })

  it("shows placement's capacity as a provider summary does: int((total - reserved) x ratio), the FLOAT ratio read as placement reads it", async () => {
    const {readFileSync, writeFileSync, mkdtempSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as {
      placement: {
        inventories: Array<{resource_provider_id: number; resource_class_id: number; total: number; reserved: number; allocation_ratio: number}>
        resource_providers: Array<{id: number; uuid: string}>
      }
    }
    // VCPU is resource class 0; 10 x 0.9 is 9 for placement, though MySQL stores 0.9 as 0.8999999761581421.
    const inv = demo.placement.inventories.find((i) => i.resource_class_id === 0)!
    Object.assign(inv, {total: 10, reserved: 0, allocation_ratio: Math.fround(0.9)})
    const rpUuid = demo.placement.resource_providers.find((p) => p.id === inv.resource_provider_id)!.uuid
    const file = join(mkdtempSync(join(tmpdir(), 'cloudctl-hosts-')), 'cloud.json')
    writeFileSync(file, JSON.stringify(demo))
    const r = await cloudctl(['hosts', 'list', '--snapshot', file, '--json'])
    expect(r.exitCode).toBe(0)
    const {hosts} = JSON.parse(r.stdout) as {hosts: Array<{provider_uuid: string | null; vcpus: {placement_capacity: number | null}}>}
    expect(hosts.find((h) => h.provider_uuid === rpUuid)!.vcpus.placement_capacity).toBe(9)
  })

  it("puts a host in no zone aggregate in nova.conf's default_availability_zone, as nova-api does", async () => {
    const {readFileSync, writeFileSync, mkdtempSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as DemoFile
    const host = demo.nova.compute_nodes.find((cn) => cn.deleted === 0)!.host
    for (const a of demo.nova_api.aggregates) if (a.metadata.availability_zone) a.hosts = a.hosts.filter((h) => h !== host)
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-hosts-az-'))
    writeFileSync(join(dir, 'cloud.json'), JSON.stringify(demo))
    // Substituted as oslo.config does: nova-api and the scheduler both see zone-10.0.0.11.
    writeFileSync(join(dir, 'nova.conf'), '[DEFAULT]\nmy_ip = 10.0.0.11\ndefault_availability_zone = zone-$my_ip\n')
    const zoneOf = async (extra: string[]) => {
      const r = await cloudctl(['hosts', 'list', '--snapshot', join(dir, 'cloud.json'), ...extra, '--json'])
      expect(r.exitCode).toBe(0)
      return (JSON.parse(r.stdout) as {hosts: Array<{host: string; availability_zone: string}>}).hosts.find((h) => h.host === host)?.availability_zone
    }
    expect(await zoneOf([])).toBe('nova')
    expect(await zoneOf(['--nova-conf', join(dir, 'nova.conf')])).toBe('zone-10.0.0.11')
    // The scheduler configuration's reading (simulate capacity's per-host zones) is the same one.
    const r = await cloudctl(['simulate', 'capacity', '--snapshot', join(dir, 'cloud.json'), '--nova-conf', join(dir, 'nova.conf'), '--per-host', '--json'])
    expect(r.exitCode).toBe(0)
    const capacity = JSON.parse(r.stdout) as {flavors: Array<{hosts?: Array<{host: string; az: string}>}>}
    const zones = new Set(capacity.flavors.flatMap((f) => (f.hosts ?? []).filter((h) => h.host === host).map((h) => h.az)))
    expect([...zones]).toEqual(['zone-10.0.0.11'])
  })
})
