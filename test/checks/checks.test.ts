import {describe, expect, it} from 'vitest'

import {auditExitCode, runChecks} from '../../src/lib/checks/index.js'
import type {Finding} from '../../src/lib/domain/finding.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder, CONSUMER_TYPE_MIGRATION} from '../support/builders.js'

/** Two compute hosts, a pinned host, instances, an aggregate: consistent everywhere. */
function base() {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addFlavor({name: 'm1.big', vcpus: 4, memory_mb: 8192, root_gb: 40, ephemeral_gb: 10, swap: 1500})
  b.addFlavor({name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  const host = (name: string, extra: {cpu_dedicated_set?: string} = {}) =>
    b.addHost('cell1', {host: name, vcpus: 16, memory_mb: 65536, local_gb: 500, ...extra})
  const h1 = host('cmp1')
  const h2 = host('cmp2')
  // cell 0 dedicates pCPUs 4-7, cell 1 12-15; the pinned instance holds 4 and 5
  const hp = host('cmp3', {cpu_dedicated_set: '4-7,12-15'})
  const i1 = b.addInstance('cmp1', 'm1.small').row
  const i2 = b.addInstance('cmp1', 'm1.big').row
  const i3 = b.addInstance('cmp2', 'm1.small', {boot_from_volume: true}).row
  const ip = b.addInstance('cmp3', 'm1.pinned', {pin: [4, 5]}).row
  b.addAggregate({name: 'az1-agg', hosts: ['cmp1', 'cmp2'], metadata: {availability_zone: 'az1'}})
  return {b, h1, h2, hp, i1, i2, i3, ip}
}

type Base = ReturnType<typeof base>

const codes = (fs: Finding[]) => fs.map((f) => f.code).sort()
const cellId = (s: Snapshot, name: string) => s.cells.find((c) => c.name === name)!.id

describe('audit checks on a consistent cloud', () => {
  it('reports nothing and exits 0', () => {
    const report = runChecks(buildModel(base().b.build()))
    expect(report.findings).toEqual([])
    expect(auditExitCode(report)).toBe(0)
    expect(report.counts.total).toBe(0)
  })
})

interface Case {
  name: string
  code: string
  /** The fault as nova or placement would have made it, through the builder. */
  before?: (x: Base) => void
  /** The fault written into the built rows (what no API call would do). */
  plant?: (x: Base, s: Snapshot) => void
  subject: (x: Base) => Partial<Finding['subject']>
  evidence?: (x: Base, f: Finding, s: Snapshot) => void
}

const cases: Case[] = [
  {
    name: 'an instance soft-deleted in its cell keeps its allocation (seed 004)',
    code: 'allocation.consumer-deleted',
    before: ({b, i1}) => b.deleteInstance(i1.uuid, {keepAllocations: true}),
    subject: ({i1, h1}) => ({consumer_uuid: i1.uuid, provider_uuid: h1.rp.row.uuid, host: 'cmp1'}),
    evidence: ({h1}, f, s) => {
      const ids = (f.evidence.allocations as Array<{id: number}>).map((a) => a.id).sort()
      const want = s.placement.allocations
        .filter((a) => a.consumer_id === f.subject.consumer_uuid)
        .map((a) => a.id)
        .sort()
      expect(ids.length).toBeGreaterThan(0)
      expect(ids).toEqual(want)
      expect(f.evidence.provider).toMatchObject({uuid: h1.rp.row.uuid, generation: h1.rp.row.generation})
    },
  },
  {
    name: 'an allocation whose consumer is nowhere',
    code: 'allocation.consumer-unknown',
    before: ({b}) => b.addAllocations(b.newUuid(), 'cmp2', {VCPU: 1}),
    subject: ({h2}) => ({provider_uuid: h2.rp.row.uuid, host: 'cmp2'}),
  },
  {
    // nova's _delete_allocation_after_move got a 409: the migration went to error, the server was
    // deleted and instance_destroy soft-deleted the migration row with it; the allocation stayed.
    name: 'a migration soft-deleted with its instance still holds the source allocation',
    code: 'allocation.migration-finished',
    before: ({b, i3}) => {
      const m = b.addMigration(i3.uuid, {type: 'migration', status: 'error', dest: 'cmp1'})
      b.addAllocations(m.row.uuid as string, 'cmp2', {VCPU: 2}, {type: CONSUMER_TYPE_MIGRATION})
      b.deleteInstance(i3.uuid)
    },
    plant: (_x, s) => {
      for (const m of s.nova.migrations) m.deleted = m.id
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.row.uuid, host: 'cmp2'}),
    evidence: (_x, f) => {
      expect(f.message).toMatch(/\(error, deleted with its instance \S+\) still holds VCPU=2/)
      expect((f.evidence as {migration: {deleted: number}}).migration.deleted).toBeGreaterThan(0)
    },
  },
  {
    name: 'a confirmed migration still holds the source allocation',
    code: 'allocation.migration-finished',
    before: ({b, i3}) => {
      const m = b.addMigration(i3.uuid, {type: 'resize', status: 'confirmed', dest: 'cmp1'})
      b.addAllocations(m.row.uuid as string, 'cmp2', {VCPU: 2}, {type: CONSUMER_TYPE_MIGRATION})
    },
    subject: ({h2, i3}) => ({provider_uuid: h2.rp.row.uuid, instance_uuid: i3.uuid}),
  },
  {
    name: 'a live instance holds an allocation on another node without a migration',
    code: 'allocation.wrong-provider',
    before: ({b, i1}) => b.addAllocations(i1.uuid, 'cmp2', {VCPU: 1}),
    subject: ({h2, i1}) => ({provider_uuid: h2.rp.row.uuid, consumer_uuid: i1.uuid, host: 'cmp2'}),
  },
  {
    name: 'a done evacuation left the source allocation',
    code: 'allocation.evacuation-leftover',
    before: ({b, i1}) => {
      // i1 was evacuated from cmp1 to cmp2: the source keeps a copy under the instance uuid.
      b.addMigration(i1.uuid, {type: 'evacuation', status: 'done', dest: 'cmp2'})
      b.addAllocations(i1.uuid, 'cmp1', {VCPU: 2, MEMORY_MB: 2048, DISK_GB: 20})
    },
    subject: ({h1, i1}) => ({provider_uuid: h1.rp.row.uuid, consumer_uuid: i1.uuid}),
  },
  {
    name: 'a live instance with no allocation at all',
    code: 'allocation.missing',
    before: ({b, i2}) => b.removeAllocations(i2.uuid),
    subject: ({i2, h1}) => ({instance_uuid: i2.uuid, provider_uuid: h1.rp.row.uuid}),
  },
  {
    name: 'allocation amounts that differ from the flavor (swap 1500 MB rounds up to 2 GB)',
    code: 'allocation.amount-mismatch',
    plant: ({b, i2}, s) => {
      const disk = s.placement.allocations.find((a) => a.consumer_id === i2.uuid && a.resource_class_id === b.rcId('DISK_GB'))
      if (!disk) throw new Error('fixture')
      disk.used = 50 // 40 root + 10 ephemeral, forgetting swap
    },
    subject: ({i2}) => ({instance_uuid: i2.uuid}),
    evidence: (_x, f) => expect(f.evidence.differences).toEqual({DISK_GB: {expected: 52, allocated: 50}}),
  },
  {
    name: 'a consumer without a consumers row',
    code: 'allocation.consumer-incomplete',
    plant: ({i3}, s) => {
      s.placement.consumers = s.placement.consumers.filter((x) => x.uuid !== i3.uuid)
    },
    subject: ({i3}) => ({consumer_uuid: i3.uuid, instance_uuid: i3.uuid}),
  },
  {
    name: 'a provider whose compute node was deleted (compute service delete, seed 004)',
    code: 'provider.stale',
    before: ({b}) => {
      b.addHost('cell1', {host: 'cmp9', vcpus: 16, memory_mb: 65536, local_gb: 500})
      b.deleteComputeService('cmp9', {keepProvider: true})
    },
    subject: () => ({node: 'cmp9'}),
    evidence: (_x, f) => expect(f.evidence.cause).toBe('compute-node-deleted'),
  },
  {
    name: 'a compute node recreated with a new uuid while the old provider keeps its name (FQDN case)',
    code: 'provider.uuid-mismatch',
    plant: ({b, h2}) => {
      h2.cn.uuid = b.newUuid()
    },
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.row.uuid}),
  },
  {
    name: 'a live compute node with no provider',
    code: 'provider.missing',
    before: ({b, i3}) => {
      // the instance on it would have no allocation either: keep this case to the provider itself
      b.deleteInstance(i3.uuid)
      b.removeProvider('cmp2')
    },
    subject: ({h2}) => ({host: 'cmp2', node: h2.cn.hypervisor_hostname as string}),
  },
  {
    name: 'two providers for one hostname (short name and FQDN)',
    code: 'provider.duplicate-name',
    plant: ({b}, s) => {
      s.placement.resource_providers.push({
        id: 900,
        uuid: b.newUuid(),
        name: 'cmp1.example.org',
        generation: 3,
        root_provider_id: 900,
        parent_provider_id: null,
      })
    },
    subject: ({h1}) => ({host: 'cmp1', provider_uuid: undefined as unknown as string, node: h1.cn.hypervisor_hostname as string}),
  },
  {
    name: 'usage above (total - reserved) x allocation_ratio',
    code: 'provider.over-capacity',
    plant: ({b, h2}, s) => {
      const inv = s.placement.inventories.find((i) => i.resource_provider_id === h2.rp.row.id && i.resource_class_id === b.rcId('MEMORY_MB'))
      if (!inv) throw new Error('fixture')
      inv.allocation_ratio = 0.03 // (65536 - 512) x 0.03 = 1950.72 < 2048 used; the node row stays right
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.row.uuid, host: 'cmp2'}),
  },
  {
    name: 'inventory totals that disagree with the compute node',
    code: 'provider.inventory-drift',
    plant: ({h2}) => {
      h2.cn.vcpus = 32
    },
    subject: ({h2}) => ({provider_uuid: h2.rp.row.uuid, host: 'cmp2'}),
    evidence: (_x, f) => expect(f.evidence.drift).toMatchObject({VCPU: {inventory_total: 16, compute_node: 32}}),
  },
  {
    name: "two providers that are each other's parent (placement never writes a loop)",
    code: 'provider.tree-loop',
    plant: ({h1, h2}, s) => {
      const rp = (id: number) => s.placement.resource_providers.find((p) => p.id === id)!
      rp(h1.rp.row.id).parent_provider_id = h2.rp.row.id
      rp(h2.rp.row.id).parent_provider_id = h1.rp.row.id
    },
    subject: ({h1}) => ({provider_uuid: h1.rp.row.uuid, host: 'cmp1'}),
    evidence: ({h1, h2}, f) => expect((f.evidence.loop as Array<{id: number}>).map((p) => p.id)).toEqual([h1.rp.row.id, h2.rp.row.id].sort((a, b) => a - b)),
  },
  {
    name: 'an instance with no instance_mapping',
    code: 'cell.instance-unmapped',
    before: ({b, i1}) => b.removeInstanceMapping(i1.uuid),
    subject: ({i1}) => ({instance_uuid: i1.uuid, cell: 'cell1'}),
  },
  {
    name: 'a mapping with a NULL cell while the instance lives in cell1',
    code: 'cell.instance-mapped-wrong-cell',
    plant: ({i1}, s) => {
      const m = s.nova_api.instance_mappings.find((x) => x.instance_uuid === i1.uuid)
      if (!m) throw new Error('fixture')
      m.cell_id = null
    },
    subject: ({i1}) => ({instance_uuid: i1.uuid}),
  },
  {
    name: 'an instance live in cell0 and cell1 (seed 004)',
    code: 'cell.instance-duplicate',
    plant: ({i3}, s) => {
      s.nova.instances.push({...i3, cell_uuid: CELL0_UUID, id: 7000, host: null, node: null, vm_state: 'error'})
    },
    subject: ({i3}) => ({instance_uuid: i3.uuid}),
  },
  {
    name: 'a hidden copy (cross-cell resize) is not a duplicate, but an unmapped host is reported',
    code: 'cell.host-unmapped',
    before: ({b}) => {
      b.addCell('cell2')
      b.removeHostMapping('cmp2')
    },
    plant: ({b, i3}, s) => {
      s.nova.instances.push({...i3, cell_uuid: b.cell('cell2').uuid, id: 7001, hidden: true})
    },
    subject: () => ({host: 'cmp2', cell: 'cell1'}),
  },
  {
    name: 'a host_mapping whose host has no service',
    code: 'cell.host-mapping-stale',
    plant: (_x, s) => {
      s.nova_api.host_mappings.push({id: 99, cell_id: cellId(s, 'cell1'), host: 'gone-host'})
    },
    subject: () => ({host: 'gone-host'}),
  },
  {
    name: 'a host mapped to another cell than its service',
    code: 'cell.host-mapped-wrong-cell',
    plant: (_x, s) => {
      const hm = s.nova_api.host_mappings.find((x) => x.host === 'cmp1')
      if (!hm) throw new Error('fixture')
      hm.cell_id = cellId(s, 'cell0')
    },
    subject: () => ({host: 'cmp1', cell: 'cell1'}),
  },
  {
    name: 'a build_request for an instance that exists',
    code: 'cell.build-request-stale',
    plant: ({i1}, s) => {
      s.nova_api.build_requests.push({id: 5, instance_uuid: i1.uuid, project_id: i1.project_id as string, created_at: null})
    },
    subject: ({i1}) => ({instance_uuid: i1.uuid}),
  },
  {
    name: 'a mapping of an instance deleted months ago (the map_instances marker is not a fault)',
    code: 'cell.instance-mapping-stale',
    plant: ({b, i1}, s) => {
      const u = b.newUuid()
      s.nova.instances.push({...i1, uuid: u, id: 8000, deleted: 8000, deleted_at: '2023-01-01 00:00:00', vm_state: 'deleted'})
      s.nova_api.instance_mappings.push({
        id: 500,
        instance_uuid: u,
        cell_id: cellId(s, 'cell1'),
        project_id: i1.project_id as string,
        user_id: i1.user_id,
        queued_for_delete: true,
        created_at: null,
      })
      s.nova_api.instance_mappings.push({
        id: 501,
        instance_uuid: b.newUuid(),
        cell_id: null,
        project_id: 'INSTANCE_MIGRATION_MARKER',
        user_id: null,
        queued_for_delete: false,
        created_at: null,
      })
    },
    subject: () => ({cell: 'cell1'}),
  },
  {
    name: 'pCPUs pinned with no instance (seed 004: NUMATopologyFilter returned 0 hosts)',
    code: 'pinning.leaked',
    before: ({hp}) => {
      hp.numa![0].pinned.add(6).add(7)
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_x, f) => expect(f.evidence.cells).toMatchObject([{numa_cell: 0, leaked: [6, 7]}]),
  },
  {
    name: 'pins of a live instance missing from pinned_cpus',
    code: 'pinning.unaccounted',
    before: ({hp}) => {
      hp.numa![0].pinned.delete(5)
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_x, f) => expect(f.evidence.unaccounted).toEqual([5]),
  },
  {
    name: 'one pCPU pinned by two instances',
    code: 'pinning.overlap',
    before: ({b}) => {
      b.addInstance('cmp3', 'm1.pinned', {pin: [5, 6], force: true})
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
    evidence: (_x, f) => expect(f.evidence.overlap).toEqual([5]),
  },
  {
    name: 'pins outside the dedicated set',
    code: 'pinning.outside-dedicated-set',
    before: ({hp}) => {
      const cell = hp.numa![0]
      cell.pcpuset = [5, 6, 7]
      cell.cpuset = [...cell.cpuset, 4]
    },
    subject: () => ({host: 'cmp3', numa_cell: 0}),
  },
  {
    name: 'placement PCPU usage that differs from the pins',
    code: 'pinning.placement-drift',
    plant: ({b, ip}, s) => {
      const a = s.placement.allocations.find((x) => x.consumer_id === ip.uuid && x.resource_class_id === b.rcId('PCPU'))
      const flavor = ip.extra?.flavor
      const isolated = flavor?.replace('"hw:cpu_policy": "dedicated"', '"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate"')
      if (!a || !ip.extra || !isolated || isolated === flavor) throw new Error('fixture')
      // the instance now asks for 3 PCPU (emulator threads isolated) and holds them, but pins 2
      a.used = 3
      ip.extra.flavor = isolated
    },
    subject: ({hp}) => ({host: 'cmp3', provider_uuid: hp.rp.row.uuid}),
  },
  {
    name: 'a compute node still counting a deleted instance (seed 000: it is a leak)',
    code: 'usage.node-drift',
    plant: ({h2}) => {
      h2.cn.vcpus_used! += 8
      h2.cn.memory_mb_used! += 16384
      h2.cn.free_ram_mb = h2.cn.memory_mb! - h2.cn.memory_mb_used!
    },
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.row.uuid}),
    evidence: (_x, f) => expect(f.evidence.drift).toMatchObject({vcpus_used: {diff: 8}, memory_mb_used: {diff: 16384}, free_ram_mb: {diff: -16384}}),
  },
  {
    name: 'negative free RAM that is overcommit within the allocation ratio (seed 000: not a leak)',
    code: 'usage.negative-free',
    plant: ({b, h2}, s) => {
      // 1024 MB host, 512 reserved, ram_allocation_ratio 4: capacity (1024 - 512) x 4 + 512 = 2560 = used
      h2.cn.memory_mb = 1024
      h2.cn.free_ram_mb = 1024 - h2.cn.memory_mb_used!
      const inv = s.placement.inventories.find((i) => i.resource_provider_id === h2.rp.row.id && i.resource_class_id === b.rcId('MEMORY_MB'))
      if (!inv) throw new Error('fixture')
      inv.total = 1024
      inv.allocation_ratio = 4
    },
    subject: () => ({host: 'cmp2'}),
    evidence: (_x, f) => {
      expect(f.severity).toBe('info')
      expect(f.evidence.negatives).toHaveProperty('free_ram_mb')
    },
  },
  {
    name: 'a host in a nova aggregate whose provider is not in the placement aggregate',
    code: 'aggregate.missing-in-placement',
    before: ({b}) => b.unlinkProviderFromAggregate('cmp2', 'az1-agg'),
    subject: ({h2}) => ({host: 'cmp2', provider_uuid: h2.rp.row.uuid, aggregate: 'az1-agg'}),
  },
  {
    name: 'a provider in the placement aggregate of a nova aggregate that does not list its host',
    code: 'aggregate.extra-in-placement',
    before: ({b}) => b.linkProviderToAggregate('cmp3', 'az1-agg'),
    subject: ({hp}) => ({host: 'cmp3', provider_uuid: hp.rp.row.uuid}),
  },
  {
    name: 'a host in two availability zones',
    code: 'aggregate.az-conflict',
    before: ({b}) => {
      b.addAggregate({name: 'az2-agg', hosts: ['cmp1'], metadata: {availability_zone: 'az2'}})
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
  it.each(cases)('$code: $name', ({code, before, plant, subject, evidence}) => {
    const x = base()
    before?.(x)
    const s = x.b.build()
    plant?.(x, s)
    const report = runChecks(buildModel(s))
    expect(codes(report.findings), JSON.stringify(report.findings.map((f) => [f.code, f.message]))).toEqual([code])
    const f = report.findings[0]
    const want = Object.fromEntries(Object.entries(subject(x)).filter(([, v]) => v !== undefined))
    expect(f.subject).toMatchObject(want)
    expect(f.message.length).toBeGreaterThan(10)
    evidence?.(x, f, s)
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
    for (const [code, d] of Object.entries(FINDING_CODES))
      expect(doc).toMatch(new RegExp(`\\| \`${code.replace(/\./g, '\\.')}\` \\| ${d.severity.replace('|', '\\\\\\|')}( \\([^|]*\\))? \\|`))
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

  it("declares each code's shape one way: FindingShapes augmented from the code's own unit file", async () => {
    const {readFileSync} = await import('node:fs')
    const {UNITS} = await import('../../src/lib/checks/index.js')
    const finding = readFileSync(new URL('../../src/lib/domain/finding.ts', import.meta.url), 'utf8')
    expect(finding).toMatch(/export interface FindingShapes \{\}/)
    const root = new URL('../../src/lib/checks/', import.meta.url)
    for (const u of UNITS) {
      const text = readFileSync(new URL(`${u.check}/${u.code.slice(u.code.indexOf('.') + 1)}.ts`, root), 'utf8')
      const block = /declare module '\.\.\/\.\.\/domain\/finding\.js' \{\s*interface FindingShapes \{([^}]*)\}/.exec(text)
      expect(block?.[1], u.code).toContain(`'${u.code}': [`)
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
