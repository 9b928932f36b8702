import {describe, expect, it} from 'vitest'

import {auditExitCode, runChecks} from '../../src/lib/checks/index.js'
import type {Finding} from '../../src/lib/domain/finding.js'
import {hostNuma, instanceNuma, MiniCloud, numaCell, SMALL, testUuid} from './mini-cloud.js'

const PINNED = {name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}}

/** Two compute hosts, a pinned host, instances, an aggregate: consistent everywhere. */
function base() {
  const c = new MiniCloud()
  const h1 = c.host('cmp1')
  const h2 = c.host('cmp2')
  const hp = c.host('cmp3', {numa: hostNuma([numaCell(0, [4, 5, 6, 7], [4, 5]), numaCell(1, [12, 13, 14, 15], [])]), pcpus: 8})
  const i1 = c.instance(h1)
  const i2 = c.instance(h1, {name: 'm1.big', vcpus: 4, memory_mb: 8192, root_gb: 40, ephemeral_gb: 10, swap: 1500})
  const i3 = c.instance(h2, SMALL, {bfv: true})
  const ip = c.instance(hp, PINNED, {numa: instanceNuma([{id: 0, pins: {0: 4, 1: 5}}])})
  const agg = c.aggregate('az1-agg', [h1, h2], {availability_zone: 'az1'})
  return {c, h1, h2, hp, i1, i2, i3, ip, agg}
}

type Base = ReturnType<typeof base>

const codes = (fs: Finding[]) => fs.map((f) => f.code).sort()

describe('audit checks on a consistent cloud', () => {
  it('reports nothing and exits 0', () => {
    const report = runChecks(base().c.build())
    expect(report.findings).toEqual([])
    expect(auditExitCode(report)).toBe(0)
    expect(report.counts.total).toBe(0)
  })
})

interface Case {
  name: string
  code: string
  plant: (b: Base) => void
  subject: (b: Base) => Partial<Finding['subject']>
  evidence?: (b: Base, f: Finding) => void
}

