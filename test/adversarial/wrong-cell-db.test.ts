/**
 * Issue 25, item 2, with real processes on a real MariaDB: a readable but wrong database given as a
 * cell is never trusted. Four ways to get it wrong (an empty, freshly synced database as cell1, by
 * --cell-db and by its cell_mappings URL; cell0's database as cell1; cell1's database as cell0; a
 * second cell_mappings row with cell1's URL), each against every command that writes from what the
 * cells say. The dry run shows the damage the plan would do and that --apply would be refused;
 * --apply --yes exits 2 naming the evidence, and CHECKSUM TABLE of every table of every database is
 * unchanged. The blast-radius limit is lifted (--max-delete) so that only the identity rule stands
 * between the plan and the data. Then, pointed at the right databases, the same cloud repairs.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseDbUrl} from '../../src/lib/db/url.js'
import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {checksums as cloudChecksums} from './executor-support.js'

const HOSTS = ['c1-cmp1', 'c1-cmp2', 'c1-cmp3', 'c1-cmp4', 'c1-cmp5', 'c1-cmp6']

interface Seeded {
  snapshot: Snapshot
  /** Live in cell1, with an ERROR copy in cell0 (seed 004). */
  twin: string
  leaked: string
}

/**
 * cell1: six hosts (one removed by hand, its host mapping left: what --prune is for), eleven live
 * instances, a deleted one whose allocations leaked; cell0: a failed build mapped there and the
 * ERROR copy of one cell1 instance.
 */
function cloud(): Seeded {
  const b = new CloudBuilder({seed: 2520, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 1024, root_gb: 10})
  for (const host of HOSTS) b.addHost('cell1', {host, vcpus: 16, memory_mb: 32768, local_gb: 500})
  const live: string[] = []
  for (let i = 0; i < 11; i++) live.push(b.addInstance(HOSTS[i % 5], 'm1.small').row.uuid)
  const leaked = b.addInstance('c1-cmp1', 'm1.small').row.uuid
  b.deleteInstance(leaked, {keepAllocations: true})
  b.deleteComputeService('c1-cmp6', {keepHostMapping: true})
  const s = b.build()
  const twin = live[0]
  const row = s.nova.instances.find((i) => i.uuid === twin)!
  s.nova.instances.push({...row, cell_uuid: CELL0_UUID, id: 1, host: null, node: null, vm_state: 'error', task_state: null, power_state: 0, launched_at: null})
  const failed = 'f0000000-0000-4000-8000-0000000000f1'
  s.nova.instances.push({
    ...row,
    cell_uuid: CELL0_UUID,
    id: 2,
    uuid: failed,
    host: null,
    node: null,
    vm_state: 'error',
    task_state: null,
    power_state: 0,
    launched_at: null,
    extra: null,
  })
  s.nova_api.instance_mappings.push({
    id: 900,
    instance_uuid: failed,
    cell_id: s.cells.find((c) => c.is_cell0)!.id,
    project_id: row.project_id ?? 'p',
    user_id: row.user_id,
    queued_for_delete: false,
    created_at: row.created_at,
  })
  return {snapshot: s, twin, leaked}
}

let world: RepairWorld
let seeded: Seeded
let tmp: string
let src: string[]
let runs = 0
const state = () => ['--undo-dir', join(tmp, `undo-${++runs}`), '--audit-log', join(tmp, 'audit.log')]

async function sql(url: string, text: string, params: unknown[] = []): Promise<void> {
  const conn = await openConnection(url)
  try {
    await conn.query(text, params)
  } finally {
    await closeConnection(conn)
  }
}

const checksums = () => cloudChecksums(world.cloud)

const changed = (a: Map<string, string>, b: Map<string, string>) => [...a.keys()].filter((k) => a.get(k) !== b.get(k)).sort()

/** host:port/database as the identity records it. */
const address = (url: string) => {
  const u = parseDbUrl(url)
  return `${u.host}:${u.port}/${u.database}`
}
const re = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))

beforeAll(async () => {
  seeded = cloud()
  // 'spare': a freshly synced cell database no cell_mappings row names.
  world = await repairWorld('adv_wrongdb', seeded.snapshot, ['cell1', 'spare'])
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-wrongdb-'))
  src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
}, 120_000)

afterAll(async () => {
  await world?.drop()
})

type Writes = (plan: RepairPlan) => number
const count =
  (table: string, op: string): Writes =>
  (plan) =>
    plan.steps.filter((s) => s.table === table && s.op === op).length

interface Case {
  name: string
  setup: () => Promise<string[]>
  teardown?: () => Promise<void>
  /** The evidence the refusal names. */
  evidence: () => RegExp[]
  /** What the unguarded plan would do, per command: the damage issue 25 found. */
  damage: Record<string, Writes>
}

