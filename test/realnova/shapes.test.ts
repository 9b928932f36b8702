/**
 * The bundled demo snapshot and the bench/test clouds (test/support/generator.ts on CloudBuilder) hold
 * rows of the shape nova writes: compared with snapshots captured from clouds real nova wrote (the
 * realnova scenarios), column by column (NULL or set), JSON blob key paths (nova objects with their
 * name and version) and the enum values nova defines.
 */
import {fileURLToPath} from 'node:url'

import {execa} from 'execa'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {captureLive} from '../../src/lib/db/capture.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {readSnapshotFile} from '../../src/lib/snapshot/file.js'
import {readFileSync} from 'node:fs'

import {generateCloud} from '../support/generator.js'
import {type Shape, type ShapeDifference, blobPaths, compareShapes, shapeOf} from './shapes.js'
import {type RealCloud, missingNova, playScenarios, realCloud} from './support.js'

const available = missingNova().length === 0
// Between them: pinned and shared servers, resizes and migrations done and in flight, deleted
// instances, a deleted service and compute node (soft-deleted rows), two cells.
const SCENARIOS = ['healthy', 'in_flight', 'pinned_leak', 'service_deleted', 'hostname_change']

/**
 * Differences that are what the plays do not exercise, not what nova would not write. Each is
 * matched by column and the start of its text.
 */
const NOT_EXERCISED: Array<{column: string; what: string; why: string}> = [
  {
    column: 'nova_api.flavors.description',
    what: 'set in',
    why: 'the API stores a description when given (microversion 2.55); the plays create flavors without one',
  },
  {column: 'nova.instances.os_type', what: 'set in', why: "nova copies the image's os_type property; the harness's images have none"},
]

const notExercised = (d: ShapeDifference) => NOT_EXERCISED.some((n) => n.column === d.column && d.what.startsWith(n.what))

/** What nova defines for enum columns, read from the installed nova. */
async function novaEnums(): Promise<Record<string, string[]>> {
  const py = [
    'import json',
    'from nova.compute import vm_states, task_states, power_state',
    'from nova.objects import fields',
    'names = lambda m: sorted(v for k, v in vars(m).items() if k.isupper() and isinstance(v, str))',
    "print(json.dumps({'vm': names(vm_states), 'task': names(task_states), 'power': [str(p) for p in sorted(power_state.STATE_MAP)], 'mt': list(fields.MigrationType.ALL)}))",
  ].join('\n')
  const r = await execa('/usr/bin/python3', ['-c', py])
  const e = JSON.parse(String(r.stdout)) as {vm: string[]; task: string[]; power: string[]; mt: string[]}
  return {'nova.instances.vm_state': e.vm, 'nova.instances.task_state': e.task, 'nova.instances.power_state': e.power, 'nova.migrations.migration_type': e.mt}
}

const demoPath = fileURLToPath(new URL('../../examples/demo-cloud.yaml', import.meta.url))
const benchCloud = () =>
  generateCloud({seed: 3, cells: 2, hostsPerCell: 6, requestSpecs: true, pinnedHostFraction: 0.4, migrationsInProgress: 3, completedMigrations: 3}).snapshot
const realisticCloud = () =>
  generateCloud({
    seed: 3,
    cells: 2,
    hostsPerCell: 6,
    shapes: 'real',
    pinnedHostFraction: 0.4,
    migrationsInProgress: 3,
    completedMigrations: 3,
    deletedInstances: 5,
  })

describe.runIf(available)('rows of our clouds have the shape nova writes', () => {
  let nova: Shape
  let enums: Record<string, string[]>
  const clouds: RealCloud[] = []

  beforeAll(async () => {
    await playScenarios(SCENARIOS)
    const snaps: Snapshot[] = []
    for (const scenario of SCENARIOS) {
      const cloud = await realCloud(scenario)
      clouds.push(cloud)
      snaps.push(await captureLive({apiDb: cloud.api, placementDb: cloud.placement}))
    }
    nova = shapeOf(...snaps)
    enums = await novaEnums()
  }, 1_800_000)

  afterAll(async () => {
    for (const c of clouds) await c.drop()
  })

  it('the real clouds cover the columns compared (NUMA and flavor blobs, migrations, deleted rows)', () => {
    for (const column of ['nova.compute_nodes.numa_topology', 'nova.instances.extra.numa_topology', 'nova.instances.extra.flavor', 'nova.compute_nodes.stats'])
      expect(nova.get(column)?.json, column).toBeGreaterThan(0)
    expect(nova.get('nova.migrations.migration_type')?.distinct).toEqual(new Set(['resize', 'migration', 'live-migration']))
    expect(nova.get('nova.compute_nodes.deleted_at')?.values).toBeGreaterThan(0)
    expect(nova.get('nova.services.deleted_at')?.values).toBeGreaterThan(0)
  })

  it.each([
    ['the demo snapshot (examples/demo-cloud.yaml)', async () => readSnapshotFile(demoPath)],
    ['the bench cloud (generator, 2 cells, pinned hosts, migrations, request specs)', async () => benchCloud()],
    ['the realistic bench cloud (generator shapes real)', async () => realisticCloud().snapshot],
  ] as const)('%s', async (_name, load) => {
    const diffs = compareShapes(nova, shapeOf(await load()), enums)
    expect(diffs.filter((d) => !notExercised(d))).toEqual([])
  })

  it('a row nova would not write is reported (the comparison can fail)', () => {
    const s = benchCloud()
    s.placement.consumers[0].consumer_type_id = 1
    s.nova.instances[0].vm_state = 'running'
    s.nova_api.flavors[0].vcpu_weight = 0
    const diffs = compareShapes(nova, shapeOf(s), enums).map((d) => d.column)
    expect(diffs).toEqual(expect.arrayContaining(['placement.consumers.consumer_type_id', 'nova.instances.vm_state', 'nova_api.flavors.vcpu_weight']))
  })
})

