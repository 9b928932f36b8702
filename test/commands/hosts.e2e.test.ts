import {parse as parseYaml} from 'yaml'
import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// cloudctl hosts list through the built CLI (npm run build first), checked against the demo file itself.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

interface DemoFile {
  nova: {compute_nodes: Array<{host: string; hypervisor_hostname: string; deleted: number; vcpus: number; vcpus_used: number; uuid: string}>; services: Array<{host: string; binary: string; disabled: boolean | number; deleted: number}>}
  nova_api: {aggregates: Array<{name: string; hosts: string[]; metadata: Record<string, string>}>}
}

describe('cloudctl hosts list', () => {
  it('lists every live compute node with its provider, AZ, aggregates and usage', async () => {
    const {readFileSync} = await import('node:fs')
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as DemoFile
    const r = await cloudctl(['hosts', 'list', ...DEMO, '--json'])
    expect(r.exitCode).toBe(0)
    const {hosts} = JSON.parse(r.stdout) as {hosts: Array<{host: string; node: string; provider_uuid: string | null; availability_zone: string; aggregates: string[]; service_status: string | null; vcpus: {used: number; total: number}}>}
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
    expect(v.stdout.trim().split('\n')).toHaveLength(hosts.length)
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
    const demo = parseYaml(readFileSync('examples/demo-cloud.yaml', 'utf8')) as {placement: {inventories: Array<{resource_provider_id: number; resource_class_id: number; total: number; reserved: number; allocation_ratio: number}>; resource_providers: Array<{id: number; uuid: string}>}}
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
    writeFileSync(join(dir, 'nova.conf'), '[DEFAULT]\ndefault_availability_zone = zone-x\n')
    const zoneOf = async (extra: string[]) => {
      const r = await cloudctl(['hosts', 'list', '--snapshot', join(dir, 'cloud.json'), ...extra, '--json'])
      expect(r.exitCode).toBe(0)
      return (JSON.parse(r.stdout) as {hosts: Array<{host: string; availability_zone: string}>}).hosts.find((h) => h.host === host)?.availability_zone
    }
    expect(await zoneOf([])).toBe('nova')
    expect(await zoneOf(['--nova-conf', join(dir, 'nova.conf')])).toBe('zone-x')
  })
})
