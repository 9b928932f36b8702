/**
 * `snapshot diff A B` through the built CLI: on the demo against a copy where a leak was repaired, a
 * new one appeared, an instance moved, a provider was added and a host's stuck pins were released;
 * and `diff FILE live` against the demo seeded into MariaDB, after SQL changed the live databases.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {AuditResult} from '../../src/lib/cli/audit-command.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import type {RowChange, SnapshotDiff} from '../../src/lib/snapshot/diff.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'
import {adminConnection, createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const dir = mkdtempSync(join(tmpdir(), 'cloudctl-diff-'))
const DELETED_CONSUMER = '9c089546-670c-4fce-b963-d08860d435c7' // allocation.consumer-deleted in the demo
const NEW_CONSUMER = 'dead0000-0000-4000-8000-000000000001'

function releasePins(s: Snapshot, node: string): void {
  const cn = s.nova.compute_nodes.find((c) => c.hypervisor_hostname === node && c.deleted === 0)
  if (!cn?.numa_topology) throw new Error(`no NUMA topology on ${node}`)
  const topo = JSON.parse(cn.numa_topology) as {'nova_object.data': {cells: Array<{'nova_object.data': {pinned_cpus: number[]}}>}}
  for (const c of topo['nova_object.data'].cells) c['nova_object.data'].pinned_cpus = []
  cn.numa_topology = JSON.stringify(topo)
}

describe('snapshot diff (built CLI)', () => {
  let before: Snapshot
  let afterFile: string
  let moved: {uuid: string; from: string; to: string}

  beforeAll(async () => {
    before = await readSnapshotFile(DEMO)
    const after = await readSnapshotFile(DEMO)
    after.captured_at = '2024-05-15T09:30:00.000Z'
    after.placement.allocations = after.placement.allocations.filter((a) => a.consumer_id !== DELETED_CONSUMER)
    const rp2 = after.placement.resource_providers.find((p) => p.name === 'cmp-r1-02')
    if (!rp2) throw new Error('demo changed: no cmp-r1-02 provider')
    after.placement.allocations.push({id: 9001, resource_provider_id: rp2.id, consumer_id: NEW_CONSUMER, resource_class_id: 0, used: 4})
    after.placement.resource_providers.push({
      id: 9001,
      uuid: 'beef0000-0000-4000-8000-000000000002',
      name: 'cmp-new',
      generation: 1,
      root_provider_id: 9001,
      parent_provider_id: null,
    })
    const inst = after.nova.instances.find((i) => i.deleted === 0 && i.host === 'cmp-r1-03' && !i.hidden)
    if (!inst) throw new Error('demo changed: no instance on cmp-r1-03')
    moved = {uuid: inst.uuid, from: 'cmp-r1-03', to: 'cmp-r1-01'}
    inst.host = inst.node = 'cmp-r1-01'
    releasePins(after, 'pin-r1-02')
    afterFile = join(dir, 'after.json.gz')
    await writeSnapshotFile(after, afterFile)
  })

  it('reports appeared / disappeared findings with the rows behind them, exit 3 on a new finding', async () => {
    const r = await cloudctl(['snapshot', 'diff', DEMO, afterFile, '--json'])
    expect(r.exitCode, r.stderr).toBe(3)
    const d = oneJsonDocument(r.stdout) as SnapshotDiff
    expect(d.exit_code).toBe(3)
    const codes = (l: SnapshotDiff['findings']['appeared']) => l.map((x) => x.finding.code)
    const related = (x: SnapshotDiff['findings']['appeared'][number]): RowChange[] => x.related.map((i) => d.changes[i])

    const leak = d.findings.appeared.find((x) => x.finding.code === 'allocation.consumer-unknown' && x.finding.subject.consumer_uuid === NEW_CONSUMER)
    expect(leak, JSON.stringify(codes(d.findings.appeared))).toBeDefined()
    expect(related(leak!)).toEqual([
      expect.objectContaining({kind: 'allocation-added', consumer_uuid: NEW_CONSUMER, provider: 'cmp-r1-02', resource_class: 'VCPU', used: 4}),
    ])

    const repaired = d.findings.disappeared.find((x) => x.finding.code === 'allocation.consumer-deleted')
    expect(repaired?.finding.subject.consumer_uuid).toBe(DELETED_CONSUMER)
    expect(related(repaired!).map((c) => [c.kind, 'resource_class' in c ? c.resource_class : ''])).toEqual([
      ['allocation-removed', 'VCPU'],
      ['allocation-removed', 'MEMORY_MB'],
      ['allocation-removed', 'DISK_GB'],
    ])
    const pins = d.findings.disappeared.find((x) => x.finding.code === 'pinning.leaked')
    expect(pins).toBeDefined()
    const pinChanges = related(pins!).filter((c) => c.kind === 'pinned-cpus-changed')
    expect(pinChanges.map((c) => c.kind === 'pinned-cpus-changed' && [c.node, c.numa_cell, c.removed, c.after])).toEqual([
      ['pin-r1-02', 0, [4, 5, 6, 7], []],
      ['pin-r1-02', 1, [12, 13, 14, 15], []],
    ])

    // The moved instance's allocations stayed behind: a new finding about it, with the move under it.
    const wrong = d.findings.appeared.find((x) => x.finding.subject.instance_uuid === moved.uuid || x.finding.subject.consumer_uuid === moved.uuid)
    expect(wrong, JSON.stringify(codes(d.findings.appeared))).toBeDefined()
    expect(related(wrong!)).toContainEqual(
      expect.objectContaining({
        kind: 'instance-moved',
        instance_uuid: moved.uuid,
        from: expect.objectContaining({host: moved.from}),
        to: expect.objectContaining({host: moved.to}),
      }),
    )
    expect(d.changes).toContainEqual({kind: 'provider-added', provider_uuid: 'beef0000-0000-4000-8000-000000000002', provider: 'cmp-new'})

    // Every finding of either side is in exactly one bucket.
    const audit = (file: string) => cloudctl(['audit', 'all', '-s', file, '--json']).then((x) => oneJsonDocument(x.stdout) as AuditResult)
    const [a, b] = await Promise.all([audit(DEMO), audit(afterFile)])
    expect(d.counts.persisted + d.counts.disappeared).toBe(a.findings.length)
    expect(d.counts.persisted + d.counts.appeared).toBe(b.findings.length)
    expect(d.counts.persisted).toBeGreaterThan(0)

    const human = await cloudctl(['snapshot', 'diff', DEMO, afterFile])
    expect(human.exitCode).toBe(3)
    expect(human.stdout).toMatch(/Appeared \(\d+\)/)
    expect(human.stdout).toContain(`allocation added: consumer ${NEW_CONSUMER} VCPU=4 on cmp-r1-02`)
    expect(human.stdout).toMatch(/pinned CPUs of pin-r1-02 NUMA cell 0: 4,5,6,7 -> -/)
  }, 120_000)

  it('the same snapshot twice: nothing appeared or changed, exit 0; reversed, the repaired leak is new again', async () => {
    const same = await cloudctl(['snapshot', 'diff', DEMO, DEMO, '--json'])
    expect(same.exitCode, same.stderr).toBe(0)
    const d = oneJsonDocument(same.stdout) as SnapshotDiff
    expect([d.counts.appeared, d.counts.disappeared, d.changes.length]).toEqual([0, 0, 0])
    expect(d.counts.persisted).toBeGreaterThan(3)

    const back = oneJsonDocument((await cloudctl(['snapshot', 'diff', afterFile, DEMO, '--json'])).stdout) as SnapshotDiff
    expect(back.findings.appeared.map((x) => x.finding.code)).toContain('allocation.consumer-deleted')
    expect(back.exit_code).toBe(3)

    const missing = await cloudctl(['snapshot', 'diff', DEMO, join(dir, 'nope.json')])
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).not.toMatch(/\n\s+at /)
  }, 120_000)

  describe('against live databases', () => {
    let cloud: TestCloud

    beforeAll(async () => {
      cloud = await createTestCloud('e2e_diff', {cells: ['cell1', 'cell2']})
      await seedSnapshot(before, cloud)
    })

    afterAll(async () => {
      await cloud?.drop()
    })

    it('diff FILE live shows what SQL changed since the capture: a leak removed, another added', async () => {
      const live = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]
      const file = join(dir, 'live-before.json.gz')
      const cap = await cloudctl(['snapshot', 'capture', ...live, '-o', file])
      expect(cap.exitCode, cap.stderr).toBe(0)
      const unchanged = await cloudctl(['snapshot', 'diff', file, 'live', ...live, '--json'])
      expect(unchanged.exitCode, unchanged.stderr).toBe(0)
      expect((oneJsonDocument(unchanged.stdout) as SnapshotDiff).changes).toEqual([])

      const admin = await adminConnection()
      try {
        const p = cloud.databases.placement
        await admin.query(`DELETE FROM \`${p}\`.allocations WHERE consumer_id = ?`, [DELETED_CONSUMER])
        const [rows] = await admin.query(`SELECT id FROM \`${p}\`.resource_providers WHERE name = 'cmp-r2-01'`)
        const rpId = (rows as Array<{id: number}>)[0].id
        await admin.query(
          `INSERT INTO \`${p}\`.allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (?, ?, 1, 2048, NOW())`,
          [rpId, NEW_CONSUMER],
        )
      } finally {
        await admin.end()
      }
      const r = await cloudctl(['snapshot', 'diff', file, 'live', ...live, '--json'])
      expect(r.exitCode, r.stderr).toBe(3)
      const d = oneJsonDocument(r.stdout) as SnapshotDiff
      expect(d.findings.appeared.map((x) => [x.finding.code, x.finding.subject.consumer_uuid])).toEqual([['allocation.consumer-unknown', NEW_CONSUMER]])
      expect(d.findings.disappeared.map((x) => [x.finding.code, x.finding.subject.consumer_uuid])).toEqual([['allocation.consumer-deleted', DELETED_CONSUMER]])
      expect(d.counts.changes).toMatchObject({'allocation-added': 1, 'allocation-removed': 3, 'instance-moved': 0, 'provider-added': 0})
      expect(d.after.source).toMatch(/^mysql/)
    }, 180_000)
  })
})
