/**
 * The scheduler view (db/read-scheduler.ts) against the full read, on one generated cloud in
 * MariaDB (nova's real Zed schemas when nova is installed, else the test schemas): for each question
 * `simulate boot`, `simulate capacity` and `simulate migrate` ask, the view their command reads must
 * give exactly the document the full read gives: hosts, weights, verdicts, claims.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {capacityWhatIf} from '../../src/lib/capacity/what-if.js'
import {type BootFlagValues, parseBootFlags, resolveBootRequest} from '../../src/lib/cli/boot-flags.js'
import {bootRequestFromSpec} from '../../src/lib/cli/boot-request.js'
import {bootView, capacityView, migrateView} from '../../src/lib/cli/scheduler-view.js'
import {captureLive} from '../../src/lib/db/capture.js'
import {buildModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig, type SchedulerConfig} from '../../src/lib/engine/index.js'
import {simulateMigration} from '../../src/lib/engine/migrate.js'
import {simulateBootWhatIf} from '../../src/lib/scenario/boot-what-if.js'
import type {SchedulerView} from '../../src/lib/snapshot/source.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'
import {createReleaseCloud, releaseUnavailable} from '../releases/support.js'

const savedEnv = {...process.env}
let cloud: TestCloud
let seeded: Snapshot
const full: Partial<Record<'plain' | 'specs', Snapshot>> = {}
const groups = {anti: '', aff: '', soft: ''}
let replayed = ''
let plainInstance = ''
let hinted: string[] = []

/** Every filter that reads instances, counters or NUMA cells, beside Zed's defaults. */
function config(): SchedulerConfig {
  const cfg = defaultSchedulerConfig()
  cfg.enabled_filters = [
    ...cfg.enabled_filters,
    'SameHostFilter',
    'DifferentHostFilter',
    'NumInstancesFilter',
    'IoOpsFilter',
    'AggregateNumInstancesFilter',
    'NUMATopologyFilter',
  ]
  cfg.max_instances_per_host = 30
  return cfg
}

function liveOf(s: Snapshot) {
  return s.nova.instances.filter((i) => i.deleted === 0 && i.host !== null && !i.hidden)
}

/** Three server groups over instances the generator placed, and one recorded request in a group. */
function addGroups(s: Snapshot): void {
  const byHost = new Map<string, string[]>()
  for (const i of liveOf(s)) byHost.set(i.host as string, [...(byHost.get(i.host as string) ?? []), i.uuid])
  const hosts = [...byHost.entries()].filter(([, l]) => l.length >= 3).slice(0, 8)
  const uuid = (n: number) => `5e7a0000-0000-4000-8000-${String(n).padStart(12, '0')}`
  const anti = [...hosts.slice(0, 6).map(([, l]) => l[0] as string), hosts[0]?.[1][1] as string]
  const aff = (hosts[6]?.[1] ?? []).slice(0, 2)
  const soft = hosts.slice(2, 8).map(([, l]) => l[2] as string)
  const at = Math.max(0, ...s.nova_api.instance_groups.map((g) => g.id))
  s.nova_api.instance_groups.push(
    {
      id: at + 1,
      uuid: uuid(1),
      name: 'web-anti',
      project_id: 'p',
      user_id: 'u',
      policies: [{policy: 'anti-affinity', rules: '{"max_server_per_host": 2}'}],
      members: anti,
    },
    {id: at + 2, uuid: uuid(2), name: 'db-aff', project_id: 'p', user_id: 'u', policies: [{policy: 'affinity', rules: null}], members: aff},
    {id: at + 3, uuid: uuid(3), name: 'soft', project_id: 'p', user_id: 'u', policies: [{policy: 'soft-anti-affinity', rules: null}], members: soft},
  )
  groups.anti = uuid(1)
  groups.aff = uuid(2)
  groups.soft = uuid(3)
  // The replayed instance was booted into the anti-affinity group (scheduler hint and instance_group).
  replayed = anti[1] as string
  const row = s.nova_api.request_specs?.find((r) => r.instance_uuid === replayed)
  if (!row) throw new Error('the generator wrote no request spec for the replayed instance')
  const spec = JSON.parse(row.spec) as {'nova_object.data': Record<string, unknown>}
  spec['nova_object.data'].scheduler_hints = {group: [groups.anti]}
  row.spec = JSON.stringify(spec)
  plainInstance = hosts[7]?.[1][0] as string
  hinted = [hosts[3]?.[1][1] as string, hosts[4]?.[1][1] as string]
}

