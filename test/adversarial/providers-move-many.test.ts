/**
 * Issue 25, items 6 and 11, with the built CLI on MariaDB and CHECKSUM TABLE of every table.
 *
 * 6. `repair providers --strategy move` with several uuid mismatches gave every new provider the same
 *    id (the highest seen + 1): the second insert hit ER_DUP_ENTRY and the run aborted (exit 5), so
 *    only `--max-count 1` ever applied. Three mismatches are moved in one run here, then undone.
 * 11. A row the repair wrote twice (the new provider: inserted, then named; a rekeyed provider:
 *    re-keyed, then its generation bumped) made a second `repair undo` of the same file exit 5
 *    ("changed since the repair"), and so did the undo of a run killed before its COMMIT. Undo must
 *    be idempotent: the second run exits 0, "Nothing to undo", and changes nothing.
 */
import {mkdtempSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {cloudctl} from '../support/cli.js'
import {baseCloud} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'
import {changedTables, checksums, paused, startCli} from './executor-support.js'

const RENAMED = ['renamed1', 'renamed2', 'renamed3']

function mismatchCloud(): {snapshot: Snapshot; nodeUuids: string[]} {
  const {b} = baseCloud(125)
  b.addAggregate({name: 'ssd'})
  b.addInstance('compute1', 'm1.small') // bystander
  const nodeUuids: string[] = []
  for (const [i, host] of RENAMED.entries()) {
    b.addHost('cell1', {host, vcpus: 16, memory_mb: 32768, local_gb: 500, traits: ['CUSTOM_SSD'], aggregates: ['ssd']})
    if (i === 0) b.addChildProvider(host, {name: `${host}_pci_0000_81_00_0`, inventories: {CUSTOM_NIC_VF: {total: 8}}})
    b.addInstance(host, 'm1.small')
    b.addInstance(host, 'm1.small')
    // The compute node was recreated under a new uuid (a hostname change): its provider keeps the old one.
    nodeUuids.push(b.recreateComputeNode(host).current.uuid as string)
  }
  return {snapshot: b.build(), nodeUuids}
}

describe('repair providers with several uuid mismatches, and undo run twice (CLI, MariaDB)', {timeout: 300_000}, () => {
  let world: RepairWorld
  let nodeUuids: string[]
  let src: string[]
  let tmp: string

  beforeAll(async () => {
    const c = mismatchCloud()
    nodeUuids = c.nodeUuids
    world = await repairWorld('xmovemany', c.snapshot)
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-movemany-'))
    src = ['--api-db', world.cloud.apiUrl, '--placement-db', world.cloud.placementUrl]
  })
  afterAll(async () => {
    await world?.drop()
  })

  const state = (name: string) => ['--undo-dir', join(tmp, name), '--audit-log', join(tmp, `${name}.log`)]
  const undoFileOf = (name: string): string => {
    const files = readdirSync(join(tmp, name)).filter((f) => f.endsWith('.json'))
    expect(files).toHaveLength(1)
    return join(tmp, name, files[0])
  }

  async function providersByUuid(uuids: string[]): Promise<Array<{id: number; uuid: string; name: string | null; root_provider_id: number | null}>> {
    const conn = await openConnection(world.cloud.placementUrl)
    try {
      const [rows] = await conn.query('SELECT id, uuid, name, root_provider_id FROM resource_providers WHERE uuid IN (?) ORDER BY id', [uuids])
      return rows as Array<{id: number; uuid: string; name: string | null; root_provider_id: number | null}>
    } finally {
      await closeConnection(conn)
    }
  }

  async function mismatches(): Promise<string[]> {
    const r = await cloudctl(['audit', 'providers', ...src, '--json'])
    const doc = JSON.parse(r.stdout) as {findings: Array<{code: string; subject: {host?: string}}>}
    return doc.findings
      .filter((f) => f.code === 'provider.uuid-mismatch')
      .map((f) => f.subject.host ?? '')
      .sort()
  }

  /** `repair undo FILE --apply` twice: the first restores, the second finds nothing to do and changes nothing. */
  async function undoTwice(file: string, name: string, firstExit: number): Promise<void> {
    const mid = await checksums(world.cloud)
    const u1 = await cloudctl(['repair', 'undo', file, ...src, '--apply', '--yes', ...state(`${name}-u1`)])
    expect(u1.exitCode, u1.stdout + u1.stderr).toBe(firstExit)
    const after1 = await checksums(world.cloud)
    if (firstExit === 0) expect(changedTables(mid, after1)).toEqual([])
    const u2 = await cloudctl(['repair', 'undo', file, ...src, '--apply', '--yes', ...state(`${name}-u2`)])
    expect(u2.exitCode, u2.stdout + u2.stderr).toBe(0)
    expect(u2.stdout).toMatch(/Nothing to undo/)
    expect(changedTables(after1, await checksums(world.cloud))).toEqual([])
  }

  it('plants three uuid mismatches', async () => {
    expect(await mismatches()).toEqual(RENAMED)
    expect(await providersByUuid(nodeUuids)).toEqual([])
  })

  it('--strategy move applies all three in one run, each new provider with its own id; undo restores every table exactly; a second undo exits 0', async () => {
    const before = await checksums(world.cloud)
    const dry = await cloudctl(['repair', 'providers', ...src, '--strategy', 'move', '--json'])
    expect(dry.exitCode, dry.stderr).toBe(3)
    const plan = (JSON.parse(dry.stdout) as {plan: {steps: Array<{op: string; table: string; values?: {id?: number}}>}}).plan
    const ids = plan.steps.filter((s) => s.op === 'insert' && s.table === 'resource_providers').map((s) => s.values?.id)
    expect(ids).toHaveLength(3)
    expect(new Set(ids).size).toBe(3)

    const r = await cloudctl(['repair', 'providers', ...src, '--strategy', 'move', '--apply', '--yes', ...state('move')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(4)
    const created = await providersByUuid(nodeUuids)
    expect(created.map((p) => p.id).sort()).toEqual([...ids].sort())
    expect(created.map((p) => p.name).sort()).toEqual(RENAMED)
    for (const p of created) expect(p.root_provider_id).toBe(p.id)
    expect(await mismatches()).toEqual([])
    expect(changedTables(before, await checksums(world.cloud)).length).toBeGreaterThan(0)

    await undoTwice(undoFileOf('move'), 'move', 4)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
    expect(await mismatches()).toEqual(RENAMED)
  })

  it('--strategy rekey (the provider row written twice: uuid, then generation): undo exact, a second undo exits 0', async () => {
    const before = await checksums(world.cloud)
    const r = await cloudctl(['repair', 'providers', ...src, '--strategy', 'rekey', '--apply', '--yes', ...state('rekey')])
    expect(r.exitCode, r.stdout + r.stderr).toBe(4)
    expect((await providersByUuid(nodeUuids)).map((p) => p.name).sort()).toEqual(RENAMED)
    await undoTwice(undoFileOf('rekey'), 'rekey', 4)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })

  it('a move killed before its COMMIT (undo file written): nothing changed, and its undo exits 0 twice', async () => {
    const before = await checksums(world.cloud)
    const cli = startCli(['repair', 'providers', ...src, '--strategy', 'move', '--apply', '--yes', ...state('killed')], 'after-undo:60000')
    await paused(cli)
    cli.kill('SIGKILL')
    const r = await cli.done
    expect(r.exitCode).not.toBe(4)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
    await undoTwice(undoFileOf('killed'), 'killed', 0)
    expect(changedTables(before, await checksums(world.cloud))).toEqual([])
  })
})