/**
 * The realistic cloud's blobs against the ones real nova wrote on production-like computes
 * (test/fixtures/real-shapes/zed.json, recorded by record-shapes.ts from driver_shapes.py): the same
 * key paths, object names and versions, for every blob kind the fixture holds, including the columns
 * the snapshot does not carry (vcpu_model, keypairs) and request specs. Needs no nova: the fixture is
 * nova's output.
 */
describe('the realistic cloud writes the blobs real nova wrote (fixture)', () => {
  const fx = JSON.parse(readFileSync(new URL('../fixtures/real-shapes/zed.json', import.meta.url), 'utf8')) as {
    compute_node: Record<string, string>
    instances: Record<string, {extra: Record<string, string | null>; request_spec: string}>
    traits: {reported: string[]; added_from_os_traits: string[]}
  }
  const g = realisticCloud()
  const s = g.snapshot
  const recorded = Object.values(fx.instances)
  const union = (texts: Array<string | null | undefined>) => {
    const out = new Set<string>()
    for (const t of texts) if (typeof t === 'string' && t.startsWith('{')) for (const p of blobPaths(t)) out.add(p)
    return out
  }
  /** Paths of ours nova never wrote, and paths nova always wrote that some blob of ours lacks. */
  const differences = (ours: Array<string | null | undefined>, theirs: Array<string | null | undefined>) => {
    const real = union(theirs)
    const always = theirs
      .filter((t): t is string => typeof t === 'string')
      .map(blobPaths)
      .reduce((a, b) => new Set([...a].filter((p) => b.has(p))))
    const mine = ours.filter((t): t is string => typeof t === 'string')
    const extra = [...union(mine)].filter((p) => !real.has(p))
    const missing = [...always].filter((p) => mine.some((t) => !blobPaths(t).has(p)))
    return {extra, missing: [...new Set(missing)]}
  }

  it.each([
    ['compute_nodes.numa_topology', () => s.nova.compute_nodes.map((c) => c.numa_topology), [fx.compute_node.numa_topology]],
    ['instance_extra.numa_topology', () => s.nova.instances.map((i) => i.extra?.numa_topology), recorded.map((r) => r.extra.numa_topology)],
    ['instance_extra.flavor', () => s.nova.instances.map((i) => i.extra?.flavor), recorded.map((r) => r.extra.flavor)],
    ['instance_extra.vcpu_model', () => s.nova.instances.map((i) => g.instanceExtra?.values(i)[0]), recorded.map((r) => r.extra.vcpu_model)],
    [
      'instance_extra.keypairs',
      () => s.nova.instances.filter((i) => !i.extra?.numa_topology?.includes('isolate')).map((i) => g.instanceExtra?.values(i)[1]),
      recorded.filter((r) => r.extra.keypairs).map((r) => r.extra.keypairs),
    ],
    ['request_specs.spec', () => (s.nova_api.request_specs ?? []).map((r) => r.spec), recorded.map((r) => r.request_spec)],
  ] as const)('%s', (_column, ours, theirs) => {
    const blobs = ours()
    expect(blobs.filter((b) => typeof b === 'string').length).toBeGreaterThan(0)
    expect(differences(blobs, [...theirs])).toEqual({extra: [], missing: []})
  })

  it('a blob nova would not write is reported (the comparison can fail)', () => {
    const spec = JSON.parse(fx.instances['p.medium']?.request_spec ?? '{}')
    spec['nova_object.data'].bogus = 1
    delete spec['nova_object.data'].limits
    const d = differences(
      [JSON.stringify(spec)],
      recorded.map((r) => r.request_spec),
    )
    expect(d.extra).toEqual(['<RequestSpec 1.14>.bogus'])
    expect(d.missing).toEqual(expect.arrayContaining(['<RequestSpec 1.14>.limits']))
  })

  it('every provider carries the recorded libvirt traits and the os_traits extension, 60 or more', () => {
    const names = new Map(s.placement.traits.map((t) => [t.id, t.name]))
    const per = new Map<number, Set<string>>()
    for (const t of s.placement.resource_provider_traits) {
      const set = per.get(t.resource_provider_id) ?? new Set()
      set.add(names.get(t.trait_id) ?? '')
      per.set(t.resource_provider_id, set)
    }
    const want = [...fx.traits.reported, ...fx.traits.added_from_os_traits]
    expect(want.length).toBeGreaterThanOrEqual(60)
    for (const rp of s.placement.resource_providers) expect([...(per.get(rp.id) ?? [])]).toEqual(expect.arrayContaining(want))
  })
})