const cases: Case[] = [
  {
    name: 'an instance soft-deleted in its cell keeps its allocation (seed 004)',
    code: 'allocation.consumer-deleted',
    plant: ({i1}) => {
      i1.deleted = i1.id
      i1.deleted_at = '2024-05-30 10:00:00'
      i1.vm_state = 'deleted'
    },
    subject: ({i1, h1}) => ({consumer_uuid: i1.uuid, provider_uuid: h1.rp.uuid, host: 'cmp1'}),
    evidence: ({c}, f) => {
      const ids = (f.evidence.allocations as Array<{id: number}>).map((a) => a.id).sort()
      const want = c.snap.placement.allocations.filter((a) => a.consumer_id === f.subject.consumer_uuid).map((a) => a.id).sort()
      expect(ids).toEqual(want)
      expect(f.evidence.provider).toMatchObject({generation: 1})
    },
  },
  {
    name: 'an allocation whose consumer is nowhere',
    code: 'allocation.consumer-unknown',
    plant: ({c, h2}) => {
      const ghost = testUuid('9405')
      c.consumer(ghost)
      c.allocate(h2.rp, ghost, 0, 1)
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.uuid, host: 'cmp2'}),
  },
  {
    name: 'a confirmed migration still holds the source allocation',
    code: 'allocation.migration-finished',
    plant: ({c, h1, h2, i3}) => {
      const m = c.migration(i3, h1.cn, h2.cn, 'confirmed', 'resize')
      c.consumer(m.uuid as string)
      c.allocate(h1.rp, m.uuid as string, 0, 2)
    },
    subject: ({h1, i3}) => ({provider_uuid: h1.rp.uuid, instance_uuid: i3.uuid}),
  },
  {
    name: 'a live instance holds an allocation on another node without a migration',
    code: 'allocation.wrong-provider',
    plant: ({c, h2, i1}) => {
      c.allocate(h2.rp, i1.uuid, 0, 1)
    },
    subject: ({h2, i1}) => ({provider_uuid: h2.rp.uuid, consumer_uuid: i1.uuid, host: 'cmp2'}),
  },
  {
    name: 'a done evacuation left the source allocation',
    code: 'allocation.evacuation-leftover',
    plant: ({c, h1, h2, i1}) => {
      // i1 was evacuated from cmp2 to cmp1: the source keeps a copy under the instance uuid.
      c.migration(i1, h2.cn, h1.cn, 'done', 'evacuation')
      c.allocate(h2.rp, i1.uuid, 0, 2)
      c.allocate(h2.rp, i1.uuid, 1, 2048)
      c.allocate(h2.rp, i1.uuid, 2, 20)
    },
    subject: ({h2, i1}) => ({provider_uuid: h2.rp.uuid, consumer_uuid: i1.uuid}),
  },
  {
    name: 'a live instance with no allocation at all',
    code: 'allocation.missing',
    plant: ({c, i2}) => {
      c.snap.placement.allocations = c.snap.placement.allocations.filter((a) => a.consumer_id !== i2.uuid)
    },
    subject: ({i2, h1}) => ({instance_uuid: i2.uuid, provider_uuid: h1.rp.uuid}),
  },
  {
    name: 'allocation amounts that differ from the flavor (swap 1500 MB rounds up to 2 GB)',
    code: 'allocation.amount-mismatch',
    plant: ({c, i2}) => {
      const disk = c.snap.placement.allocations.find((a) => a.consumer_id === i2.uuid && a.resource_class_id === 2)
      if (!disk) throw new Error('fixture')
      disk.used = 50 // 40 root + 10 ephemeral, forgetting swap
    },
    subject: ({i2}) => ({instance_uuid: i2.uuid}),
    evidence: (_b, f) => expect(f.evidence.differences).toEqual({DISK_GB: {expected: 52, allocated: 50}}),
  },
  {
    name: 'a consumer without a consumers row',
    code: 'allocation.consumer-incomplete',
    plant: ({c, i3}) => {
      c.snap.placement.consumers = c.snap.placement.consumers.filter((x) => x.uuid !== i3.uuid)
    },
    subject: ({i3}) => ({consumer_uuid: i3.uuid, instance_uuid: i3.uuid}),
  },
  {
    name: 'a provider whose compute node was deleted (compute service delete, seed 004)',
    code: 'provider.stale',
    plant: ({c}) => {
      const h = c.host('cmp9')
      h.cn.deleted = h.cn.id
      const svc = c.snap.nova.services.find((s) => s.host === 'cmp9')
      if (svc) svc.deleted = svc.id
      c.snap.nova_api.host_mappings = c.snap.nova_api.host_mappings.filter((hm) => hm.host !== 'cmp9')
    },
    subject: () => ({node: 'cmp9'}),
    evidence: (_b, f) => expect(f.evidence.cause).toBe('compute-node-deleted'),
  },
  {
    name: 'a compute node recreated with a new uuid while the old provider keeps its name (FQDN case)',
    code: 'provider.uuid-mismatch',
    plant: ({h2}) => {
      h2.cn.uuid = testUuid('beef')
    },
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.uuid}),
  },
  {
    name: 'a live compute node with no provider',
    code: 'provider.missing',
    plant: ({c, h2}) => {
      c.snap.placement.resource_providers = c.snap.placement.resource_providers.filter((rp) => rp.id !== h2.rp.id)
      c.snap.placement.inventories = c.snap.placement.inventories.filter((i) => i.resource_provider_id !== h2.rp.id)
      c.snap.placement.allocations = c.snap.placement.allocations.filter((a) => a.resource_provider_id !== h2.rp.id)
      c.snap.placement.resource_provider_aggregates = c.snap.placement.resource_provider_aggregates.filter((a) => a.resource_provider_id !== h2.rp.id)
      // the instance on it now has no allocation either: keep this case to the provider itself
      c.snap.nova.instances = c.snap.nova.instances.filter((i) => i.host !== 'cmp2')
      c.snap.nova_api.instance_mappings = c.snap.nova_api.instance_mappings.filter((m) => c.snap.nova.instances.some((i) => i.uuid === m.instance_uuid))
    },
    subject: ({h2}) => ({host: 'cmp2', node: h2.cn.hypervisor_hostname as string}),
  },
  {
    name: 'two providers for one hostname (short name and FQDN)',
    code: 'provider.duplicate-name',
    plant: ({c}) => {
      c.snap.placement.resource_providers.push({id: 900, uuid: testUuid('d0b1'), name: 'cmp1.example.org', generation: 3, root_provider_id: 900, parent_provider_id: null})
    },
    subject: ({h1}) => ({host: 'cmp1', provider_uuid: undefined as unknown as string, node: h1.cn.hypervisor_hostname as string}),
  },
  {
    name: 'usage above (total - reserved) x allocation_ratio',
    code: 'provider.over-capacity',
    plant: ({c, h2}) => {
      const inv = c.snap.placement.inventories.find((i) => i.resource_provider_id === h2.rp.id && i.resource_class_id === 1)
      if (!inv) throw new Error('fixture')
      inv.allocation_ratio = 0.03 // (65536 - 512) x 0.03 = 1950.72 < 2048 used; the node row stays right
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.uuid, host: 'cmp2'}),
  },
  {
    name: 'inventory totals that disagree with the compute node',
    code: 'provider.inventory-drift',
    plant: ({h2}) => {
      h2.cn.vcpus = 32
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.uuid, host: 'cmp2'}),
    evidence: (_b, f) => expect(f.evidence.drift).toMatchObject({VCPU: {inventory_total: 16, compute_node: 32}}),
  },
  {
    name: 'an instance with no instance_mapping',
    code: 'cell.instance-unmapped',
    plant: ({c, i1}) => {
      c.snap.nova_api.instance_mappings = c.snap.nova_api.instance_mappings.filter((m) => m.instance_uuid !== i1.uuid)
    },
    subject: ({i1}) => ({instance_uuid: i1.uuid, cell: 'cell1'}),
  },
  {
    name: 'a mapping with a NULL cell while the instance lives in cell1',
    code: 'cell.instance-mapped-wrong-cell',
    plant: ({c, i1}) => {
      const m = c.snap.nova_api.instance_mappings.find((x) => x.instance_uuid === i1.uuid)
      if (m) m.cell_id = null
    },
    subject: ({i1}) => ({instance_uuid: i1.uuid}),
  },
  {
    name: 'an instance live in cell0 and cell1 (seed 004)',
    code: 'cell.instance-duplicate',
    plant: ({c, i3}) => {
      c.snap.nova.instances.push({...i3, cell_uuid: c.cell0.uuid, id: 7000, host: null, node: null, vm_state: 'error'})
    },
    subject: ({i3}) => ({instance_uuid: i3.uuid}),
  },
  {
    name: 'a hidden copy (cross-cell resize) is not a duplicate, but an unmapped host is reported',
    code: 'cell.host-unmapped',
    plant: ({c, i3}) => {
      const cell2 = c.addCell('cell2')
      c.snap.nova.instances.push({...i3, cell_uuid: cell2.uuid, id: 7001, hidden: true})
      c.snap.nova_api.host_mappings = c.snap.nova_api.host_mappings.filter((hm) => hm.host !== 'cmp2')
    },
    subject: () => ({host: 'cmp2', cell: 'cell1'}),
  },
  {
    name: 'a host_mapping whose host has no service',
    code: 'cell.host-mapping-stale',
    plant: ({c}) => {
      c.snap.nova_api.host_mappings.push({id: 99, cell_id: c.cell1.id, host: 'gone-host'})
    },
    subject: () => ({host: 'gone-host'}),
  },
  {
    name: 'a host mapped to another cell than its service',
    code: 'cell.host-mapped-wrong-cell',
    plant: ({c}) => {
      const hm = c.snap.nova_api.host_mappings.find((x) => x.host === 'cmp1')
      if (hm) hm.cell_id = c.cell0.id
    },
    subject: () => ({host: 'cmp1', cell: 'cell1'}),
  },
  {
    name: 'a build_request for an instance that exists',
    code: 'cell.build-request-stale',
    plant: ({c, i1}) => {
      c.snap.nova_api.build_requests.push({id: 5, instance_uuid: i1.uuid, project_id: 'p-1', created_at: null})
    },
    subject: ({i1}) => ({instance_uuid: i1.uuid}),
  },
  {
    name: 'a mapping of an instance deleted months ago (the map_instances marker is not a fault)',
    code: 'cell.instance-mapping-stale',
    plant: ({c}) => {
      const u = testUuid('01d0')
      c.snap.nova.instances.push({...c.snap.nova.instances[0], uuid: u, id: 8000, deleted: 8000, deleted_at: '2023-01-01 00:00:00', vm_state: 'deleted'})
      c.snap.nova_api.instance_mappings.push({id: 500, instance_uuid: u, cell_id: c.cell1.id, project_id: 'p-1', user_id: 'u-1', queued_for_delete: true, created_at: null})
      c.snap.nova_api.instance_mappings.push({id: 501, instance_uuid: testUuid('ma4e'), cell_id: null, project_id: 'INSTANCE_MIGRATION_MARKER', user_id: null, queued_for_delete: false, created_at: null})
    },
    subject: () => ({cell: 'cell1'}),
  },
  {
    name: 'pCPUs pinned with no instance (seed 004: NUMATopologyFilter returned 0 hosts)',
    code: 'pinning.leaked',
    plant: ({hp}) => {
      hp.cn.numa_topology = hostNuma([numaCell(0, [4, 5, 6, 7], [4, 5, 6, 7]), numaCell(1, [12, 13, 14, 15], [])])
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_b, f) => expect(f.evidence.cells).toMatchObject([{numa_cell: 0, leaked: [6, 7]}]),
  },
  {
    name: 'pins of a live instance missing from pinned_cpus',
    code: 'pinning.unaccounted',
    plant: ({hp}) => {
      hp.cn.numa_topology = hostNuma([numaCell(0, [4, 5, 6, 7], [4]), numaCell(1, [12, 13, 14, 15], [])])
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_b, f) => expect(f.evidence.unaccounted).toEqual([5]),
  },
  {
    name: 'one pCPU pinned by two instances',
    code: 'pinning.overlap',
    plant: ({c, hp}) => {
      c.instance(hp, PINNED, {numa: instanceNuma([{id: 0, pins: {0: 5, 1: 6}}])})
      hp.cn.numa_topology = hostNuma([numaCell(0, [4, 5, 6, 7], [4, 5, 6]), numaCell(1, [12, 13, 14, 15], [])])
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_b, f) => expect(f.evidence.overlap).toEqual([5]),
  },
  {
    name: 'pins outside the dedicated set',
    code: 'pinning.outside-dedicated-set',
    plant: ({hp}) => {
      hp.cn.numa_topology = hostNuma([numaCell(0, [5, 6, 7], [4, 5], [4]), numaCell(1, [12, 13, 14, 15], [])])
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
  },
  {
    name: 'placement PCPU usage that differs from the pins',
    code: 'pinning.placement-drift',
    plant: ({c, ip}) => {
      const a = c.snap.placement.allocations.find((x) => x.consumer_id === ip.uuid && x.resource_class_id === 14)
      if (!a) throw new Error('fixture')
      // the instance now asks for 3 PCPU (emulator threads isolated) and holds them, but pins 2
      a.used = 3
      const extra = ip.extra
      if (extra?.flavor) extra.flavor = extra.flavor.replace('"hw:cpu_policy":"dedicated"', '"hw:cpu_policy":"dedicated","hw:emulator_threads_policy":"isolate"')
    },
    subject: ({hp}) => ({host: 'cmp3', provider_uuid: hp.rp.uuid}),
  },
  {
    name: 'a compute node still counting a deleted instance (seed 000: it is a leak)',
    code: 'usage.node-drift',
    plant: ({c, h2}) => {
      c.build() // counters from the healthy state... then the row goes stale:
      c.freezeCounters = true
      h2.cn.vcpus_used += 8
      h2.cn.memory_mb_used += 16384
      h2.cn.free_ram_mb = h2.cn.memory_mb - h2.cn.memory_mb_used
    },
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.uuid}),
    evidence: (_b, f) => expect(f.evidence.drift).toMatchObject({vcpus_used: {diff: 8}, memory_mb_used: {diff: 16384}, free_ram_mb: {diff: -16384}}),
  },
  {
    name: 'negative free RAM that is overcommit within the allocation ratio (seed 000: not a leak)',
    code: 'usage.negative-free',
    plant: ({c, h2}) => {
      // 1024 MB host, 512 reserved, ram_allocation_ratio 4: capacity (1024 - 512) x 4 + 512 = 2560 = used
      h2.cn.memory_mb = 1024
      const inv = c.snap.placement.inventories.find((i) => i.resource_provider_id === h2.rp.id && i.resource_class_id === 1)
      if (inv) {
        inv.total = 1024
        inv.allocation_ratio = 4
      }
    },
    subject: () => ({host: 'cmp2'}),
    evidence: (_b, f) => {
      expect(f.severity).toBe('info')
      expect(f.evidence.negatives).toHaveProperty('free_ram_mb')
    },
  },
  {
    name: 'a host in a nova aggregate whose provider is not in the placement aggregate',
    code: 'aggregate.missing-in-placement',
    plant: ({c, h2}) => {
      c.snap.placement.resource_provider_aggregates = c.snap.placement.resource_provider_aggregates.filter((x) => x.resource_provider_id !== h2.rp.id)
    },
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.uuid, aggregate: 'az1-agg'}),
  },
  {
    name: 'a provider in the placement aggregate of a nova aggregate that does not list its host',
    code: 'aggregate.extra-in-placement',
    plant: ({c, hp}) => {
      c.snap.placement.resource_provider_aggregates.push({resource_provider_id: hp.rp.id, aggregate_id: 1})
    },
    subject: ({hp}) => ({host: 'cmp3', provider_uuid: hp.rp.uuid}),
  },
  {
    name: 'a host in two availability zones',
    code: 'aggregate.az-conflict',
    plant: ({c, h1}) => {
      c.aggregate('az2-agg', [h1], {availability_zone: 'az2'})
    },
    subject: () => ({host: 'cmp1'}),
  },
  {
    name: 'an unreadable NUMA topology blob is a finding, not a crash',
    code: 'snapshot.unreadable-blob',
    plant: ({hp}) => {
      hp.cn.numa_topology = '{"nova_object.data": {"cells": [{"id": 0, "cpuset": "oops"'
    },
    subject: () => ({host: 'cmp3'}),
  },
]

