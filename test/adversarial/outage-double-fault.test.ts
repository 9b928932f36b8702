/**
 * Issue 25 item 3 with real processes on a real MariaDB: a double fault during an outage. The instance
 * runs in cell1 and is mapped to its ERROR copy in cell0 (seed 004's "alive in two cells"), and its
 * host's host mapping points at cell0 too; cell1 is unreachable. Every repair runs with --apply --yes:
 * the live instance keeps every allocation row, and CHECKSUM TABLE of every table is unchanged except
 * for a leak that is provably cell2's (instance deleted in cell2, mapped to cell2, on a host whose
 * compute node was read in cell2), which is still repaired.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {cloudctl} from '../support/cli.js'
import {CloudBuilder} from '../support/builders.js'
import {type RepairWorld, closeConnection, diffDumps, openConnection, repairWorld} from '../repairs/support.js'
import {byRole, checksums as cloudChecksums} from './executor-support.js'

interface Seeded {
  snapshot: Snapshot
  alive: string
  leaked: string
}

function doubleFault(): Seeded {
  const b = new CloudBuilder({seed: 925, requestSpecs: false})
  b.addCell('cell1')
  b.addCell('cell2')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'c1-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell2', {host: 'c2-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  const alive = b.addInstance('c1-cmp1', 'm1.small').row.uuid
  b.addInstance('c2-cmp1', 'm1.small')
  const leaked = b.addInstance('c2-cmp1', 'm1.small').row.uuid
  b.deleteInstance(leaked, {keepAllocations: true})
  b.instance(alive).mapping.cell_id = b.cell0.id
  const s = b.build()
  const live = s.nova.instances.find((i) => i.uuid === alive)!
  s.nova.instances.push({...live, cell_uuid: CELL0_UUID, id: 1, host: null, node: null, vm_state: 'error', task_state: null, power_state: 0, launched_at: null})
  s.nova_api.host_mappings.find((h) => h.host === 'c1-cmp1')!.cell_id = b.cell0.id
  return {snapshot: s, alive, leaked}
}

let world: RepairWorld
let seeded: Seeded
let tmp: string
let src: string[]
const DARK = ['--cell-db', 'cell1=mysql+pymysql://root@127.0.0.1:3399/nova_cell1?connect_timeout=3']

const checksums = () => cloudChecksums(world.cloud, byRole)

const changedTables = (a: Map<string, string>, b: Map<string, string>) => [...a.keys()].filter((k) => a.get(k) !== b.get(k)).sort()

async function allocationsOf(consumer: string): Promise<number> {
  const conn = await openConnection(world.cloud.placementUrl)
  try {
    const [rows] = await conn.query('SELECT COUNT(*) AS n FROM allocations WHERE consumer_id = ?', [consumer])
    return Number((rows as Array<{n: number}>)[0].n)
  } finally {
    await closeConnection(conn)
  }
}

beforeAll(async () => {
  seeded = doubleFault()
  world = await repairWorld('adv_dfault', seeded.snapshot, ['cell1', 'cell2'])
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-dfault-'))
  src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
}, 120_000)

afterAll(async () => {
  await world?.drop()
})

describe('double fault: cell1 dark, the instance and its host both mapped to cell0', {timeout: 240_000}, () => {
  it('premise: with cell1 readable, the live instance holds its allocations where it runs; the cell2 leak is a leak', async () => {
    expect(await allocationsOf(seeded.alive)).toBe(3)
    const r = await cloudctl(['audit', 'leaks', ...src, '--json'])
    const doc = JSON.parse(r.stdout) as {findings: Array<{code: string; subject: {consumer_uuid?: string}}>}
    expect(doc.findings.map((f) => `${f.code} ${f.subject.consumer_uuid}`)).toEqual([`allocation.consumer-deleted ${seeded.leaked}`])
  })

  it('cell1 dark: audit says nothing about the live instance but undecided', async () => {
    const r = await cloudctl(['audit', 'all', ...src, ...DARK, '--json'])
    const doc = JSON.parse(r.stdout) as {
      findings: Array<{code: string; severity: string; subject: {consumer_uuid?: string; instance_uuid?: string}}>
      unavailable_cells: Array<{name: string}>
    }
    expect(doc.unavailable_cells.map((c) => c.name)).toEqual(['cell1'])
    expect(
      doc.findings.filter((f) => f.severity !== 'unknown' && (f.subject.consumer_uuid === seeded.alive || f.subject.instance_uuid === seeded.alive)),
    ).toEqual([])
    expect(doc.findings.some((f) => f.code === 'allocation.undecided')).toBe(true)
    // Nothing else is concluded from the wrong mappings: only the cell2 leak, which cell2's rows prove.
    expect(doc.findings.filter((f) => f.severity === 'error' || f.severity === 'warning').map((f) => `${f.code} ${f.subject.consumer_uuid ?? ''}`)).toEqual([
      `allocation.consumer-deleted ${seeded.leaked}`,
    ])
  })

  it('every repair with --apply --yes: the live instance keeps its 3 rows; only the provable cell2 leak goes', async () => {
    const before = await checksums()
    const dumpBefore = await world.dump()
    const codes: Record<string, number> = {}
    for (const args of [
      ['repair', 'leaks'],
      ['repair', 'leaks', '--heal'],
      ['repair', 'providers'],
      ['cells', 'map-instances'],
      ['cells', 'discover-hosts', '--prune'],
    ]) {
      const name = args.join('-')
      const r = await cloudctl([
        ...args,
        ...src,
        ...DARK,
        '--apply',
        '--yes',
        '--json',
        '--undo-dir',
        join(tmp, `undo-${name}`),
        '--audit-log',
        join(tmp, `${name}.log`),
      ])
      expect(r.stderr).not.toMatch(/\n\s+at /)
      codes[name] = r.exitCode ?? -1
    }
    // repair leaks removes the cell2 leak (4); nothing else applies anything (0, or 3 for what it left).
    expect(codes['repair-leaks']).toBe(4)
    for (const [name, code] of Object.entries(codes)) if (name !== 'repair-leaks') expect([0, 3], name).toContain(code)
    expect(await allocationsOf(seeded.alive)).toBe(3)
    expect(await allocationsOf(seeded.leaked)).toBe(0)
    for (const c of diffDumps(dumpBefore, await world.dump())) {
      const row = (c.before ?? c.after) as Record<string, unknown>
      if (c.table === 'placement/allocations') expect(row.consumer_id).toBe(seeded.leaked)
      else if (c.table === 'placement/consumers') expect(row.uuid).toBe(seeded.leaked)
      else if (c.table === 'placement/resource_providers') expect(c.before?.name).toBe('c2-cmp1')
      else expect.fail(`unexpected change in ${c.table}: ${JSON.stringify(c)}`)
    }
    expect(changedTables(before, await checksums())).toEqual(['placement.allocations', 'placement.consumers', 'placement.resource_providers'])
  })

  it('run again: nothing applied, every CHECKSUM unchanged', async () => {
    const before = await checksums()
    for (const args of [
      ['repair', 'leaks'],
      ['repair', 'leaks', '--heal'],
    ]) {
      const name = `again-${args.join('-')}`
      const r = await cloudctl([
        ...args,
        ...src,
        ...DARK,
        '--apply',
        '--yes',
        '--json',
        '--undo-dir',
        join(tmp, `undo-${name}`),
        '--audit-log',
        join(tmp, `${name}.log`),
      ])
      expect([0, 3]).toContain(r.exitCode)
    }
    expect(changedTables(before, await checksums())).toEqual([])
    expect(await allocationsOf(seeded.alive)).toBe(3)
  })
})