beforeAll(async () => {
  process.env.XDG_CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cloudctl-cfg-'))
  for (const k of Object.keys(process.env)) if (k.startsWith('CLOUDCTL_') && k !== 'CLOUDCTL_TEST_DSN' && k !== 'CLOUDCTL_EPOXY_CHROOT') delete process.env[k]
  const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
  seeded = generateCloud({seed: 11, now, cells: 2, hosts: 48, instances: 700, pinnedHostFraction: 0.25, migrationsInProgress: 3, requestSpecs: true}).snapshot
  addGroups(seeded)
  cloud =
    releaseUnavailable('zed') === undefined
      ? await createReleaseCloud('zed', 'schedview', ['cell1', 'cell2'])
      : await createTestCloud('schedview', {cells: ['cell1', 'cell2']})
  await seedSnapshot(seeded, cloud)
  full.plain = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl})
  full.specs = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, requestSpecs: true})
}, 900_000)

afterAll(async () => {
  process.env = savedEnv
  await cloud?.drop()
})

/** The scheduler view, on the full read's clock: service liveness is judged at the same instant. */
async function viewRead(view: SchedulerView, clock: Snapshot): Promise<Snapshot> {
  const s = await captureLive({apiDb: cloud.apiUrl, placementDb: cloud.placementUrl, schedulerView: view})
  expect(s.scope).toBe('scheduler')
  return {...s, captured_at: clock.captured_at}
}

/** As the result reaches --json (timings are the one thing that may differ). */
function doc(x: unknown): unknown {
  return JSON.parse(JSON.stringify(x, (k, v: unknown) => (k === 'timings' ? undefined : v)))
}

function boot(s: Snapshot, flags: BootFlagValues, cfg = config()): unknown {
  const parsed = parseBootFlags(flags)
  const model = buildModel(s)
  const {request, recorded} = resolveBootRequest(parsed, model)
  return doc({result: simulateBootWhatIf(model, request, cfg, {scenario: {}, seed: 42, explain: true, topWeighed: 50}), recorded})
}

const BOOTS: Array<[string, () => BootFlagValues]> = [
  ['a plain boot', () => ({flavor: 'm1.small', 'num-instances': 1})],
  ['a pinned (NUMA) boot', () => ({flavor: 'm1.pinned', 'num-instances': 1})],
  ['an isolated-emulator pinned boot of 4', () => ({flavor: 'm1.pinned-iso', 'num-instances': 4})],
  ['--num-instances 40', () => ({flavor: 'm1.medium', 'num-instances': 40})],
  ['into an anti-affinity group (max_server_per_host 2)', () => ({flavor: 'm1.small', 'num-instances': 5, hint: [`group=${groups.anti}`]})],
  ['into an affinity group, by name', () => ({flavor: 'm1.small', 'num-instances': 2, hint: ['group=db-aff']})],
  ['into a soft-anti-affinity group (weigher)', () => ({flavor: 'm1.tiny', 'num-instances': 3, hint: [`group=${groups.soft}`]})],
  [
    'with same_host and different_host hints',
    () => ({flavor: 'm1.tiny', 'num-instances': 1, hint: [`different_host=${hinted[0]}`, `different_host=${hinted[1]}`]}),
  ],
  ['with a same_host hint', () => ({flavor: 'm1.tiny', 'num-instances': 1, hint: [`same_host=${hinted[0]}`]})],
  [
    'with a required trait (flavor extra spec over the flavor)',
    () => ({flavor: 'm1.small', 'num-instances': 1, 'extra-spec': ['trait:HW_CPU_X86_AVX2=required']}),
  ],
  [
    "with a forbidden trait and an image's required one",
    () => ({
      flavor: 'm1.small',
      'num-instances': 2,
      'extra-spec': ['trait:HW_NIC_SRIOV=forbidden'],
      'image-property': ['trait:COMPUTE_VOLUME_EXTEND=required'],
    }),
  ],
  [
    'with any-of traits in a numbered group',
    () => ({
      flavor: 'm1.small',
      'num-instances': 1,
      'extra-spec': ['resources1:VCPU=1', 'required1=in:HW_CPU_X86_SSE42,HW_GPU_API_VULKAN', 'group_policy=none'],
    }),
  ],
  ['--instance replay of a boot into a group', () => ({instance: replayed, 'num-instances': 1})],
  ['--instance replay with --hint over it', () => ({instance: replayed, 'num-instances': 1, hint: [`group=${groups.aff}`]})],
  ['--instance replay without a group', () => ({instance: plainInstance, 'num-instances': 1})],
]