describe('each planted fault is reported exactly, with its subject', () => {
  it.each(cases)('$code: $name', ({code, plant, subject, evidence}) => {
    const b = base()
    plant(b)
    const report = runChecks(b.c.build())
    expect(codes(report.findings), JSON.stringify(report.findings.map((x) => [x.code, x.message]))).toEqual([code])
    const f = report.findings[0]
    const want = Object.fromEntries(Object.entries(subject(b)).filter(([, v]) => v !== undefined))
    expect(f.subject).toMatchObject(want)
    expect(f.message.length).toBeGreaterThan(10)
    evidence?.(b, f)
    expect(auditExitCode(report)).toBe(f.severity === 'info' ? 0 : 3)
  })
})

describe('docs/checks.md', () => {
  it('documents every code the checks can emit, with its severity', async () => {
    const {readFileSync} = await import('node:fs')
    const {FINDING_CODES} = await import('../../src/lib/checks/index.js')
    const doc = readFileSync(new URL('../../docs/checks.md', import.meta.url), 'utf8')
    // A severity may carry its exception in parentheses: "error (info when the host's nova-compute is down)".
    // info|warning is written info\|warning (a bare | would split the markdown row).
    for (const [code, d] of Object.entries(FINDING_CODES)) expect(doc).toMatch(new RegExp(`\\| \`${code.replace(/\./g, '\\.')}\` \\| ${d.severity.replace('|', '\\\\\\|')}( \\([^|]*\\))? \\|`))
    const {readdirSync} = await import('node:fs')
    const root = new URL('../../src/lib/checks/', import.meta.url)
    const files = readdirSync(root, {recursive: true, encoding: 'utf8'}).filter((f) => f.endsWith('.ts'))
    const src = files.map((f) => readFileSync(new URL(f, root), 'utf8')).join('\n')
    const emitted = new Set([...src.matchAll(/'((?:allocation|provider|cell|pinning|usage|aggregate|snapshot)\.[a-z-]+)'/g)].map((m) => m[1]))
    expect([...emitted].filter((c) => !(c in FINDING_CODES))).toEqual([])
  })

  it('has one unit per code, in the folder of its check, in a file named after the code', async () => {
    const {readdirSync, readFileSync} = await import('node:fs')
    const {UNITS} = await import('../../src/lib/checks/index.js')
    expect(new Set(UNITS.map((u) => u.code)).size).toBe(UNITS.length)
    const root = new URL('../../src/lib/checks/', import.meta.url)
    for (const u of UNITS) {
      const file = `${u.check}/${u.code.slice(u.code.indexOf('.') + 1)}.ts`
      expect(readdirSync(new URL(`${u.check}/`, root)), u.code).toContain(file.slice(file.indexOf('/') + 1))
      expect(readFileSync(new URL(file, root), 'utf8'), file).toContain(`'${u.code}'`)
    }
  })

  it('has exactly the codes of the registry, each row with its summary and check, and every code an explanation', async () => {
    const {existsSync, readFileSync} = await import('node:fs')
    const {FINDING_CODES} = await import('../../src/lib/checks/index.js')
    const {CODE_EXPLANATIONS} = await import('../../src/lib/checks/explain.js')
    const doc = readFileSync(new URL('../../docs/checks.md', import.meta.url), 'utf8')
    const rows = new Map<string, {check: string; meaning: string}>()
    let section = ''
    for (const line of doc.slice(doc.indexOf('## Codes')).split('\n')) {
      const h = /^### (\w+)/.exec(line)
      if (h) section = h[1]
      const m = /^\| `([a-z]+\.[a-z-]+)` \| (?:\\\||[^|])+ \| (.+) \|$/.exec(line)
      if (m) rows.set(m[1], {check: section, meaning: m[2]})
    }
    expect([...rows.keys()].sort()).toEqual(Object.keys(FINDING_CODES).sort())
    for (const [code, d] of Object.entries(FINDING_CODES)) expect(rows.get(code), code).toEqual({check: d.check, meaning: d.summary})
    expect(Object.keys(CODE_EXPLANATIONS).sort()).toEqual(Object.keys(FINDING_CODES).sort())
    for (const [code, e] of Object.entries(CODE_EXPLANATIONS)) {
      expect(e.cause.length, code).toBeGreaterThan(40)
      expect(e.repair.length, code).toBeGreaterThan(20)
      if (e.runbook) expect(existsSync(new URL(`../../${e.runbook}`, import.meta.url)), e.runbook).toBe(true)
    }
  })
})
