/**
 * Repair test harness on the real MariaDB: seed a builder cloud, capture it live, plan, apply through
 * the real executor, and compare full table contents of every database before and after.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {captureLive} from '../../src/lib/db/capture.js'
import {type Connection, closeConnection, openConnection} from '../../src/lib/db/connection.js'
import {type ExecuteHooks, type ExecuteResult, executePlan} from '../../src/lib/db/repair/executor.js'
import {buildModel, type CloudModel} from '../../src/lib/domain/model.js'
import type {Finding} from '../../src/lib/domain/finding.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {applyPlan} from '../../src/lib/repairs/apply.js'
import type {DbKey, RepairPlan} from '../../src/lib/repairs/plan.js'
import {type TestCloud, createTestCloud, seedSnapshot, sortLikeCapture} from '../support/db.js'

export type Dump = Map<string, Map<string, string>> // "db/table" -> row key -> JSON of the row

export interface RepairWorld {
  cloud: TestCloud
  snapshot: Snapshot
  /** DbKey -> URL */
  urls: Map<DbKey, string>
  connect: (db: DbKey) => Promise<Connection>
  capture(): Promise<Snapshot>
  model(): Promise<CloudModel>
  dump(): Promise<Dump>
  apply(plan: RepairPlan, hooks?: ExecuteHooks): Promise<ExecuteResult>
  tmp: string
  /** GET_LOCK name of this world: test files share one server and run in parallel. */
  lockName: string
  drop(): Promise<void>
}

export async function repairWorld(prefix: string, snapshot: Snapshot, cells: string[] = ['cell1']): Promise<RepairWorld> {
  const cloud = await createTestCloud(prefix, {cells})
  await seedSnapshot(snapshot, cloud)
  const urls = new Map<DbKey, string>([
    ['nova_api', cloud.apiUrl],
    ['placement', cloud.placementUrl],
  ])
  for (const c of snapshot.cells) {
    const url = c.is_cell0 ? cloud.cell0Url : c.name ? cloud.cellUrls[c.name] : undefined
    if (url) urls.set(`cell:${c.uuid}`, url)
  }
  const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-repair-'))
  const connect = async (db: DbKey) => {
    const url = urls.get(db)
    if (!url) throw new Error(`no test database for ${db}`)
    return openConnection(url, {label: db})
  }
  const world: RepairWorld = {
    cloud,
    snapshot,
    urls,
    connect,
    tmp,
    lockName: `cloudctl-repair-test-${cloud.databases.api}`,
    capture: () => captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}),
    model: async () => buildModel(await world.capture()),
    dump: () => dumpAll(urls),
    apply: (plan, hooks) =>
      executePlan(plan, {
        connect,
        undoFile: join(tmp, `undo-${Date.now()}-${Math.random().toString(16).slice(2)}.json`),
        auditLog: join(tmp, 'audit.log'),
        operator: 'test',
        hooks,
        lockName: world.lockName,
      }),
    drop: () => cloud.drop(),
  }
  return world
}

/** Every row of every table of every database, keyed by primary key (or the whole row). */
export async function dumpAll(urls: Map<DbKey, string>): Promise<Dump> {
  const out: Dump = new Map()
  const seen = new Set<string>()
  for (const [db, url] of urls) {
    if (seen.has(url)) continue
    seen.add(url)
    const conn = await openConnection(url, {label: db})
    try {
      const [tables] = await conn.query('SHOW TABLES')
      for (const t of tables as Array<Record<string, string>>) {
        const name = Object.values(t)[0]
        const [rows] = await conn.query(`SELECT * FROM \`${name}\``)
        const m = new Map<string, string>()
        for (const r of rows as Array<Record<string, unknown>>) {
          const json = JSON.stringify(r)
          const key = 'id' in r ? String(r.id) : json
          m.set(key, json)
        }
        out.set(`${db}/${name}`, m)
      }
    } finally {
      await closeConnection(conn)
    }
  }
  return out
}

export interface RowChange {
  table: string // 'placement/allocations'
  key: string
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

export function diffDumps(a: Dump, b: Dump): RowChange[] {
  const out: RowChange[] = []
  for (const table of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(table) ?? new Map()
    const y = b.get(table) ?? new Map()
    for (const key of new Set([...x.keys(), ...y.keys()])) {
      const before = x.get(key)
      const after = y.get(key)
      if (before === after) continue
      out.push({table, key, before: before ? JSON.parse(before) : null, after: after ? JSON.parse(after) : null})
    }
  }
  return out.sort((p, q) => p.table.localeCompare(q.table) || Number(p.key) - Number(q.key))
}

/** Findings of the given codes on a fresh capture. */
export async function findingsOf(world: RepairWorld, codes: string[]): Promise<Finding[]> {
  const model = await world.model()
  return runChecks(model).findings.filter((f) => codes.includes(f.code))
}

export function tableChanges(changes: RowChange[], table: string): RowChange[] {
  return changes.filter((c) => c.table === table)
}

/** What applyPlan writes for NOW in the expected state; the database holds the commit time there. */
const NOW_MARK = '<now>'

/** 'YYYY-MM-DD HH:MM:SS' (UTC) of this moment, second-rounded down: every NOW the executor writes after it is at or past it. */
export function dbNow(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ')
}

/**
 * The tables of `actual` (a capture after --apply) are exactly applyPlan(before, plan): every row,
 * every column the snapshot holds. Where the plan wrote NOW, the database holds a time at or after
 * `since` (taken just before the apply).
 */
export function expectAppliedState(actual: Snapshot, before: Snapshot, plan: RepairPlan, since: string): void {
  const expected = sortLikeCapture(applyPlan(before, plan, {now: NOW_MARK}))
  const got = sortLikeCapture(actual)
  const tables = (s: Snapshot) => ({cells: s.cells, nova_api: s.nova_api, nova: s.nova, placement: s.placement})
  const exp = tables(expected) as unknown as Record<string, Record<string, Array<Record<string, unknown>>> | unknown[]>
  const act = structuredClone(tables(got)) as unknown as typeof exp
  for (const [group, byTable] of Object.entries(exp)) {
    if (Array.isArray(byTable)) continue
    for (const [table, rows] of Object.entries(byTable)) {
      const actualRows = (act[group] as Record<string, Array<Record<string, unknown>>>)[table] ?? []
      rows.forEach((row, i) => {
        for (const [col, v] of Object.entries(row)) {
          if (v !== NOW_MARK || !actualRows[i]) continue
          const at = String(actualRows[i][col])
          if (at >= since) actualRows[i][col] = NOW_MARK
        }
      })
    }
  }
  expect(act).toEqual(exp)
}

export {closeConnection, openConnection}
