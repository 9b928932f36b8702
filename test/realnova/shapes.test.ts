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
import {generateCloud} from '../support/generator.js'
import {type Shape, type ShapeDifference, compareShapes, shapeOf} from './shapes.js'
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
  {column: 'nova_api.flavors.description', what: 'set in', why: 'the API stores a description when given (microversion 2.55); the plays create flavors without one'},
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
const benchCloud = () => generateCloud({seed: 3, cells: 2, hostsPerCell: 6, requestSpecs: true, pinnedHostFraction: 0.4, migrationsInProgress: 3, completedMigrations: 3}).snapshot

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
