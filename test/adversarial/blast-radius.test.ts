/**
 * Issue 25, item 4, with real processes on a real MariaDB: a plan that deletes more than the limit
 * of a kind (10 % of the cloud's rows of it, at least 100) is refused with the numbers (exit 2,
 * CHECKSUM TABLE of every table unchanged) unless --max-delete raises the limit; then it applies.
 * The dry run shows the plan and says --apply would refuse it.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import type {RepairPlan} from '../../src/lib/repairs/plan.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {checksums as cloudChecksums} from './executor-support.js'

/**
 * 40 live instances and 40 deleted ones whose allocations leaked (3 rows each: 120 of 240 rows);
 * 10 live hosts and 110 removed by hand whose host mappings stayed (110 of 120 mappings).
 */
function cloud(): {snapshot: Snapshot; leaked: string[]} {
  const b = new CloudBuilder({seed: 2540, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.tiny', vcpus: 1, memory_mb: 256, root_gb: 1})
  for (let h = 0; h < 10; h++) b.addHost('cell1', {host: `live${h}`, vcpus: 64, memory_mb: 65536, local_gb: 2000})
  for (let h = 0; h < 110; h++) {
    b.addHost('cell1', {host: `gone${String(h).padStart(3, '0')}`, vcpus: 8, memory_mb: 8192, local_gb: 100})
    b.deleteComputeService(`gone${String(h).padStart(3, '0')}`, {keepHostMapping: true})
  }
  const leaked: string[] = []
  for (let i = 0; i < 80; i++) {
    const uuid = b.addInstance(`live${i % 10}`, 'm1.tiny').row.uuid
    if (i % 2 === 1) {
      b.deleteInstance(uuid, {keepAllocations: true})
      leaked.push(uuid)
    }
  }
  return {snapshot: b.build(), leaked}
}

let world: RepairWorld
let seeded: ReturnType<typeof cloud>
let tmp: string
let src: string[]
let runs = 0
const state = () => ['--undo-dir', join(tmp, `undo-${++runs}`), '--audit-log', join(tmp, 'audit.log')]

const checksums = () => cloudChecksums(world.cloud)

const changed = (a: Map<string, string>, b: Map<string, string>) => [...a.keys()].filter((k) => a.get(k) !== b.get(k)).sort()

async function count(url: string, sql: string): Promise<number> {
  const conn = await openConnection(url)
  try {
    const [rows] = await conn.query(sql)
    return Number((rows as Array<{n: number}>)[0].n)
  } finally {
    await closeConnection(conn)
  }
}

beforeAll(async () => {
  seeded = cloud()
  world = await repairWorld('adv_blast', seeded.snapshot, ['cell1'])
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-blast-'))
  src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
}, 120_000)

afterAll(async () => {
  await world?.drop()
})

interface Kind {
  name: string
  args: string[]
  message: string
  explicit: string
  raise: string
  /** Rows of the kind left afterwards: the plan's deletions done, nothing else. */
  after: () => Promise<number>
  left: number
}

const KINDS: Kind[] = [
  {
    name: 'repair leaks: 120 of 240 allocations',
    args: ['repair', 'leaks'],
    message: 'refusing: the plan deletes 120 of 240 allocations (50 %); the limit is 100 (10 % of 240, at least 100)',
    explicit: 'refusing: the plan deletes 120 of 240 allocations (50 %); the limit is 119 (--max-delete)',
    raise: '120',
    after: () => count(world.cloud.placementUrl, 'SELECT COUNT(*) AS n FROM allocations'),
    left: 120,
  },
  {
    name: 'cells discover-hosts --prune: 110 of 120 host mappings',
    args: ['cells', 'discover-hosts', '--prune'],
    message: 'refusing: the plan deletes or remaps 110 of 120 host mappings (92 %); the limit is 100 (10 % of 120, at least 100)',
    explicit: 'refusing: the plan deletes or remaps 110 of 120 host mappings (92 %); the limit is 109 (--max-delete)',
    raise: '110',
    after: () => count(world.cloud.apiUrl, 'SELECT COUNT(*) AS n FROM host_mappings'),
    left: 10,
  },
]

describe('the blast-radius limit', {timeout: 300_000}, () => {
  for (const k of KINDS) {
    it(`${k.name}: the dry run says --apply would refuse; --apply refuses (exit 2) with the numbers; --max-delete N applies`, async () => {
      const dry = await cloudctl([...k.args, ...src, '--json'])
      expect(dry.exitCode).toBe(3)
      const plan = (JSON.parse(dry.stdout) as {plan: RepairPlan}).plan
      expect(plan.notes).toContain(`--apply would be refused: ${k.message.replace('refusing: ', '')}`)

      const before = await checksums()
      const r = await cloudctl([...k.args, ...src, '--apply', '--yes', '--json', ...state()])
      expect(r.exitCode, r.stdout).toBe(2)
      expect((JSON.parse(r.stdout) as {error: {code: string; message: string; hint: string}}).error).toEqual({
        code: 'BlastRadius',
        message: k.message,
        hint: 'Check the cell URLs, or raise it with --max-delete N.',
        exit_code: 2,
      })
      // Human output: the line and the hint on stderr, no stack trace.
      const human = await cloudctl([...k.args, ...src, '--apply', '--yes', ...state()])
      expect(human.exitCode).toBe(2)
      expect(human.stderr).toContain(k.message)
      expect(human.stderr).toContain('--max-delete N')
      expect(human.stderr).not.toMatch(/\n\s+at /)
      // A limit named below the plan refuses too, and says whose limit it is.
      const low = await cloudctl([...k.args, ...src, '--apply', '--yes', '--json', '--max-delete', String(Number(k.raise) - 1), ...state()])
      expect(low.exitCode).toBe(2)
      expect((JSON.parse(low.stdout) as {error: {message: string}}).error.message).toBe(k.explicit)
      expect(changed(before, await checksums())).toEqual([])

      const ok = await cloudctl([...k.args, ...src, '--apply', '--yes', '--json', '--max-delete', k.raise, ...state()])
      expect(ok.exitCode, ok.stdout).toBe(4)
      expect(await k.after()).toBe(k.left)
      const again = await cloudctl([...k.args, ...src, '--json'])
      expect(again.exitCode).toBe(0)
    })
  }

  it('repair undo takes no --max-delete: an undo file restores exactly what one repair did (exit 2)', async () => {
    const r = await cloudctl(['repair', 'undo', join(tmp, 'none.json'), ...src, '--max-delete', '5', '--json'])
    expect(r.exitCode).toBe(2)
    expect((JSON.parse(r.stdout) as {error: {code: string; message: string}}).error).toMatchObject({
      code: 'UsageError',
      message: 'repair undo restores a whole undo file: --max-delete does not apply',
    })
  })

  it('what is left is what should be: the live instances keep every allocation, the live hosts their mappings', async () => {
    const conn = await openConnection(world.cloud.placementUrl)
    try {
      const [rows] = await conn.query('SELECT DISTINCT consumer_id AS c FROM allocations')
      const consumers = (rows as Array<{c: string}>).map((x) => x.c)
      expect(consumers).toHaveLength(40)
      expect(consumers.some((c) => seeded.leaked.includes(c))).toBe(false)
    } finally {
      await closeConnection(conn)
    }
    const api = await openConnection(world.cloud.apiUrl)
    try {
      const [rows] = await api.query('SELECT host FROM host_mappings ORDER BY host')
      expect((rows as Array<{host: string}>).map((x) => x.host)).toEqual(Array.from({length: 10}, (_, h) => `live${h}`))
    } finally {
      await closeConnection(api)
    }
  })
})
