/**
 * Issue 25, item 10: a repair that could not read a cell exited 0 "Nothing to do." (`repair pinning`,
 * `repair usage`, `repair aggregates`, in every outage mode). The rule, for every repair command: never
 * exit 0 while a cell was not read. A dry run (or an empty plan, --apply included) names each unread cell
 * and that its hosts and instances were not examined, and exits 3; nothing is written. Real processes, a
 * real-schema MariaDB, CHECKSUM TABLE of every table before and after.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'
import {CloudBuilder} from '../support/builders.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {checksums as cloudChecksums} from './executor-support.js'

let world: RepairWorld
let src: string[]
let tmp: string

beforeAll(async () => {
  const b = new CloudBuilder({seed: 1025, requestSpecs: false})
  b.addCell('cell1')
  b.addCell('cell2')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addFlavor({name: 'm1.pinned', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  b.addHost('cell1', {host: 'c1-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500, cpu_dedicated_set: '4-7,12-15'})
  b.addHost('cell2', {host: 'c2-cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addInstance('c1-cmp1', 'm1.pinned', {pin: [4, 5]})
  b.addInstance('c2-cmp1', 'm1.small')
  b.addAggregate({name: 'agg1', hosts: ['c1-cmp1', 'c2-cmp1']})
  world = await repairWorld('adv_outexit', b.build(), ['cell1', 'cell2'])
  src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-outexit-'))
}, 120_000)

afterAll(async () => {
  await world?.drop()
})

async function onCell1(statement: string): Promise<void> {
  const conn = await openConnection(world.cloud.cellUrls.cell1)
  try {
    await conn.query(statement)
  } finally {
    await closeConnection(conn)
  }
}

const checksums = () => cloudChecksums(world.cloud)

const cell1Url = () => world.cloud.cellUrls.cell1
const OUTAGES: Array<{name: string; args: () => string[]; setup?: string; teardown?: string}> = [
  {name: 'unreachable (nothing listens on the port)', args: () => ['--cell-db', 'cell1=mysql+pymysql://root@127.0.0.1:3399/nova_cell1?connect_timeout=3']},
  {name: 'wrong password', args: () => ['--cell-db', `cell1=${cell1Url().replace(/\/\/[^@/]*@/, '//cloudctl_nobody:Wr0ng-Pw-1025@')}`]},
  {name: 'a database that does not exist', args: () => ['--cell-db', `cell1=${cell1Url().replace(/\/([^/?]+)(\?|$)/, '/$1_gone$2')}`]},
  {
    name: 'a column nova needs is gone',
    args: () => [],
    setup: 'ALTER TABLE instances RENAME COLUMN vm_state TO vm_state_gone',
    teardown: 'ALTER TABLE instances RENAME COLUMN vm_state_gone TO vm_state',
  },
  {
    name: 'a table nova needs is gone',
    args: () => [],
    setup: 'RENAME TABLE compute_nodes TO compute_nodes_gone',
    teardown: 'RENAME TABLE compute_nodes_gone TO compute_nodes',
  },
]

const REPAIRS: string[][] = [
  ['repair', 'pinning'],
  ['repair', 'usage'],
  ['repair', 'aggregates'],
  ['repair', 'aggregates', '--prune'],
  ['repair', 'leaks'],
  ['repair', 'leaks', '--heal'],
  ['repair', 'providers'],
  ['cells', 'map-instances'],
  ['cells', 'discover-hosts'],
]

describe('a repair that could not read a cell never exits 0', {timeout: 600_000}, () => {
  it('with every cell readable the same repairs have nothing to do (exit 0): the premise', async () => {
    for (const args of REPAIRS) {
      const r = await cloudctl([...args, ...src])
      expect(r.exitCode, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0)
    }
  })

  for (const outage of OUTAGES) {
    it(`cell1 ${outage.name}: every repair exits 3 naming cell1, dry run and --apply, nothing written`, async () => {
      if (outage.setup) await onCell1(outage.setup)
      try {
        const before = await checksums()
        for (const args of REPAIRS) {
          const dry = await cloudctl([...args, ...src, ...outage.args()])
          const what = `${args.join(' ')}: ${dry.stdout}${dry.stderr}`
          expect(dry.exitCode, what).toBe(3)
          expect(dry.stdout, what).toMatch(
            /cell=cell1\b.*cell could not be read \(.+\): its (hosts|instances|hosts and instances) (are left for a later run|were not examined)|cell=cell1\b.*a cell could not be read/,
          )
          expect(dry.stdout + dry.stderr).not.toMatch(/^Nothing to do\.$/m)

          const json = await cloudctl([...args, ...src, ...outage.args(), '--json'])
          expect(json.exitCode).toBe(3)
          const plan = (JSON.parse(json.stdout) as {plan: {skipped: Array<{code: string; subject: string; reason: string}>}}).plan
          expect(
            plan.skipped.some((s) => s.subject.split(' ').includes('cell=cell1') && /could not be read/.test(s.reason)),
            JSON.stringify(plan.skipped),
          ).toBe(true)

          const applied = await cloudctl([
            ...args,
            ...src,
            ...outage.args(),
            '--apply',
            '--yes',
            '--undo-dir',
            join(tmp, 'undo'),
            '--audit-log',
            join(tmp, 'audit.log'),
          ])
          expect(applied.exitCode, `${args.join(' ')} --apply: ${applied.stdout}${applied.stderr}`).toBe(3)
        }
        expect(await checksums()).toEqual(before)
      } finally {
        if (outage.teardown) await onCell1(outage.teardown)
      }
    })
  }
})
