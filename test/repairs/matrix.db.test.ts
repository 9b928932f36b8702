/**
 * Every finding code with a repair, through the built CLI on MariaDB: the generator plants the fault
 * in a small cloud, `--apply --yes` repairs it (exit 4), and then
 * - the planted code (and what nova's behaviour made inevitable with it) is gone and no finding is new,
 * - only tables the repair is meant to write changed, in no database besides,
 * - every provider whose allocations, inventories, traits or aggregate links changed (and still
 *   exists) has generation + 1, every surviving consumer whose allocations changed too,
 * - the re-captured snapshot is applyPlan(before, plan): the plan's own account of what it writes,
 * - a second run plans nothing (exit 0), and `repair undo FILE --apply --yes` restores the exact
 *   before-state of every table of every database.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {cloudctl} from '../support/cli.js'
import {formatTs} from '../support/builders.js'
import {type FaultCode, generateCloud} from '../support/generator.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {type RepairWorld, type RowChange, dbNow, diffDumps, expectAppliedState, repairWorld} from './support.js'

interface Case {
  code: FaultCode
  args: string[]
  /** Tables ('placement/allocations', 'cell/instances', 'nova_api/host_mappings') the repair may write. */
  tables: string[]
  pinned?: boolean
  /** This command plans nothing for the fault (exit 0, reported under "Not repaired"). */
  refusedWithout?: string[]
}

const PLACEMENT_ALLOC = ['placement/allocations', 'placement/consumers', 'placement/resource_providers']
const PROVIDER_TREE = [...PLACEMENT_ALLOC, 'placement/inventories', 'placement/resource_provider_traits', 'placement/resource_provider_aggregates']

const CASES: Case[] = [
  {code: 'allocation.consumer-deleted', args: ['repair', 'leaks'], tables: PLACEMENT_ALLOC},
  {code: 'allocation.consumer-unknown', args: ['repair', 'leaks'], tables: PLACEMENT_ALLOC},
  {code: 'allocation.migration-finished', args: ['repair', 'leaks'], tables: PLACEMENT_ALLOC},
  {code: 'allocation.evacuation-leftover', args: ['repair', 'leaks'], tables: PLACEMENT_ALLOC},
  // The generator's instance holds nothing on its own host: plain `repair leaks` refuses to strand it
  // (see `refusedWithout`), --heal moves the rows home.
  {code: 'allocation.wrong-provider', args: ['repair', 'leaks', '--heal'], tables: PLACEMENT_ALLOC, refusedWithout: ['repair', 'leaks']},
  {code: 'allocation.missing', args: ['repair', 'leaks', '--heal'], tables: PLACEMENT_ALLOC},
  {code: 'allocation.amount-mismatch', args: ['repair', 'leaks', '--heal'], tables: PLACEMENT_ALLOC},
  {code: 'provider.stale', args: ['repair', 'providers'], tables: PROVIDER_TREE},
  {code: 'provider.uuid-mismatch', args: ['repair', 'providers', '--strategy', 'rekey'], tables: ['placement/resource_providers']},
  {code: 'provider.uuid-mismatch', args: ['repair', 'providers', '--strategy', 'move'], tables: PROVIDER_TREE},
  {code: 'cell.instance-unmapped', args: ['cells', 'map-instances'], tables: ['nova_api/instance_mappings']},
  {code: 'cell.instance-mapped-wrong-cell', args: ['cells', 'map-instances'], tables: ['nova_api/instance_mappings']},
  {code: 'cell.instance-duplicate', args: ['cells', 'map-instances'], tables: ['nova_api/instance_mappings', 'cell/instances', 'cell/instance_extra']},
  {code: 'cell.host-unmapped', args: ['cells', 'discover-hosts'], tables: ['nova_api/host_mappings', 'cell/compute_nodes']},
  {code: 'cell.host-mapping-stale', args: ['cells', 'discover-hosts', '--prune'], tables: ['nova_api/host_mappings']},
  // The generated services report "now": nova-compute is up, so the host-state repairs need --force.
  {code: 'pinning.leaked', args: ['repair', 'pinning', '--force'], tables: ['cell/compute_nodes'], pinned: true},
  {code: 'pinning.unaccounted', args: ['repair', 'pinning', '--force'], tables: ['cell/compute_nodes'], pinned: true},
  {code: 'usage.node-drift', args: ['repair', 'usage', '--force'], tables: ['cell/compute_nodes']},
  {
    code: 'aggregate.missing-in-placement',
    args: ['repair', 'aggregates'],
    tables: ['placement/resource_provider_aggregates', 'placement/placement_aggregates', 'placement/resource_providers'],
  },
  {
    code: 'aggregate.extra-in-placement',
    args: ['repair', 'aggregates', '--prune'],
    tables: ['placement/resource_provider_aggregates', 'placement/resource_providers'],
  },
]