const COMMANDS: Record<string, string[]> = {
  leaks: ['repair', 'leaks'],
  providers: ['repair', 'providers'],
  'map-instances': ['cells', 'map-instances'],
  'discover-hosts': ['cells', 'discover-hosts'],
  'discover-hosts --prune': ['cells', 'discover-hosts', '--prune'],
}

/** Instances nova_api maps to cell1 and holds live (the leaked one is queued for delete): 11. */
const mapped = () =>
  seeded.snapshot.nova_api.instance_mappings.filter((m) => m.cell_id === seeded.snapshot.cells.find((c) => c.name === 'cell1')!.id && !m.queued_for_delete)
    .length
// The twin is not counted against an empty cell1: its live ERROR copy in cell0 makes its mapping a wrong-cell one.
const emptyCell1 = (db: () => string): RegExp[] => [
  re(
    `cell1's database (${db()}) has 0 of the 6 hosts that host_mappings map to cell1 and 0 of the ${mapped() - 1} live instances that instance_mappings map there: it is not cell1's database`,
  ),
]
const emptyDamage: Record<string, Writes> = {
  leaks: count('allocations', 'delete'),
  providers: count('resource_providers', 'delete'),
  'map-instances': count('instance_mappings', 'update'),
  'discover-hosts --prune': count('host_mappings', 'delete'),
}

const CASES: Case[] = [
  {
    name: 'an empty, freshly synced database as cell1 (--cell-db)',
    setup: async () => ['--cell-db', `cell1=${world.cloud.cellUrls.spare}`],
    evidence: () => emptyCell1(() => address(world.cloud.cellUrls.spare)),
    damage: emptyDamage,
  },
  {
    name: "an empty, freshly synced database as cell1 (cell1's cell_mappings URL)",
    setup: async () => {
      await sql(world.cloud.apiUrl, 'UPDATE cell_mappings SET database_connection = ? WHERE name = ?', [world.cloud.cellUrls.spare, 'cell1'])
      return []
    },
    teardown: () => sql(world.cloud.apiUrl, 'UPDATE cell_mappings SET database_connection = ? WHERE name = ?', [world.cloud.cellUrls.cell1, 'cell1']),
    evidence: () => emptyCell1(() => address(world.cloud.cellUrls.spare)),
    damage: emptyDamage,
  },
  {
    name: "cell0's database as cell1",
    setup: async () => ['--cell-db', `cell1=${world.cloud.cell0Url}`],
    evidence: () => [
      re(`cell1's database (${address(world.cloud.cell0Url)}) has 0 of the 6 hosts that host_mappings map to cell1 and 1 of the ${mapped()} live instances`),
      re(`cell1 and cell0 read the same database (${address(world.cloud.cell0Url)}, server `),
    ],
    damage: {
      leaks: count('allocations', 'delete'),
      providers: count('resource_providers', 'delete'),
      'discover-hosts --prune': count('host_mappings', 'delete'),
    },
  },
  {
    name: "cell1's database as cell0",
    setup: async () => ['--cell-db', `cell0=${world.cloud.cellUrls.cell1}`],
    evidence: () => [
      re(`cell0's database (${address(world.cloud.cellUrls.cell1)}) has 0 of the 1 live instance that instance_mappings map there`),
      re(`cell0's database (${address(world.cloud.cellUrls.cell1)}) holds 5 live nova-compute services and 5 live compute nodes, which cell0 never has`),
      re(`cell0 and cell1 read the same database (${address(world.cloud.cellUrls.cell1)}, server `),
    ],
    damage: {'discover-hosts': count('host_mappings', 'update')},
  },
  {
    name: "a second cell_mappings row with cell1's URL",
    setup: async () => {
      await sql(world.cloud.apiUrl, 'INSERT INTO cell_mappings (uuid, name, transport_url, database_connection, disabled) VALUES (?, ?, ?, ?, 0)', [
        'dddddddd-0000-4000-8000-0000000000dd',
        'cell1dup',
        'none:///',
        world.cloud.cellUrls.cell1,
      ])
      return []
    },
    teardown: () => sql(world.cloud.apiUrl, 'DELETE FROM cell_mappings WHERE name = ?', ['cell1dup']),
    evidence: () => [
      re(`cell1 and cell1dup read the same database (${address(world.cloud.cellUrls.cell1)}, server `),
      re(`cell1dup and cell1 read the same database`),
    ],
    damage: {'discover-hosts': count('host_mappings', 'update')},
  },
]