describe('scheduler view: the same answers as the full read', () => {
  it.each(BOOTS)('simulate boot: %s', async (_name, flagsOf) => {
    const flags = flagsOf()
    const parsed = parseBootFlags(flags)
    const whole = parsed.instance === null ? (full.plain as Snapshot) : (full.specs as Snapshot)
    const view = await viewRead(bootView(parsed, [config()]), whole)
    const expected = boot(whole, flags) as {result: {instances: Array<{host: string | null}>}}
    // A question the cloud answers with a host: hosts, weights and claims all take part.
    expect(expected.result.instances.some((i) => i.host !== null)).toBe(true)
    expect(boot(view, flags)).toEqual(expected)
    // It read less: no allocation row but the replayed instance's, only the instances named.
    expect(view.placement.allocations.every((a) => a.consumer_id === parsed.instance)).toBe(true)
    expect(view.nova.instances.length).toBeLessThan(20)
    expect(view.placement.consumers).toEqual([])
    // The hosts' NUMA topologies only for a question that can read them.
    const numa = (s: Snapshot) => s.nova.compute_nodes.map((cn) => cn.numa_topology)
    const asksNuma = /pinned/.test(flags.flavor ?? '') || parsed.instance !== null
    expect(numa(view)).toEqual(asksNuma ? numa(whole) : numa(whole).map(() => null))
    // The trait rows of the traits the query names (a replay: every row), in the full read's order.
    const rows = whole.placement.resource_provider_traits
    if (parsed.instance !== null) expect(view.placement.resource_provider_traits).toEqual(rows)
    else {
      const ids = new Set(view.placement.resource_provider_traits.map((t) => t.trait_id))
      expect(view.placement.resource_provider_traits).toEqual(rows.filter((t) => ids.has(t.trait_id)))
      expect(view.placement.resource_provider_traits.length).toBeLessThan(rows.length)
    }
  })

  it.each([
    ['every public flavor, per host', undefined],
    ['into the anti-affinity group', 'anti'],
  ] as const)('simulate capacity: %s', async (_name, group) => {
    const hint = group === undefined ? undefined : groups[group]
    const whole = full.plain as Snapshot
    const view = await viewRead(capacityView(hint), whole)
    const run = (s: Snapshot) =>
      doc(capacityWhatIf(s, {}, {config: config(), perHost: true, hostUsage: true, seed: 42, request: hint ? {hints: {group: hint}} : {}}))
    expect(run(view)).toEqual(run(whole))
  })

  it.each([false, true])('simulate migrate (live %s) of an instance in a group', async (live) => {
    const whole = full.specs as Snapshot
    const view = await viewRead(migrateView(replayed), whole)
    const run = (s: Snapshot) => {
      const model = buildModel(s)
      const {request, recorded} = bootRequestFromSpec(model, replayed)
      return doc({migration: simulateMigration(model, replayed, request, config(), {live, host: null, seed: 42, explain: true, topWeighed: 50}), recorded})
    }
    expect(run(view)).toEqual(run(whole))
    expect(view.placement.allocations.length).toBeGreaterThan(0)
  })

  it("the usage summed by the database is the full read's allocations summed", async () => {
    const view = await viewRead(capacityView(undefined), full.plain as Snapshot)
    const sums = new Map<string, number>()
    for (const a of (full.plain as Snapshot).placement.allocations)
      sums.set(`${a.resource_provider_id}/${a.resource_class_id}`, (sums.get(`${a.resource_provider_id}/${a.resource_class_id}`) ?? 0) + a.used)
    expect(new Map(view.placement.usages?.map((u) => [`${u.resource_provider_id}/${u.resource_class_id}`, u.used]))).toEqual(sums)
  })

  it('a pinned boot without NUMATopologyFilter reads no NUMA topology, and answers the same', async () => {
    const flags: BootFlagValues = {flavor: 'm1.pinned', 'num-instances': 2}
    const whole = full.plain as Snapshot
    const cfg = defaultSchedulerConfig()
    const view = await viewRead(bootView(parseBootFlags(flags), [cfg]), whole)
    expect(view.nova.compute_nodes.every((cn) => cn.numa_topology === null)).toBe(true)
    expect(whole.nova.compute_nodes.some((cn) => cn.numa_topology !== null)).toBe(true)
    expect(boot(view, flags, cfg)).toEqual(boot(whole, flags, cfg))
  })

  it("leaving out the hosts' NUMA topologies changes a pinned boot (this comparison can fail)", async () => {
    const flags: BootFlagValues = {flavor: 'm1.pinned', 'num-instances': 1}
    const whole = full.plain as Snapshot
    const blind = await viewRead({...bootView(parseBootFlags(flags)), hostNumaTopology: () => false}, whole)
    expect(boot(blind, flags)).not.toEqual(boot(whole, flags))
  })

  it('leaving out the trait rows a query names changes the answer (this comparison can fail)', async () => {
    const flags: BootFlagValues = {flavor: 'm1.small', 'num-instances': 1, 'extra-spec': ['trait:HW_CPU_X86_AVX2=required']}
    const whole = full.plain as Snapshot
    const blind = await viewRead({...bootView(parseBootFlags(flags)), providerTraits: () => new Set(['COMPUTE_STATUS_DISABLED'])}, whole)
    expect(boot(blind, flags)).not.toEqual(boot(whole, flags))
  })

  it('leaving out the group members the request reads changes the answer (this comparison can fail)', async () => {
    const flags: BootFlagValues = {flavor: 'm1.small', 'num-instances': 5, hint: [`group=${groups.anti}`]}
    const whole = full.plain as Snapshot
    const blind = await viewRead({instances: () => []}, whole)
    expect(boot(blind, flags)).not.toEqual(boot(whole, flags))
  })
})
