/**
 * Issue 25, item 7, with real processes on a real-schema MariaDB: resource providers whose
 * parent_provider_id chain is a loop (placement refuses to write one; hand edits and bad restores do
 * not). `repair leaks --heal` walked such a tree forever ("Fatal JavaScript invalid size error",
 * rc 133, 2.5 GB). Every command must finish with a documented exit code in bounded memory, the audit
 * must name the loop (provider.tree-loop), and no repair may write (or plan) on such a tree: CHECKSUM
 * TABLE of every table is the same before and after `--apply --yes`.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {cloudctl} from '../support/cli.js'
import {CloudBuilder} from '../support/builders.js'
import {addAllocations} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {checksums as cloudChecksums} from './executor-support.js'

/** A runaway walk dies of this heap instead of eating the machine; a correct run needs far less. */
const BOUNDED = {NODE_OPTIONS: '--max-old-space-size=192'}

interface Seeded {
  snapshot: Snapshot
  /** Live on cmp1 with a stray allocation on cmp2: wrong-provider, moved by --heal (the walk that hung). */
  alive: string
  /** Deleted with its allocations kept on cmp4, away from every loop. */
  leaked: string
}

function cloud(): Seeded {
  const b = new CloudBuilder({seed: 725, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  for (const host of ['cmp1', 'cmp2', 'cmp3', 'cmp4']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 32768, local_gb: 500})
  const alive = b.addInstance('cmp1', 'm1.small').row.uuid
  b.addInstance('cmp2', 'm1.small')
  b.addInstance('cmp3', 'm1.small')
  const leaked = b.addInstance('cmp4', 'm1.small').row.uuid
  b.deleteInstance(leaked, {keepAllocations: true})
  const s = b.build()
  addAllocations(s, alive, 'cmp2', {0: 1})
  return {snapshot: s, alive, leaked}
}

let world: RepairWorld
let seeded: Seeded
let src: string[]
let tmp: string
let ids: Record<string, number>

async function sql(statements: Array<[string, unknown[]]>): Promise<void> {
  const conn = await openConnection(world.cloud.placementUrl)
  try {
    for (const [q, p] of statements) await conn.query(q, p)
  } finally {
    await closeConnection(conn)
  }
}

const checksums = () => cloudChecksums(world.cloud)

/** Each provider back to a root of its own, as placement wrote it. */
const RESET: Array<[string, unknown[]]> = [['UPDATE resource_providers SET parent_provider_id = NULL, root_provider_id = id', []]]
const parent = (child: string, of: string): [string, unknown[]] => ['UPDATE resource_providers SET parent_provider_id = ? WHERE id = ?', [ids[of], ids[child]]]
const root = (rp: string, of: string): [string, unknown[]] => ['UPDATE resource_providers SET root_provider_id = ? WHERE id = ?', [ids[of], ids[rp]]]

const LOOPS: Array<{name: string; members: string[]; set: () => Array<[string, unknown[]]>}> = [
  {name: "two providers that are each other's parent", members: ['cmp1', 'cmp2'], set: () => [parent('cmp1', 'cmp2'), parent('cmp2', 'cmp1')]},
  {
    name: 'a three-provider cycle, root_provider_id NULL',
    members: ['cmp1', 'cmp2', 'cmp3'],
    set: () => [
      parent('cmp1', 'cmp2'),
      parent('cmp2', 'cmp3'),
      parent('cmp3', 'cmp1'),
      ['UPDATE resource_providers SET root_provider_id = NULL WHERE id IN (?, ?, ?)', [ids.cmp1, ids.cmp2, ids.cmp3]],
    ],
  },
  {name: 'a self-parent', members: ['cmp2'], set: () => [parent('cmp2', 'cmp2')]},
  {name: 'root_provider_id pointing into a loop', members: ['cmp2', 'cmp3'], set: () => [parent('cmp2', 'cmp3'), parent('cmp3', 'cmp2'), root('cmp1', 'cmp3')]},
]

const COMMANDS: string[][] = [
  ['audit', 'all'],
  ['audit', 'providers'],
  ['repair', 'leaks'],
  ['repair', 'leaks', '--heal'],
  ['repair', 'providers'],
  ['repair', 'aggregates'],
  ['simulate', 'boot', '--flavor', 'm1.small'],
  ['simulate', 'capacity'],
  ['hosts', 'list'],
]

beforeAll(async () => {
  seeded = cloud()
  world = await repairWorld('adv_rploop', seeded.snapshot, ['cell1'])
  src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-rploop-'))
  ids = Object.fromEntries(seeded.snapshot.placement.resource_providers.map((rp) => [rp.name as string, rp.id]))
}, 120_000)

afterAll(async () => {
  await world?.drop()
})

const state = (name: string) => ['--undo-dir', join(tmp, `undo-${name}`), '--audit-log', join(tmp, `${name}.log`)]

describe('a parent_provider_id loop: every command finishes, the audit names it, no repair writes on it', {timeout: 300_000}, () => {
  for (const loop of LOOPS) {
    it(loop.name, async () => {
      await sql([...RESET, ...loop.set()])
      const before = await checksums()

      for (const args of COMMANDS) {
        const r = await cloudctl([...args, ...src], {env: BOUNDED, timeout: 60_000})
        const what = `${args.join(' ')}: ${r.stderr.slice(0, 400)}`
        expect([0, 2, 3], what).toContain(r.exitCode)
        expect(r.stderr, what).not.toMatch(/fatal|heap|\n\s+at /i)
      }

      const audit = await cloudctl(['audit', 'providers', ...src, '--json'], {env: BOUNDED})
      const loops = (JSON.parse(audit.stdout) as {findings: Array<{code: string; evidence: {loop?: Array<{id: number}>}}>}).findings.filter(
        (f) => f.code === 'provider.tree-loop',
      )
      expect(loops).toHaveLength(1)
      expect(loops[0].evidence.loop?.map((p) => p.id).sort()).toEqual(loop.members.map((m) => ids[m]).sort())

      // The wrong-provider move and the leak removal both touch the loop: refused, with the loop named.
      for (const args of [
        ['repair', 'leaks', '--heal'],
        ['repair', 'leaks'],
      ]) {
        const r = await cloudctl([...args, ...src, '--apply', '--yes', ...state(`${loop.members.join('-')}-${args.length}`)], {env: BOUNDED})
        expect(r.exitCode, r.stderr).toBe(2)
        expect(r.stderr).toMatch(/^Error: refusing to plan repair leaks: .*parent_provider_id loop/m)
        expect(r.stderr).toMatch(/^Hint: /m)
      }
      expect(await checksums()).toEqual(before)
    })
  }

  it('a loop elsewhere does not stop a repair that does not touch it', async () => {
    await sql([...RESET, parent('cmp1', 'cmp2'), parent('cmp2', 'cmp1')])
    const r = await cloudctl(['repair', 'leaks', '--consumer', seeded.leaked, ...src, '--json'], {env: BOUNDED})
    expect(r.exitCode, r.stderr).toBe(3)
    const plan = (JSON.parse(r.stdout) as {plan: {steps: Array<{op: string; table: string; key?: {id: number}}>}}).plan
    expect(plan.steps.filter((s) => s.op === 'delete' && s.table === 'allocations')).toHaveLength(3)
  })
})