/** 'cell:<uuid>/instances' -> 'cell/instances'. */
const tableKind = (t: string) => t.replace(/^cell:[^/]+\//, 'cell/')

function findingKeys(snapshot: Parameters<typeof buildModel>[0]): Set<string> {
  return new Set(runChecks(buildModel(snapshot)).findings.map((f) => `${f.code} ${JSON.stringify(f.subject)}`))
}

/** Providers / consumers whose placement rows changed must carry generation + 1 (unless deleted or created). */
function checkGenerations(changes: RowChange[]): void {
  const rpChanged = new Set<number>()
  const consumerChanged = new Set<string>()
  for (const c of changes) {
    const rows = [c.before, c.after].filter((r): r is Record<string, unknown> => r !== null)
    if (['placement/allocations', 'placement/inventories', 'placement/resource_provider_traits', 'placement/resource_provider_aggregates'].includes(c.table))
      for (const r of rows) rpChanged.add(Number(r.resource_provider_id))
    if (c.table === 'placement/allocations') for (const r of rows) consumerChanged.add(String(r.consumer_id))
  }
  const rps = new Map(changes.filter((c) => c.table === 'placement/resource_providers').map((c) => [Number((c.before ?? c.after)!.id), c]))
  for (const id of rpChanged) {
    const c = rps.get(id)
    expect(c, `provider ${id} changed content but its row did not change`).toBeDefined()
    if (c!.before && c!.after) expect(Number(c!.after.generation), `generation of provider ${id}`).toBe(Number(c!.before.generation) + 1)
  }
  const consumers = changes.filter((c) => c.table === 'placement/consumers')
  for (const uuid of consumerChanged) {
    const c = consumers.find((x) => (x.before ?? x.after)!.uuid === uuid)
    expect(c, `consumer ${uuid} changed allocations but its row did not change`).toBeDefined()
    if (c!.before && c!.after) expect(Number(c!.after.generation), `generation of consumer ${uuid}`).toBe(Number(c!.before.generation) + 1)
  }
}

describe('every repairable finding code through the CLI (MariaDB)', () => {
  const worlds: RepairWorld[] = []
  afterAll(async () => {
    for (const w of worlds) await w.drop()
  })

  it.each(CASES.map((c) => [`${c.code} (${c.args.slice(1).join(' ')})`, c] as const))('%s', async (_name, c) => {
    const g = generateCloud({seed: 71, hosts: 5, instances: 16, pinnedHostFraction: c.pinned ? 0.4 : 0, now: formatTs(Date.now()), faults: {[c.code]: 1}})
    const world = await repairWorld(`rmx_${c.code.replace(/\W/g, '_').slice(0, 14)}`, g.snapshot)
    worlds.push(world)
    const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-matrix-'))
    const src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
    const state = ['--undo-dir', join(tmp, 'undo'), '--audit-log', join(tmp, 'audit.log')]

    const gone = new Set([c.code, ...g.planted.flatMap((p) => p.alsoExpected ?? [])])
    const before = await world.dump()
    const snapshotBefore = await world.capture()
    const findingsBefore = findingKeys(snapshotBefore)
    expect(
      [...findingsBefore].some((k) => k.startsWith(`${c.code} `)),
      `${c.code} planted`,
    ).toBe(true)

    if (c.refusedWithout) {
      const plain = await cloudctl([...c.refusedWithout, ...src])
      expect(plain.exitCode, plain.stdout).toBe(3) // nothing planned, the finding left for the operator
      expect(plain.stdout).toMatch(new RegExp(`Not repaired[^]*${c.code.replace('.', '\\.')}`))
    }
    const dry = await cloudctl([...c.args, ...src])
    expect(dry.exitCode, dry.stderr).toBe(3)
    const since = dbNow()
    const r = await cloudctl([...c.args, ...src, '--apply', '--yes', '--json', ...state])
    expect(r.exitCode, r.stderr).toBe(4)
    const out = JSON.parse(r.stdout) as {plan: RepairPlan; applied: {undo_file: string}}
    const undoFile = out.applied.undo_file
    // The databases hold exactly what the plan says it writes (applyPlan), column for column.
    const snapshotAfter = await world.capture()
    expectAppliedState(snapshotAfter, snapshotBefore, out.plan, since)

    const changes = diffDumps(before, await world.dump())
    expect(changes.length).toBeGreaterThan(0)
    const unexpected = [...new Set(changes.map((x) => tableKind(x.table)))].filter((t) => !c.tables.includes(t))
    expect(unexpected, 'tables the repair must not write').toEqual([])
    checkGenerations(changes)

    const findingsAfter = findingKeys(await world.capture())
    expect(
      [...findingsAfter].filter((k) => gone.has(k.split(' ')[0])),
      'repaired codes left',
    ).toEqual([])
    expect(
      [...findingsAfter].filter((k) => !findingsBefore.has(k)),
      'new findings',
    ).toEqual([])

    const again = await cloudctl([...c.args, ...src])
    expect(again.exitCode, again.stdout).toBe(0)

    const undoSince = dbNow()
    const undo = await cloudctl(['repair', 'undo', undoFile, ...src, '--apply', '--yes', '--json', ...state])
    expect(undo.exitCode, undo.stderr).toBe(4)
    expectAppliedState(await world.capture(), snapshotAfter, (JSON.parse(undo.stdout) as {plan: RepairPlan}).plan, undoSince)
    expect(diffDumps(before, await world.dump())).toEqual([])
  })
})
