/**
 * Issue 25 item 1 with real nova's rows and real processes: boots held in flight by nova's own
 * functional harness (test/realnova/boot_windows.py), dumped at that moment and loaded into
 * real-schema MariaDB databases (factory.py). Phase 2 (held-conductor: in the cell, mapping without
 * cell, build request there), phase 3 (held-claim: before instance_claim; queued: behind
 * max_concurrent_builds), a reschedule to the alternate host, a claim under way with the host set, and
 * an unshelve before its claim. `audit leaks` must judge none of them, and `repair leaks` and
 * `repair leaks --heal` (--apply --yes) must change no row: CHECKSUM TABLE of every table before and after.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'
import {closeConnection, openConnection} from '../repairs/support.js'
import {ENABLE_HINT, type RealCloud, missingNova, realCloud} from '../realnova/support.js'
import {changedTables, checksums as cloudChecksums} from './executor-support.js'

const missing = missingNova()
const available = missing.length === 0
if (!available && process.env.CI !== 'true') console.warn(ENABLE_HINT)

describe.runIf(!available && process.env.CI === 'true')('boot windows on CI', () => {
  it('has real nova installed', () => {
    expect(missing, ENABLE_HINT).toEqual([])
  })
})

interface Finding {
  code: string
  severity: string
  subject: {consumer_uuid?: string; instance_uuid?: string}
}

/** What the play says each held server was doing when the rows were dumped (boot_windows.py). */
const WINDOWS: Record<string, {vm_state: string; task_state: string | null; host: string | null; mapped: boolean; buildRequest: boolean; allocatedOn: string}> =
  {
    'held-conductor': {vm_state: 'building', task_state: 'scheduling', host: null, mapped: false, buildRequest: true, allocatedOn: 'host3'},
    'held-claim': {vm_state: 'building', task_state: null, host: null, mapped: true, buildRequest: false, allocatedOn: 'host1'},
    queued: {vm_state: 'building', task_state: 'scheduling', host: null, mapped: true, buildRequest: false, allocatedOn: 'host1'},
    rescheduled: {vm_state: 'building', task_state: null, host: null, mapped: true, buildRequest: false, allocatedOn: '<alternate>'},
    claiming: {vm_state: 'building', task_state: null, host: 'host4', mapped: true, buildRequest: false, allocatedOn: 'host4'},
    unshelving: {vm_state: 'shelved_offloaded', task_state: 'spawning', host: null, mapped: true, buildRequest: false, allocatedOn: '<destination>'},
  }

describe.runIf(available)('boot windows nova itself held: nothing judged, nothing written', {timeout: 900_000}, () => {
  let cloud: RealCloud
  let servers: Record<string, string>
  let tmp: string
  let src: string[]
  const uuids = () => Object.keys(WINDOWS).map((n) => servers[n])

  const checksums = () => cloudChecksums({allDatabases: () => cloud.databases})

  beforeAll(async () => {
    cloud = await realCloud('held', 'zed', 'boot_windows')
    servers = cloud.notes.servers as Record<string, string>
    tmp = mkdtempSync(join(tmpdir(), 'cloudctl-building-'))
    src = ['--api-db', cloud.api, '--placement-db', cloud.placement]
  }, 900_000)

  afterAll(async () => {
    await cloud?.drop()
  })

  it('the rows are the windows the play held (the premise)', async () => {
    const conn = await openConnection(cloud.api)
    try {
      const db = (name: string) => cloud.databases.find((d) => d.endsWith(`_${name}`)) as string
      for (const [name, w] of Object.entries(WINDOWS)) {
        const uuid = servers[name]
        expect(uuid, name).toMatch(/^[0-9a-f-]{36}$/)
        const [inst] = await conn.query(
          `SELECT vm_state, task_state, host, node FROM \`${db('cell1')}\`.instances WHERE uuid = ? UNION ALL SELECT vm_state, task_state, host, node FROM \`${db('cell2')}\`.instances WHERE uuid = ?`,
          [uuid, uuid],
        )
        expect(inst, name).toEqual([{vm_state: w.vm_state, task_state: w.task_state, host: w.host, node: w.host}])
        const [map] = await conn.query(`SELECT cell_id FROM \`${db('api')}\`.instance_mappings WHERE instance_uuid = ?`, [uuid])
        expect((map as Array<{cell_id: number | null}>)[0].cell_id !== null, `${name} mapped`).toBe(w.mapped)
        const [br] = await conn.query(`SELECT COUNT(*) AS n FROM \`${db('api')}\`.build_requests WHERE instance_uuid = ?`, [uuid])
        expect(Number((br as Array<{n: number}>)[0].n), `${name} build request`).toBe(w.buildRequest ? 1 : 0)
        const [on] = await conn.query(
          `SELECT DISTINCT rp.name FROM \`${db('placement')}\`.allocations a JOIN \`${db('placement')}\`.resource_providers rp ON rp.id = a.resource_provider_id WHERE a.consumer_id = ?`,
          [uuid],
        )
        const names = (on as Array<{name: string}>).map((r) => r.name)
        expect(names, `${name} allocations`).toHaveLength(1)
        if (!w.allocatedOn.startsWith('<')) expect(names[0]).toBe(w.allocatedOn)
      }
      // The reschedule left its first host: the allocations are on the alternate.
      const from = (cloud.notes.rescheduled_from as Record<string, string>).rescheduled
      const [alt] = await conn.query(
        `SELECT DISTINCT rp.name FROM \`${db('placement')}\`.allocations a JOIN \`${db('placement')}\`.resource_providers rp ON rp.id = a.resource_provider_id WHERE a.consumer_id = ?`,
        [servers.rescheduled],
      )
      expect((alt as Array<{name: string}>)[0].name).not.toBe(from)
    } finally {
      await closeConnection(conn)
    }
  })

  it('audit leaks: no finding about any of them (exit 0)', async () => {
    await cloud.freshen()
    const r = await cloudctl(['audit', 'leaks', ...src, '--json'])
    const doc = JSON.parse(r.stdout) as {findings: Finding[]}
    expect(doc.findings.filter((f) => uuids().includes(f.subject.consumer_uuid ?? f.subject.instance_uuid ?? '')).map((f) => f.code)).toEqual([])
    expect(doc.findings.map((f) => `${f.severity} ${f.code}`)).toEqual([])
    expect(r.exitCode).toBe(0)
  })

  it('audit all: no finding at all (cells: phase 2 is the conductor at work; usage: the claim under way)', async () => {
    await cloud.freshen()
    const r = await cloudctl(['audit', 'all', ...src, '--json'])
    const doc = JSON.parse(r.stdout) as {findings: Finding[]}
    expect(doc.findings.map((f) => `${f.severity} ${f.code} ${f.subject.consumer_uuid ?? f.subject.instance_uuid ?? ''}`)).toEqual([])
    expect(r.exitCode).toBe(0)
  })

  for (const args of [
    ['repair', 'leaks'],
    ['repair', 'leaks', '--heal'],
  ]) {
    it(`${args.join(' ')} --apply --yes: exit 0, every table's CHECKSUM unchanged`, async () => {
      const before = await checksums()
      const name = args.join('-')
      const r = await cloudctl([
        ...args,
        ...src,
        '--apply',
        '--yes',
        '--json',
        '--undo-dir',
        join(tmp, `undo-${name}`),
        '--audit-log',
        join(tmp, `${name}.log`),
      ])
      expect(r.stderr).not.toMatch(/\n\s+at /)
      expect(r.exitCode, r.stdout).toBe(0)
      expect(changedTables(before, await checksums())).toEqual([])
    })
  }
})
