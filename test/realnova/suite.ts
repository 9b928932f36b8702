/**
 * The scenario suite both releases run on the clouds their own nova wrote (test/realnova/audit.test.ts:
 * the host's Zed; test/releases/realnova.test.ts: nova 31 in the Epoxy chroot): each scenario is played
 * by that nova's API, conductor, scheduler, libvirt computes (fake libvirt) and placement, loaded into
 * that release's schemas and audited; the error/warning codes must be exactly the scenario's own
 * (expectations.ts), the repairs must leave what it says, and that release's nova-manage and
 * placement-api judge the repaired databases.
 */
import {mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {changedTables, checksums, paused, startCli} from '../adversarial/executor-support.js'
import {cloudctl} from '../support/cli.js'
import type {DbKey} from '../../src/lib/repairs/plan.js'
import {type Dump, type RowChange, closeConnection, diffDumps, dumpAll, openConnection} from '../repairs/support.js'
import {type Scenario, scenariosOf} from './expectations.js'
import {
  type PlacementServer,
  type PlayDriver,
  type RealCloud,
  type RealNovaRelease,
  novaManage,
  playScenarios,
  realCloud,
  rebootRepaired,
  repairedRows,
  startPlacement,
} from './support.js'

interface Finding {
  code: string
  severity: string
  subject: Record<string, unknown>
}

async function audit(cloud: RealCloud): Promise<{exitCode: number; findings: Finding[]; release: {name?: string} | null}> {
  await cloud.freshen()
  const r = await cloudctl(['audit', 'all', '--json', '--api-db', cloud.api, '--placement-db', cloud.placement])
  if (r.exitCode !== 0 && r.exitCode !== 3) throw new Error(`audit exited ${r.exitCode}: ${r.stdout}${r.stderr}`)
  const doc = JSON.parse(r.stdout) as {findings: Finding[]; release: {name?: string} | null}
  return {exitCode: r.exitCode, findings: doc.findings, release: doc.release}
}

interface ManageSummary {
  exit: number
  /** "Allocations for consumer UUID … can be deleted" lines. */
  orphaned: number
  /** "The compute node for UUID … can not be found" lines. */
  nodeless: number
}
const summarize = (r: {exitCode: number; output: string}): ManageSummary => ({
  exit: r.exitCode,
  orphaned: [...r.output.matchAll(/Allocations for consumer UUID \S+ on Resource Provider \S+ can be deleted/g)].length,
  nodeless: [...r.output.matchAll(/The compute node for UUID \S+ can not be\s+found/g)].length,
})
const manageText = (m?: ManageSummary) =>
  m ? `exit ${m.exit}: ${m.orphaned} orphaned allocation(s), ${m.nodeless} provider(s) without compute node` : 'not run'

const incidents = (fs: Finding[]): string[] => [...new Set(fs.filter((f) => f.severity === 'error' || f.severity === 'warning').map((f) => f.code))].sort()

/** `instance provider` pairs: instances live-migrating (migration in progress) to that provider's node. */
async function liveMigrationDestinations(cloud: RealCloud): Promise<Set<string>> {
  const out = new Set<string>()
  const providers = new Map<string, string>()
  const pc = await openConnection(cloud.placement)
  try {
    const [rows] = await pc.query('SELECT uuid, name FROM resource_providers')
    for (const r of rows as Array<{uuid: string; name: string}>) providers.set(r.name, r.uuid)
  } finally {
    await closeConnection(pc)
  }
  for (const url of Object.values(cloud.cells)) {
    const c = await openConnection(url)
    try {
      const [rows] = await c.query(
        "SELECT instance_uuid, dest_node FROM migrations WHERE deleted = 0 AND migration_type = 'live-migration' AND status IN ('queued', 'preparing', 'running')",
      )
      for (const r of rows as Array<{instance_uuid: string; dest_node: string}>) {
        const rp = providers.get(r.dest_node)
        if (rp) out.add(`${r.instance_uuid} ${rp}`)
      }
    } finally {
      await closeConnection(c)
    }
  }
  return out
}

/** Sharing providers (MISC_SHARES_VIA_AGGREGATE) by uuid, and `consumer provider` pairs of what live servers and migrations in progress hold there. */
async function sharingHeld(cloud: RealCloud): Promise<{providers: Set<string>; held: Set<string>}> {
  const pc = await openConnection(cloud.placement)
  const providers = new Set<string>()
  const pairs: Array<[string, string]> = []
  try {
    const [rps] = await pc.query(
      "SELECT rp.uuid FROM resource_providers rp JOIN resource_provider_traits rt ON rt.resource_provider_id = rp.id JOIN traits t ON t.id = rt.trait_id WHERE t.name = 'MISC_SHARES_VIA_AGGREGATE'",
    )
    for (const r of rps as Array<{uuid: string}>) providers.add(r.uuid)
    const [rows] = await pc.query(
      "SELECT DISTINCT a.consumer_id, rp.uuid FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_provider_traits rt ON rt.resource_provider_id = rp.id JOIN traits t ON t.id = rt.trait_id WHERE t.name = 'MISC_SHARES_VIA_AGGREGATE'",
    )
    for (const r of rows as Array<{consumer_id: string; uuid: string}>) pairs.push([r.consumer_id, r.uuid])
  } finally {
    await closeConnection(pc)
  }
  const live = new Set<string>()
  for (const url of Object.values(cloud.cells)) {
    const c = await openConnection(url)
    try {
      const [inst] = await c.query('SELECT uuid FROM instances WHERE deleted = 0')
      for (const r of inst as Array<{uuid: string}>) live.add(r.uuid)
      const [migs] = await c.query(
        "SELECT uuid FROM migrations WHERE deleted = 0 AND status IN ('queued', 'pre-migrating', 'migrating', 'post-migrating', 'finished', 'running', 'preparing', 'accepted')",
      )
      for (const r of migs as Array<{uuid: string}>) live.add(r.uuid)
    } finally {
      await closeConnection(c)
    }
  }
  return {providers, held: new Set(pairs.filter(([consumer]) => live.has(consumer)).map(([consumer, rp]) => `${consumer} ${rp}`))}
}

interface TreeRow {
  id: number
  provider_uuid: string
  resource_provider_id: number
  parent_provider_id: number | null
  root_name: string | null
  sharing: number
}

/** The consumer's allocation rows with where they sit: the root's name, child or not, sharing or not. */
async function allocationTree(cloud: RealCloud, consumer: string): Promise<TreeRow[]> {
  const pc = await openConnection(cloud.placement)
  try {
    const [rows] = await pc.query(
      "SELECT a.id, rp.uuid AS provider_uuid, a.resource_provider_id, rp.parent_provider_id, root.name AS root_name, (SELECT COUNT(*) FROM resource_provider_traits rt JOIN traits t ON t.id = rt.trait_id WHERE rt.resource_provider_id = rp.id AND t.name = 'MISC_SHARES_VIA_AGGREGATE') AS sharing FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_providers root ON root.id = rp.root_provider_id WHERE a.consumer_id = ? ORDER BY a.id",
      [consumer],
    )
    return (rows as TreeRow[]).map((r) => ({...r, sharing: Number(r.sharing)}))
  } finally {
    await closeConnection(pc)
  }
}

/** allocationTree, read from a dump of the cloud instead of the live placement database. */
function allocationsIn(dump: Dump, consumer: string): TreeRow[] {
  const rowsOf = (table: string) => [...(dump.get(`placement/${table}`)?.values() ?? [])].map((r) => JSON.parse(r) as Record<string, unknown>)
  const providers = new Map(rowsOf('resource_providers').map((r) => [Number(r.id), r]))
  const sharingTrait = rowsOf('traits').find((t) => t.name === 'MISC_SHARES_VIA_AGGREGATE')?.id
  const sharing = new Set(
    rowsOf('resource_provider_traits')
      .filter((t) => t.trait_id === sharingTrait)
      .map((t) => Number(t.resource_provider_id)),
  )
  return rowsOf('allocations')
    .filter((a) => a.consumer_id === consumer)
    .map((a) => {
      const rp = providers.get(Number(a.resource_provider_id))
      const root = providers.get(Number(rp?.root_provider_id))
      return {
        id: Number(a.id),
        provider_uuid: String(rp?.uuid),
        resource_provider_id: Number(a.resource_provider_id),
        parent_provider_id: (rp?.parent_provider_id as number | null) ?? null,
        root_name: (root?.name as string | null) ?? null,
        sharing: sharing.has(Number(a.resource_provider_id)) ? 1 : 0,
      }
    })
    .sort((x, y) => x.id - y.id)
}

/** The rows a planted leak holds: on `tree` (root and children) and, with `sharing`, on sharing providers. */
const plantedRows = (rows: TreeRow[], p: NonNullable<Scenario['planted']>[number]): TreeRow[] =>
  rows.filter((r) => (r.sharing > 0 ? p.sharing : r.root_name === p.tree))

const placementDb = (cloud: RealCloud): string => cloud.databases.find((d) => d.endsWith('_placement')) as string

const src = (cloud: RealCloud) => ['--api-db', cloud.api, '--placement-db', cloud.placement]

// Named, not inline: prettier 3.10 needs two passes to settle an inline object return type here.
interface BlockedBoot {
  exitCode: number
  output: string
  result: {no_valid_host: boolean; instances: Array<{host: string | null}>; scheduler_release: {release: string}}
}

/** The play's blocked boot (flavor, forced host, the harness's enabled_filters) through cloudctl's engine. */
async function simulateBlockedBoot(cloud: RealCloud): Promise<BlockedBoot> {
  const b = cloud.notes.blocked_boot as {flavor: string; host: string; enabled_filters: string[]}
  await cloud.freshen()
  const args = ['simulate', 'boot', '--flavor', b.flavor, '--host', b.host, '--filters', b.enabled_filters.join(','), ...src(cloud)]
  const json = await cloudctl([...args, '--json'])
  const text = await cloudctl([...args, '--why', b.host])
  return {exitCode: json.exitCode, output: `${text.stdout}${text.stderr}${json.stderr}`, result: JSON.parse(json.stdout) as never}
}

/** Real `nova-manage cell_v2 verify_instance` for the play's duplicated instance (no placement needed). */
async function verifyDuplicate(cloud: RealCloud, release: RealNovaRelease): Promise<{exitCode: number; output: string}> {
  const uuid = String(cloud.notes.duplicate?.server)
  return novaManage(cloud, 'http://127.0.0.1:1', ['cell_v2', 'verify_instance', '--uuid', uuid], release)
}

/** The heartbeat columns RealCloud.freshen moves (the test's stand-in for running services). */
const HEARTBEAT = new Set(['created_at', 'updated_at', 'last_seen_up'])

/**
 * Row changes between two dumps, less those freshen made: services rows whose only changes are their
 * heartbeat columns, every one of them moved forward by the same time (freshen shifts every non-NULL
 * heartbeat of every cell in one UPDATE per column, so its moves are uniform; a write of its own time
 * by anything else would stand out). A repair or an undo that wrote any other column still shows.
 */
function changesBetween(a: Dump, b: Dump): RowChange[] {
  const out: RowChange[] = []
  const moves = new Set<number>()
  for (const c of diffDumps(a, b)) {
    const keys = Object.keys({...c.before, ...c.after})
    const same = (k: string) => JSON.stringify(c.before?.[k]) === JSON.stringify(c.after?.[k])
    const shifted = (k: string) => typeof c.before?.[k] === 'string' && typeof c.after?.[k] === 'string'
    if (!c.table.endsWith('/services') || !c.before || !c.after || !keys.every((k) => same(k) || (HEARTBEAT.has(k) && shifted(k)))) {
      out.push(c)
      continue
    }
    for (const k of keys) if (!same(k)) moves.add(Date.parse(String(c.after[k])) - Date.parse(String(c.before[k])))
  }
  expect([...moves].length, `heartbeats moved by different times: ${[...moves].join(', ')} ms`).toBeLessThanOrEqual(1)
  expect(
    [...moves].every((ms) => ms > 0),
    'a heartbeat moved back',
  ).toBe(true)
  return out
}

/** Every database of the cloud, for row-by-row comparisons. */
const databasesOf = (cloud: RealCloud): Map<DbKey, string> =>
  new Map<DbKey, string>([
    ['nova_api', cloud.api],
    ['placement', cloud.placement],
    ...Object.entries(cloud.cells).map(([name, url]) => [`cell:${name}`, url] as [DbKey, string]),
  ])

/**
 * What nova's instance_destroy (Zed and nova 31 alike, nova/db/main/api.py) soft-deletes with an instance, by the column
 * naming it; tags and console_auth_tokens have no deleted column and lose their rows. instance_actions
 * stay (nova keeps them as the record of a deleted instance).
 */
const INSTANCE_DESTROY_SOFT: Record<string, string> = {
  instances: 'uuid',
  instance_extra: 'instance_uuid',
  security_group_instance_association: 'instance_uuid',
  instance_info_caches: 'instance_uuid',
  instance_metadata: 'instance_uuid',
  instance_faults: 'instance_uuid',
  instance_system_metadata: 'instance_uuid',
  block_device_mapping: 'instance_uuid',
  migrations: 'instance_uuid',
  virtual_interfaces: 'instance_uuid',
  instance_id_mappings: 'uuid',
}
const INSTANCE_DESTROY_HARD: Record<string, string> = {tags: 'resource_id', console_auth_tokens: 'instance_uuid'}

/** Rows of one database that name the instance, by table (as dumped: JSON per row key). */
function rowsOfInstance(dump: Dump, db: string, uuid: string): Map<string, Array<Record<string, unknown>>> {
  const out = new Map<string, Array<Record<string, unknown>>>()
  for (const [key, rows] of dump) {
    const [d, table] = key.split('/')
    const column = INSTANCE_DESTROY_SOFT[table] ?? INSTANCE_DESTROY_HARD[table]
    if (d !== db || !column) continue
    const mine = [...rows.values()].map((r) => JSON.parse(r) as Record<string, unknown>).filter((r) => r[column] === uuid)
    if (mine.length > 0) out.set(table, mine)
  }
  return out
}

/**
 * The suite for `release`. `reportPath` (audit.test.ts passes $REALNOVA_REPORT): write, per scenario,
 * the error/warning codes before and after the repairs and what real `nova-manage placement audit
 * --verbose` reported before and after (it then also runs before the repairs, and after them where the
 * scenario keeps findings). JSON, and a markdown table beside it. `only`: the scenarios to play on
 * this release (test/releases/realnova-subset.ts); every one when absent.
 */
export function realNovaSuite(release: RealNovaRelease, available: boolean, reportPath?: string, only?: string[]): void {
  const all = scenariosOf(release)
  const unknown = (only ?? []).filter((s) => !(s in all))
  if (unknown.length > 0) throw new Error(`realNovaSuite: no scenario ${unknown.join(', ')}`)
  // $REALNOVA_ONLY=a,b: only those scenarios (to iterate on a few without playing the others).
  const picked = process.env.REALNOVA_ONLY?.split(',').filter(Boolean) ?? only
  const scenarios = picked === undefined ? all : Object.fromEntries(Object.entries(all).filter(([s]) => picked.includes(s)))
  const REPORT = reportPath
  const report: Record<
    string,
    {
      before?: string[]
      repairs?: string[]
      after?: string[]
      manageBefore?: ManageSummary
      manageAfter?: ManageSummary
      manageMissed?: string[]
      manageWrongAfter?: string[]
    }
  > = {}

  // A fresh machine plays the uncached scenarios two at a time before the first cloud is loaded.
  beforeAll(async () => {
    if (!available) return
    // One factory call per play module (each plays its uncached scenarios two at a time).
    const byDriver = new Map<PlayDriver, string[]>()
    for (const [name, spec] of Object.entries(scenarios)) byDriver.set(spec.driver ?? 'driver', [...(byDriver.get(spec.driver ?? 'driver') ?? []), name])
    for (const [driver, names] of byDriver) await playScenarios(names, 2, release, driver)
  }, 1_800_000)

  afterAll(() => {
    if (!REPORT || Object.keys(report).length === 0) return
    writeFileSync(REPORT, `${JSON.stringify(report, null, 1)}\n`)
    const rows = Object.entries(report).map(
      ([name, r]) =>
        `| ${name} | ${r.before?.join(', ') || 'none'} | ${r.repairs?.join('; ') || 'none'} | ${r.after?.join(', ') || 'none'} | ${manageText(r.manageBefore)}${r.manageMissed?.length ? `; blind to ${r.manageMissed.length} planted part(s)` : ''} | ${manageText(r.manageAfter)}${r.manageWrongAfter?.length ? ` (${r.manageWrongAfter.length} of them live rows on a sharing provider)` : ''} |`,
    )
    writeFileSync(
      `${REPORT}.md`,
      [
        '| scenario | codes before | repairs | codes after repairs | nova-manage placement audit before | after |',
        '|---|---|---|---|---|---|',
        ...rows,
        '',
      ].join('\n'),
    )
  })

  describe.runIf(available).each(Object.entries(scenarios))(`real nova ${release === 'zed' ? '' : `${release} `}scenario %s`, (scenario, spec) => {
    let cloud: RealCloud | undefined
    let placement: PlacementServer | undefined
    let stateDir: string
    /** Every row before the repairs (duplicate scenarios: the repair's reach and its undo are compared with it). */
    let beforeRepairs: Dump | undefined
    let repairChanges: RowChange[] = []
    /** CHECKSUM TABLE of every placement table before the repairs (planted leaks: their undo must restore it). */
    let placementSums: Map<string, string> | undefined
    /** Undo files of the repairs, in the order they ran. */
    const undoFiles: string[] = []

    beforeAll(async () => {
      stateDir = mkdtempSync(join(tmpdir(), 'realnova-state-'))
      cloud = await realCloud(scenario, release, spec.driver)
    }, 900_000)

    afterAll(async () => {
      await placement?.stop()
      await cloud?.drop()
      rmSync(stateDir, {recursive: true, force: true})
    })

    it(`audit all names the release ${release} and reports exactly ${spec.codes.length === 0 ? 'no error or warning' : spec.codes.join(', ')}`, async () => {
      const {exitCode, findings, release: found} = await audit(cloud as RealCloud)
      expect(found?.name).toBe(release)
      report[scenario] = {
        before: incidents(findings),
        repairs: spec.repairs.map((r) => r.slice(1).join(' ')),
        after: spec.repairs.length === 0 ? incidents(findings) : undefined,
      }
      expect(incidents(findings)).toEqual(spec.codes)
      if (findings.length === 0) expect(exitCode).toBe(0)
    })

    it.runIf(spec.refused !== undefined)(`the play saw ${release}'s nova refuse: ${String(spec.refused?.message)}`, () => {
      const note = (cloud as RealCloud).notes[spec.refused?.note ?? '']
      expect(String(note?.refused)).toMatch(spec.refused?.message as RegExp)
    })

    it.runIf(spec.blockedBoot === true)('the boot the real scheduler refused is refused by the simulation too (NUMATopologyFilter on the fault)', async () => {
      const blocked = (cloud as RealCloud).notes.blocked_boot
      expect(String(blocked?.fault)).toMatch(/^No valid host was found/)
      const sim = await simulateBlockedBoot(cloud as RealCloud)
      expect(sim.result.scheduler_release.release).toBe(release)
      expect(sim.exitCode, sim.output).toBe(3)
      expect(sim.result.no_valid_host).toBe(true)
      expect(sim.output).toMatch(/NUMATopologyFilter/)
    })

    it.runIf(spec.duplicate !== undefined)(`real nova-manage cell_v2 verify_instance: the API uses the ${spec.duplicate?.before} copy`, async () => {
      const v = await verifyDuplicate(cloud as RealCloud, release)
      expect(v.output).toContain(`is in cell: ${spec.duplicate?.before} `)
      expect(v.exitCode, v.output).toBe(0)
    })

    it.runIf(REPORT !== undefined || spec.planted !== undefined)(
      `real nova-manage placement audit before the repairs${spec.planted ? `: names ${spec.planted.some((p) => (p.manageBlind ?? 0) > 0) ? 'every planted part but those on custom-class-only children' : 'every planted part'}` : ''}`,
      async () => {
        placement ??= await startPlacement(cloud as RealCloud, release)
        const audited = await novaManage(cloud as RealCloud, placement.url, ['placement', 'audit', '--verbose'], release)
        ;(report[scenario] ??= {}).manageBefore = summarize(audited)
        const flagged = new Set(
          [...audited.output.matchAll(/Allocations for consumer UUID (\S+) on Resource Provider (\S+) can be deleted/g)].map((m) => `${m[1]} ${m[2]}`),
        )
        for (const p of spec.planted ?? []) {
          // nova-manage's unit is one consumer on one provider: each provider of the leak is a part.
          const consumer = String((cloud as RealCloud).notes[p.note]?.[p.key])
          const parts = [...new Set(plantedRows(await allocationTree(cloud as RealCloud, consumer), p).map((r) => r.provider_uuid))]
          const missed = parts.filter((rp) => !flagged.has(`${consumer} ${rp}`))
          ;((report[scenario] ??= {}).manageMissed ??= []).push(...missed.map((rp) => `${consumer} ${rp}`))
          expect(missed.length, `${p.code} of ${consumer}: parts nova-manage does not name\n${audited.output}`).toBe(p.manageBlind ?? 0)
        }
      },
      600_000,
    )

    it.runIf(spec.planted !== undefined)(
      'every planted leak is found whole: its rows on the compute node, its children and the sharing providers',
      async () => {
        const {findings} = await audit(cloud as RealCloud)
        for (const p of spec.planted ?? []) {
          const consumer = String((cloud as RealCloud).notes[p.note]?.[p.key])
          const want = plantedRows(await allocationTree(cloud as RealCloud, consumer), p)
          const found = findings.filter((f) => f.code === p.code && f.subject.consumer_uuid === consumer)
          const ids = found.flatMap((f) => ((f as unknown as {evidence: {allocations?: Array<{id: number}>}}).evidence.allocations ?? []).map((a) => a.id))
          expect(
            ids.sort((a, b) => a - b),
            `${p.code} of ${consumer}`,
          ).toEqual(want.map((r) => r.id))
          expect(
            new Set(want.filter((r) => r.parent_provider_id !== null && r.sharing === 0).map((r) => r.resource_provider_id)).size,
            `child providers of ${consumer}'s leak`,
          ).toBe(p.children)
          if (p.sharing)
            expect(
              want.some((r) => r.sharing > 0),
              `${consumer}'s leak on a sharing provider`,
            ).toBe(true)
        }
      },
    )

    it.runIf(spec.planted !== undefined)(
      'a leak repair racing a write on one provider of the tree (its generation moves) is rolled back whole',
      async () => {
        const p = (spec.planted ?? []).find((x) => x.children > 0) ?? (spec.planted ?? [])[0]
        const consumer = String((cloud as RealCloud).notes[p.note]?.[p.key])
        const rows = plantedRows(await allocationTree(cloud as RealCloud, consumer), p)
        const child = rows.find((r) => r.parent_provider_id !== null && r.sharing === 0) ?? rows[0]
        await (cloud as RealCloud).freshen()
        const before = await dumpAll(databasesOf(cloud as RealCloud))
        const raceDir = join(stateDir, 'race')
        const cli = startCli(
          ['repair', 'leaks', ...src(cloud as RealCloud), '--apply', '--yes', '--undo-dir', raceDir, '--audit-log', join(raceDir, 'audit.log')],
          'after-begin:5000',
        )
        await paused(cli)
        // What nova (or neutron) does to a child provider meanwhile: any write there moves its generation.
        const pc = await openConnection((cloud as RealCloud).placement)
        try {
          await pc.query('UPDATE resource_providers SET generation = generation + 1 WHERE id = ?', [child.resource_provider_id])
          const r = await cli.done
          expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(5)
          const changes = changesBetween(before, await dumpAll(databasesOf(cloud as RealCloud)))
          expect(changes.map((c) => [c.table, c.before?.id, Number(c.after?.generation) - Number(c.before?.generation)])).toEqual([
            ['placement/resource_providers', child.resource_provider_id, 1],
          ])
        } finally {
          await pc.query('UPDATE resource_providers SET generation = generation - 1 WHERE id = ?', [child.resource_provider_id])
          await closeConnection(pc)
        }
      },
      300_000,
    )

    it.runIf(spec.repairs.length > 0)(
      `repairs (${spec.repairs.map((r) => r.slice(1).join(' ')).join('; ')}) leave ${spec.after?.join(', ') ?? 'no error or warning'}`,
      async () => {
        if (spec.duplicate || spec.planted) beforeRepairs = await dumpAll(databasesOf(cloud as RealCloud))
        if (spec.planted) placementSums = await checksums({allDatabases: () => [placementDb(cloud as RealCloud)]})
        for (const args of spec.repairs) {
          await (cloud as RealCloud).freshen()
          const r = await cloudctl([
            ...args,
            ...src(cloud as RealCloud),
            '--apply',
            '--yes',
            '--undo-dir',
            stateDir,
            '--audit-log',
            join(stateDir, 'audit.log'),
          ])
          expect([0, 3, 4], `${args.join(' ')}: ${r.stdout}${r.stderr}`).toContain(r.exitCode)
          for (const f of readdirSync(stateDir)
            .filter((x) => x.endsWith('.json'))
            .sort())
            if (!undoFiles.includes(join(stateDir, f))) undoFiles.push(join(stateDir, f))
        }
        const {findings} = await audit(cloud as RealCloud)
        ;(report[scenario] ??= {}).after = incidents(findings)
        expect(incidents(findings)).toEqual(spec.after ?? [])
        if (beforeRepairs) repairChanges = changesBetween(beforeRepairs, await dumpAll(databasesOf(cloud as RealCloud)))
      },
      300_000,
    )

    it.runIf(spec.planted !== undefined)(
      'the leak repairs removed every planted row and bumped, guarded by its generation, every provider they held',
      async () => {
        const records: Array<{db: string; table: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null}> = []
        const {readFile} = await import('node:fs/promises')
        for (const f of undoFiles) records.push(...(JSON.parse(await readFile(f, 'utf8')) as {records: typeof records}).records)
        const deleted = records.filter((r) => r.table === 'allocations' && r.after === null).map((r) => r.before as {id: number; resource_provider_id: number})
        const bumps = new Map(
          records
            .filter((r) => r.table === 'resource_providers' && r.before && r.after)
            .map((r) => [Number(r.before?.id), [Number(r.before?.generation), Number(r.after?.generation)]]),
        )
        for (const p of spec.planted ?? []) {
          const consumer = String((cloud as RealCloud).notes[p.note]?.[p.key])
          const held = plantedRows(allocationsIn(beforeRepairs as Dump, consumer), p)
          expect(held.length).toBeGreaterThan(0)
          for (const r of held)
            expect(
              deleted.map((d) => d.id),
              `row ${r.id} of ${consumer}`,
            ).toContain(r.id)
        }
        for (const d of deleted) {
          const g = bumps.get(d.resource_provider_id)
          expect(g, `provider ${d.resource_provider_id}`).toBeDefined()
          expect((g as number[])[1]).toBe((g as number[])[0] + 1)
        }
      },
    )

    it.runIf(spec.duplicate !== undefined)("map-instances takes from the cell0 copy exactly what nova's instance_destroy would, and nothing else", () => {
      const uuid = String((cloud as RealCloud).notes.duplicate?.server)
      const buried = rowsOfInstance(beforeRepairs as Dump, 'cell:cell0', uuid)
      // The play buried the copy with what nova writes in cell0 for it: every such row must go.
      expect([...buried.keys()].sort()).toEqual([
        'block_device_mapping',
        'instance_extra',
        'instance_faults',
        'instance_id_mappings',
        'instance_info_caches',
        'instance_system_metadata',
        'instances',
        'tags',
      ])
      const expected: string[] = []
      for (const [table, rows] of buried) {
        for (const row of rows) {
          if (table in INSTANCE_DESTROY_HARD) {
            expected.push(`cell:cell0/${table} deleted ${JSON.stringify(row)}`)
            continue
          }
          if (row.deleted !== 0) continue
          // oslo.db's soft delete: deleted = id, deleted_at set, updated_at and every other column kept.
          const after = repairChanges.find((c) => c.table === `cell:cell0/${table}` && c.before?.id === row.id)?.after
          expect(after, `${table} ${String(row.id)}`).toEqual({...row, deleted: row.id, deleted_at: after?.deleted_at})
          expect(after?.deleted_at, `${table} ${String(row.id)}`).not.toBeNull()
          expected.push(`cell:cell0/${table} soft-deleted ${String(row.id)}`)
        }
      }
      const mapping = repairChanges.filter((c) => c.table === 'nova_api/instance_mappings')
      expect(mapping.map((c) => [c.before?.instance_uuid, c.after?.instance_uuid])).toEqual([[uuid, uuid]])
      expected.push('nova_api/instance_mappings updated')
      const seen = repairChanges.map((c) =>
        c.table === 'nova_api/instance_mappings'
          ? `${c.table} updated`
          : c.after === null
            ? `${c.table} deleted ${JSON.stringify(c.before)}`
            : `${c.table} soft-deleted ${String(c.before?.id)}`,
      )
      expect(seen.sort()).toEqual(expected.sort())
    })

    it.runIf(spec.blockedBoot === true)('after the repairs the simulation places that boot on its host', async () => {
      const host = String((cloud as RealCloud).notes.blocked_boot?.host)
      const sim = await simulateBlockedBoot(cloud as RealCloud)
      expect(sim.exitCode, sim.output).toBe(0)
      expect(sim.result.instances.map((i) => i.host)).toEqual([host])
    })

    it.runIf(spec.blockedBoot === true)(
      'real nova boots it there once it reads the repaired rows (the same play, the rows the repairs wrote, the same request through the API)',
      async () => {
        const blocked = (cloud as RealCloud).notes.blocked_boot as {host: string}
        const rows = await repairedRows(undoFiles)
        // The pinning and usage repairs write host2's compute node row, and nothing else.
        expect(rows.map((r) => [r.table, r.key])).toEqual([['compute_nodes', {host: blocked.host, hypervisor_hostname: blocked.host}]])
        const outcome = await rebootRepaired(scenario, rows, release)
        expect(outcome.before_repair.fault).toMatch(/^No valid host was found/)
        expect(outcome.after_repair, JSON.stringify(outcome)).toMatchObject({status: 'ACTIVE', host: blocked.host, fault: null})
      },
      900_000,
    )

    it.runIf(spec.duplicate !== undefined)(`real nova-manage cell_v2 verify_instance afterwards: the API uses the ${spec.duplicate?.after} copy`, async () => {
      const v = await verifyDuplicate(cloud as RealCloud, release)
      expect(v.output).toContain(`is in cell: ${spec.duplicate?.after} `)
      expect(v.exitCode, v.output).toBe(0)
    })

    it.runIf(spec.after === undefined)(
      'real nova-manage afterwards: no orphaned allocation, no provider without compute node, nothing to heal',
      async () => {
        placement ??= await startPlacement(cloud as RealCloud, release)
        const audited = await novaManage(cloud as RealCloud, placement.url, ['placement', 'audit', '--verbose'], release)
        ;(report[scenario] ??= {}).manageAfter = summarize(audited)
        // nova-manage judges an instance's allocations by its host alone: during a live migration the
        // instance consumer holds the destination (the migration consumer holds the source), and nova-manage
        // calls that "can be deleted" (deleting it would free a running guest's destination). Those, and
        // only those, are its known false positives; cloudctl reports nothing for them (audit above).
        const flagged = [...audited.output.matchAll(/Allocations for consumer UUID (\S+) on Resource Provider (\S+) can be deleted/g)].map(
          (m) => [m[1], m[2]] as const,
        )
        const falsePositives = await liveMigrationDestinations(cloud as RealCloud)
        // A sharing provider is its own root: nova-manage finds no compute node for it and calls every
        // row there orphaned, live servers' DISK_GB included (deleting them frees disks in use). Only
        // on scenarios that say so, and only those rows and those providers.
        const sharing = spec.manageWrong?.sharing ? await sharingHeld(cloud as RealCloud) : {providers: new Set<string>(), held: new Set<string>()}
        expect(
          flagged.filter(([consumer, rp]) => !falsePositives.has(`${consumer} ${rp}`) && !sharing.held.has(`${consumer} ${rp}`)),
          audited.output,
        ).toEqual([])
        if (spec.manageWrong?.sharing) {
          const wrong = flagged.filter(([consumer, rp]) => sharing.held.has(`${consumer} ${rp}`))
          ;(report[scenario] ??= {}).manageWrongAfter = wrong.map(([consumer, rp]) => `${consumer} ${rp}`)
          expect(wrong.length, audited.output).toBe(sharing.held.size)
        }
        const nodeless = [...audited.output.matchAll(/The compute node for UUID (\S+) can not be\s+found/g)].map((m) => m[1])
        expect(nodeless.sort(), audited.output).toEqual([...sharing.providers].sort())
        expect(audited.output).not.toMatch(/Unexpected|Traceback/)
        expect(audited.exitCode, audited.output).toBe(flagged.length === 0 ? 0 : 3)
        const healed = await novaManage(
          cloud as RealCloud,
          placement.url,
          ['placement', 'heal_allocations', '--dry-run', '--verbose', '--skip-port-allocations'],
          release,
        )
        expect(healed.output).not.toMatch(/\[dry-run\]|Traceback/)
        // heal_allocations refuses an instance with a vGPU request and stops there (exit 8): on such a
        // cloud it never gets past the first vGPU guest of a cell (manageWrong.heal says so).
        if (spec.manageWrong?.heal) expect(healed.output).toMatch(spec.manageWrong.heal.message)
        expect(healed.exitCode, healed.output).toBe(spec.manageWrong?.heal?.exit ?? 4)
      },
      600_000,
    )

    it.runIf(REPORT !== undefined && spec.after !== undefined)(
      'report: real nova-manage placement audit after the repairs',
      async () => {
        placement ??= await startPlacement(cloud as RealCloud, release)
        ;(report[scenario] ??= {}).manageAfter = summarize(await novaManage(cloud as RealCloud, placement.url, ['placement', 'audit', '--verbose'], release))
      },
      600_000,
    )

    it.runIf(spec.duplicate !== undefined || spec.planted !== undefined)(
      'repair undo puts every row back as it was before the repairs',
      async () => {
        // Latest first: each file name starts with its time stamp.
        const files = readdirSync(stateDir)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .reverse()
        expect(files).toHaveLength(spec.repairs.length)
        for (const file of files) {
          const r = await cloudctl([
            'repair',
            'undo',
            join(stateDir, file),
            ...src(cloud as RealCloud),
            '--apply',
            '--yes',
            '--undo-dir',
            join(stateDir, 'undo-of-undo'),
            '--audit-log',
            join(stateDir, 'audit.log'),
          ])
          expect(r.exitCode, `${r.stdout}${r.stderr}`).toBe(4)
        }
        expect(changesBetween(beforeRepairs as Dump, await dumpAll(databasesOf(cloud as RealCloud)))).toEqual([])
        // Placement, which nothing but the repairs and their undo wrote: every table's CHECKSUM as it was.
        if (placementSums) expect(changedTables(placementSums, await checksums({allDatabases: () => [placementDb(cloud as RealCloud)]}))).toEqual([])
      },
      300_000,
    )
  })

  describe.runIf(available && (!only || only.includes('healthy')))(`real nova${release === 'zed' ? '' : ` ${release}`}, one cell unreachable`, () => {
    let cloud: RealCloud | undefined
    let cell2Instances: string[] = []

    beforeAll(async () => {
      cloud = await realCloud('healthy', release)
      const c2 = await openConnection(cloud.cells.cell2)
      try {
        const [rows] = await c2.query('SELECT uuid FROM instances WHERE deleted = 0')
        cell2Instances = (rows as Array<{uuid: string}>).map((r) => r.uuid)
      } finally {
        await closeConnection(c2)
      }
      const api = await openConnection(cloud.api)
      try {
        // Nothing listens on port 1.
        await api.query("UPDATE cell_mappings SET database_connection = 'mysql+pymysql://root@127.0.0.1:1/nowhere' WHERE name = 'cell2'")
      } finally {
        await closeConnection(api)
      }
    }, 900_000)

    afterAll(async () => {
      await cloud?.drop()
    })

    it('reports the readable cells only, and every consumer of the dark cell is undecided', async () => {
      expect(cell2Instances.length).toBeGreaterThan(0)
      const {findings} = await audit(cloud as RealCloud)
      expect(incidents(findings)).toEqual(scenariosOf(release).healthy.codes)
      const undecided = findings.filter((f) => f.severity === 'unknown')
      expect(undecided.length).toBeGreaterThan(0)
      const text = JSON.stringify(undecided)
      for (const uuid of cell2Instances) expect(text, `consumer ${uuid} of cell2`).toContain(uuid)
      const judged = findings.filter((f) => f.severity !== 'unknown' && cell2Instances.some((u) => JSON.stringify(f).includes(u)))
      expect(judged).toEqual([])
    })
  })
}