describe('a readable but wrong database is never trusted as a cell', {timeout: 600_000}, () => {
  for (const c of CASES) {
    it(`${c.name}: every writing command refuses --apply (exit 2) naming the evidence; nothing changes`, async () => {
      const extra = await c.setup()
      try {
        const audit = await cloudctl(['audit', 'cells', ...src, ...extra, '--json'])
        const doc = JSON.parse(audit.stdout) as {findings: Array<{code: string; message: string}>}
        const identity = doc.findings.filter((f) => f.code === 'cell.identity-unproven').map((f) => f.message)
        for (const e of c.evidence()) expect(identity.join('\n')).toMatch(e)

        for (const [name, args] of Object.entries(COMMANDS)) {
          // The dry run: the plan an unguarded apply would run, and the note that --apply refuses it.
          const dry = await cloudctl([...args, ...src, ...extra, '--max-delete', '1000000', '--json'])
          expect(dry.stderr, name).not.toMatch(/\n\s+at /)
          // Never 0, an empty plan included: its "nothing to do" was read from the wrong database too.
          expect(dry.exitCode, `${name}: ${dry.stdout.slice(0, 400)}`).toBe(3)
          const plan = (JSON.parse(dry.stdout) as {plan: RepairPlan}).plan
          if (c.damage[name]) expect(c.damage[name](plan), `${name}: the plan would do the damage`).toBeGreaterThan(0)
          expect(plan.notes.filter((x) => x.startsWith('--apply would be refused: ')).join('\n'), name).toMatch(c.evidence()[0])

          const before = await checksums()
          const r = await cloudctl([...args, ...src, ...extra, '--max-delete', '1000000', '--apply', '--yes', '--json', ...state()])
          expect(r.exitCode, `${name}: ${r.stdout}`).toBe(2)
          const err = (JSON.parse(r.stdout) as {error: {code: string; message: string; hint: string}}).error
          expect(err.code, name).toBe('CellIdentityUnproven')
          for (const e of c.evidence()) expect(err.message, name).toMatch(e)
          expect(err.hint).toMatch(/--cell-db/)
          expect(changed(before, await checksums()), name).toEqual([])
        }
        // Without --json: one line and the hint, no stack trace.
        const human = await cloudctl([...COMMANDS.leaks, ...src, ...extra, '--apply', '--yes', ...state()])
        expect(human.exitCode).toBe(2)
        expect(human.stderr).toMatch(c.evidence()[0])
        expect(human.stderr).not.toMatch(/\n\s+at /)
      } finally {
        await c.teardown?.()
      }
    })
  }

  it('pointed at the right databases, the same cloud proves its cells and repairs', async () => {
    const audit = await cloudctl(['audit', 'cells', ...src, '--json'])
    expect((JSON.parse(audit.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)).not.toContain('cell.identity-unproven')
    const leaks = await cloudctl([...COMMANDS.leaks, ...src, '--apply', '--yes', '--json', ...state()])
    expect(leaks.exitCode, leaks.stdout).toBe(4)
    const prune = await cloudctl([...COMMANDS['discover-hosts --prune'], ...src, '--apply', '--yes', '--json', ...state()])
    expect(prune.exitCode, prune.stdout).toBe(4)
    const map = await cloudctl([...COMMANDS['map-instances'], ...src, '--apply', '--yes', '--json', ...state()])
    expect(map.exitCode, map.stdout).toBe(4)
    const conn = await openConnection(world.cloud.apiUrl)
    try {
      const [hm] = await conn.query('SELECT host FROM host_mappings ORDER BY host')
      expect((hm as Array<{host: string}>).map((x) => x.host)).toEqual(HOSTS.slice(0, 5))
      const [im] = await conn.query('SELECT c.name FROM instance_mappings m JOIN cell_mappings c ON c.id = m.cell_id WHERE m.instance_uuid = ?', [seeded.twin])
      expect((im as Array<{name: string}>).map((x) => x.name)).toEqual(['cell1'])
    } finally {
      await closeConnection(conn)
    }
    const placement = await openConnection(world.cloud.placementUrl)
    try {
      const [rows] = await placement.query('SELECT COUNT(*) AS n FROM allocations WHERE consumer_id = ?', [seeded.leaked])
      expect((rows as Array<{n: number}>)[0].n).toBe(0)
      const [all] = await placement.query('SELECT COUNT(*) AS n FROM allocations')
      expect(Number((all as Array<{n: number}>)[0].n)).toBe(seeded.snapshot.placement.allocations.filter((a) => a.consumer_id !== seeded.leaked).length)
    } finally {
      await closeConnection(placement)
    }
    // Left: the leaked instance's old mapping (info: nova-manage db archive_deleted_rows removes it).
    const again = await cloudctl(['audit', 'cells', ...src, '--json'])
    expect((JSON.parse(again.stdout) as {findings: Array<{code: string; severity: string}>}).findings.map((f) => `${f.code} ${f.severity}`)).toEqual([
      'cell.instance-mapping-stale info',
    ])
  })
})
