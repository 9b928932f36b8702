/**
 * Replays nova's own unit tests for the scheduler filters, extra_specs_ops and the weighers
 * through the engine, for each release: Zed (the host's python3-nova 26) and 2025.1 (nova 31 in
 * the chroot of test/releases/epoxy-chroot.sh), each with the engine set to that release: record_scheduler.py runs them with
 * extra_specs_ops.match, every filter's host_passes, every weigher's _weigh_object and the weight
 * handler wrapped to record each call (the HostState fields, the RequestSpec parts, the nova.conf
 * values in effect, and the answer), then each recorded call is asked of the engine's
 * extraSpecMatch / filter / weigher / weighHosts. Prints an agreement table; a disagreement fails
 * unless its test is listed, with the reason, under "Known disagreements with nova's scheduler unit
 * tests" in docs/engine.md (and a listed test that now agrees fails too, so the list stays true).
 * An entry that holds for one release only names it: "- `test id` (what, 2025.1): reason".
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import type {HostNumaTopology} from '../../src/lib/domain/nova-objects.js'
import type {Aggregate, Flavor} from '../../src/lib/domain/snapshot.js'
import {defaultSchedulerConfig, notInRelease, parseWeightSetting, type EngineRelease, type SchedulerConfig} from '../../src/lib/engine/config.js'
import {extraSpecMatch, FILTERS, type FilterContext} from '../../src/lib/engine/filters.js'
import type {HostState} from '../../src/lib/engine/host-state.js'
import type {CpuPolicy, InstanceTopologyRequest, ThreadPolicy} from '../../src/lib/engine/numa.js'
import type {RequestSpec} from '../../src/lib/engine/request-spec.js'
import {WEIGHERS, weighHosts} from '../../src/lib/engine/weighers.js'
import {COMPARE, COMPARE_RELEASES, recorded} from './driver.js'

interface RecHostCell {
  id: number
  cpuset: number[]
  pcpuset: number[]
  memory: number
  cpu_usage: number
  memory_usage: number
  pinned_cpus: number[]
  siblings: number[][]
  mempages: Array<{size_kb: number; total: number; used: number; reserved: number}>
  socket: number | null
}
interface RecInstance {
  cells: Array<{
    id: number
    cpuset: number[]
    pcpuset: number[]
    memory: number
    pagesize: number | null
    cpu_policy: string | null
    cpu_thread_policy: string | null
  }>
  emulator_threads_policy: string | null
}
interface RecHost {
  host: string
  nodename: string
  cell_uuid: string | null
  uuid: string | null
  free_ram_mb: number
  free_disk_mb: number
  total_usable_ram_mb: number
  total_usable_disk_gb: number
  disk_mb_used: number
  vcpus_total: number
  vcpus_used: number
  num_instances: number
  num_io_ops: number
  failed_builds: number
  hypervisor_type: string | null
  hypervisor_version: number | null
  host_ip: string | null
  cpu_info: string | null
  supported_instances: string[][] | null
  stats: Record<string, unknown> | null
  cpu_allocation_ratio: number | null
  ram_allocation_ratio: number | null
  disk_allocation_ratio: number | null
  numa_topology: {cells: RecHostCell[]} | null
  pci_pools: Array<{vendor_id: string | null; product_id: string | null; numa_node: number | null; count: number; tags: Record<string, string>}>
  aggregates: Array<{id: number; hosts: string[]; metadata: Record<string, string>}>
  /** what a stubbed utils.aggregate_values_from_key answered (the aggregate filters' key) */
  aggregate_values?: string[]
  instances: string[]
  /** recorded for ImagePropertiesWeigher only: each instance's image properties */
  instance_image_props?: Array<Record<string, string>>
  service: {disabled: boolean; disabled_reason: string | null; up: boolean | null} | null
}
interface RecSpec {
  flavor?: {vcpus: number; memory_mb: number; root_gb: number; ephemeral_gb: number; swap: number; extra_specs: Record<string, string>}
  image?: {id: string | null; properties: Record<string, string>}
  project_id?: string
  availability_zone?: string | null
  num_instances?: number
  instance_uuid?: string
  is_bfv?: boolean
  scheduler_hints?: Record<string, string[]>
  instance_group?: {
    uuid: string | null
    name: string | null
    policy: string | null
    policies: string[]
    rules: Record<string, unknown>
    members: string[]
    hosts: string[]
  }
  requested_destination?: {host: string | null; node: string | null; cell: string | null; allow_cross_cell_move: boolean}
  network_metadata?: {physnets: string[]; tunneled: boolean}
  numa_topology?: RecInstance
  pci_requests?: Array<{count: number; alias_name: string | null; spec: Array<Record<string, string>>; numa_policy: string | null}>
}
type RecConf = Record<string, unknown>
interface RecError {
  error: string
  message: string
}
interface Common {
  test: string | null
  unrecordable?: string
  mocked?: string[]
}
type Rec = Common &
  (
    | {fn: 'match'; input: {value: string | null; req: string}; output: {result: boolean} | RecError}
    | {fn: 'filter'; name: string; input: {host: RecHost; spec: RecSpec | null; conf: RecConf}; output: {passes: boolean} | RecError}
    | {fn: 'weigh'; name: string; input: {host: RecHost; spec: RecSpec | null; conf: RecConf}; output: {raw: number} | RecError}
    | {
        fn: 'weighed'
        input: {weighers: string[]; hosts: RecHost[]; spec: RecSpec | null; conf: RecConf}
        output: {order: Array<[string, string, number]>} | RecError
      }
  )

type Verdict = {kind: 'agree'} | {kind: 'disagree'; detail: string} | {kind: 'skipped'; reason: string}

const DOCS = fileURLToPath(new URL('../../docs/engine.md', import.meta.url))
const SECTION = "### Known disagreements with nova's scheduler unit tests"
/** "now" for service liveness: the recorded answer of the servicegroup driver becomes a last report now or long ago */
const NOW = new Date('2024-01-01T00:00:00Z')

const isError = (o: unknown): o is RecError => typeof o === 'object' && o !== null && 'error' in o

/** filters the aggregate helpers' stubs answer for, by the metadata key each one asks */
const VALUES_KEY: Record<string, string> = {AggregateIoOpsFilter: 'max_io_ops_per_host', AggregateNumInstancesFilter: 'max_instances_per_host'}

function numaOf(t: {cells: RecHostCell[]}): HostNumaTopology {
  return {
    version: '1.2',
    cells: t.cells.map((c) => ({
      id: c.id,
      cpuset: c.cpuset,
      pcpuset: c.pcpuset,
      memory: c.memory,
      cpu_usage: c.cpu_usage,
      memory_usage: c.memory_usage,
      pinned_cpus: c.pinned_cpus,
      siblings: c.siblings,
      mempages: c.mempages,
      socket: c.socket,
      version: '1.5',
    })),
  }
}

function hostOf(h: RecHost, filter?: string): HostState {
  let aggregates: Aggregate[] = h.aggregates.map((a) => ({id: a.id, uuid: null, name: null, hosts: a.hosts, metadata: a.metadata}))
  if (h.aggregate_values) {
    const key = filter === undefined ? undefined : VALUES_KEY[filter]
    if (key === undefined) throw new Error(`aggregate_values stubbed for ${filter ?? 'a weigher'}`)
    aggregates = h.aggregate_values.map((v, i) => ({id: i, uuid: null, name: null, hosts: [h.host], metadata: {[key]: v}}))
  }
  const svc = h.service
  // nova's HostState keeps None where the test set nothing; the engine's fields are read the same way (null)
  return {
    key: `${h.host}\u0000${h.nodename}`,
    host: h.host,
    nodename: h.nodename,
    cellUuid: h.cell_uuid ?? '',
    uuid: h.uuid ?? '',
    cn: {} as HostState['cn'],
    service:
      svc === null
        ? undefined
        : ({
            disabled: svc.disabled,
            disabled_reason: svc.disabled_reason,
            forced_down: false,
            last_seen_up: svc.up === false ? '2000-01-01 00:00:00' : '2024-01-01 00:00:00',
            created_at: '2000-01-01 00:00:00',
            deleted: 0,
          } as unknown as HostState['service']),
    freeRamMb: h.free_ram_mb,
    freeDiskMb: h.free_disk_mb,
    totalUsableRamMb: h.total_usable_ram_mb,
    totalUsableDiskGb: h.total_usable_disk_gb,
    diskMbUsed: h.disk_mb_used,
    vcpusTotal: h.vcpus_total,
    vcpusUsed: h.vcpus_used,
    numInstances: h.num_instances,
    numIoOps: h.num_io_ops,
    failedBuilds: h.failed_builds,
    cpuAllocationRatio: h.cpu_allocation_ratio as number,
    ramAllocationRatio: h.ram_allocation_ratio as number,
    diskAllocationRatio: h.disk_allocation_ratio as number,
    numa: h.numa_topology === null ? null : numaOf(h.numa_topology),
    numaError: null,
    pciPools: h.pci_pools,
    aggregates,
    instances: new Set(h.instances),
    ...(h.instance_image_props ? {instanceImageProps: h.instance_image_props} : {}),
    stats: (h.stats ?? {}) as Record<string, string>,
    supportedInstances: h.supported_instances ?? [],
    hypervisorType: h.hypervisor_type as string,
    hypervisorVersion: h.hypervisor_version as number,
    hostIp: h.host_ip,
    cpuInfo: h.cpu_info as string,
    usageNotReported: false,
  }
}

function topologyOf(i: RecInstance): InstanceTopologyRequest {
  return {
    cells: i.cells.map((c) => ({
      id: c.id,
      cpuset: c.cpuset,
      pcpuset: c.pcpuset,
      memory: c.memory,
      pagesize: c.pagesize,
      cpuPolicy: c.cpu_policy as CpuPolicy | null,
      threadPolicy: c.cpu_thread_policy as ThreadPolicy | null,
    })),
    emulatorThreadsIsolated: i.emulator_threads_policy === 'isolate',
  }
}

/**
 * A stored InstanceGroup has policy == policies[0]; nova's tests often set one of them, and
 * ServerGroupAffinityFilter reads `policies` where everything else reads `policy`: the engine's one
 * policy is the field the code under replay reads.
 */
function specOf(s: RecSpec | null, readsPolicies = false): RequestSpec {
  const f = s?.flavor ?? {vcpus: 0, memory_mb: 0, root_gb: 0, ephemeral_gb: 0, swap: 0, extra_specs: {}}
  const hints = s?.scheduler_hints ?? {}
  const g = s?.instance_group
  return {
    flavor: {vcpus: f.vcpus, memory_mb: f.memory_mb, root_gb: f.root_gb, ephemeral_gb: f.ephemeral_gb, swap: f.swap} as Flavor,
    extraSpecs: f.extra_specs,
    image: {id: s?.image?.id ?? null, diskFormat: null, properties: s?.image?.properties ?? {}},
    ignoreHosts: [],
    forceHosts: [],
    forceNodes: [],
    projectId: s?.project_id ?? '',
    userId: '',
    availabilityZone: s?.availability_zone ?? null,
    numInstances: s?.num_instances ?? 1,
    hints: {same_host: hints.same_host, different_host: hints.different_host, group: hints.group?.[0]},
    group: g
      ? {
          uuid: g.uuid ?? '',
          name: g.name,
          policy: readsPolicies ? (g.policies[0] ?? null) : g.policy,
          rules: g.rules as Record<string, number>,
          members: new Set(g.members),
          hosts: g.hosts,
        }
      : null,
    isBfv: s?.is_bfv ?? false,
    requestedDestination: null,
    vcpus: f.vcpus,
    memoryMb: f.memory_mb,
    rootGb: f.root_gb,
    ephemeralGb: f.ephemeral_gb,
    swap: f.swap,
    numaTopology: s?.numa_topology ? topologyOf(s.numa_topology) : null,
    pciRequests: (s?.pci_requests ?? []).map((r) => {
      const x = r.spec[0] ?? {}
      return {
        alias: r.alias_name ?? '',
        count: r.count,
        spec: {name: r.alias_name ?? '', vendor_id: x.vendor_id, product_id: x.product_id, device_type: x.dev_type},
      }
    }),
    requiredAggregates: [],
    forbiddenAggregates: new Set(),
    rootRequired: new Set(),
    rootForbidden: new Set(),
  }
}

function configOf(c: RecConf, release: EngineRelease): SchedulerConfig {
  const cfg = defaultSchedulerConfig(release) as unknown as Record<string, unknown>
  for (const [k, v] of Object.entries(c)) if (k in cfg) cfg[k] = k === 'image_props_weight_setting' ? parseWeightSetting(v as string[]) : v
  return cfg as unknown as SchedulerConfig
}

/** why a recorded call cannot be asked of the engine as it stands, or null */
function notReplayable(spec: RecSpec | null, hosts: RecHost[]): string | null {
  if (spec?.network_metadata && (spec.network_metadata.physnets.length > 0 || spec.network_metadata.tunneled))
    return 'network (physnet / tunnel) NUMA affinity is not modelled'
  if (spec?.requested_destination?.cell) return "a move's requested_destination cell (the engine simulates boots, which have none)"
  if (spec?.pci_requests?.some((r) => r.spec.length !== 1 || Object.keys(r.spec[0] ?? {}).some((k) => !['vendor_id', 'product_id', 'dev_type'].includes(k))))
    return 'a PCI request spec beyond one vendor_id / product_id / dev_type (aliases are those)'
  if (spec?.pci_requests?.some((r) => r.numa_policy !== null) && spec.numa_topology) return 'PCI NUMA affinity policies are not modelled'
  if (spec?.numa_topology && spec.pci_requests && spec.pci_requests.length > 0) return 'PCI requests with a NUMA topology (PCI NUMA affinity is not modelled)'
  if (hosts.some((h) => h.numa_topology !== null && h.pci_pools.length > 0) && spec?.numa_topology)
    return 'PCI pools with a NUMA topology (PCI NUMA affinity is not modelled)'
  return null
}

function replayFilter(r: Extract<Rec, {fn: 'filter'}>, release: EngineRelease): Verdict {
  const f = FILTERS[r.name]
  if (!f) return {kind: 'skipped', reason: `${r.name} is not implemented by the engine`}
  const {host, spec, conf} = r.input
  const why = notReplayable(spec, [host])
  if (why) return {kind: 'skipped', reason: why}
  if (r.name === 'ComputeFilter' && host.service !== null && !host.service.disabled && host.service.up === null)
    return {kind: 'skipped', reason: 'no servicegroup answer recorded'}
  const ctx: FilterContext = {cfg: configOf(conf, release), now: NOW, numaFits: new Map()}
  const reason = f.hostPasses(hostOf(host, r.name), specOf(spec, r.name === 'ServerGroupAffinityFilter'), ctx)
  const engine = reason === null
  if (isError(r.output))
    return {kind: 'disagree', detail: `nova raised ${r.output.error}: ${r.output.message}; engine ${engine ? 'passes' : `rejects (${reason?.message})`}`}
  return r.output.passes === engine
    ? {kind: 'agree'}
    : {kind: 'disagree', detail: `nova ${r.output.passes ? 'passes' : 'rejects'}, engine ${engine ? 'passes' : `rejects: ${reason?.message}`}`}
}

function replayWeigh(r: Extract<Rec, {fn: 'weigh'}>, release: EngineRelease): Verdict {
  const w = WEIGHERS[r.name]
  if (!w) return {kind: 'skipped', reason: `${r.name} is not implemented by the engine`}
  const why = notReplayable(r.input.spec, [r.input.host])
  if (why) return {kind: 'skipped', reason: why}
  const engine = w.raw(hostOf(r.input.host), specOf(r.input.spec), configOf(r.input.conf, release))
  if (isError(r.output)) return {kind: 'disagree', detail: `nova raised ${r.output.error}: ${r.output.message}; engine ${engine}`}
  return Math.abs(r.output.raw - engine) <= 1e-9 * Math.max(1, Math.abs(engine))
    ? {kind: 'agree'}
    : {kind: 'disagree', detail: `raw weight: nova ${r.output.raw}, engine ${engine}`}
}

function replayWeighed(r: Extract<Rec, {fn: 'weighed'}>, release: EngineRelease): Verdict {
  const missing = r.input.weighers.filter((n) => !WEIGHERS[n])
  if (missing.length > 0) return {kind: 'skipped', reason: `the handler ran ${missing.join(', ')}, not an engine weigher`}
  const why = notReplayable(r.input.spec, r.input.hosts)
  if (why) return {kind: 'skipped', reason: why}
  const weighers = r.input.weighers.map((n) => WEIGHERS[n] as NonNullable<(typeof WEIGHERS)[string]>)
  const engine = weighHosts(
    r.input.hosts.map((h) => hostOf(h)),
    specOf(r.input.spec),
    weighers,
    configOf(r.input.conf, release),
  ).map((x) => [x.hs.host, x.hs.nodename, x.weight] as [string, string, number])
  if (isError(r.output)) return {kind: 'disagree', detail: `nova raised ${r.output.error}: ${r.output.message}; engine ${JSON.stringify(engine)}`}
  const nova = r.output.order
  const ok =
    nova.length === engine.length &&
    nova.every(([h, n, w], i) => {
      const e = engine[i] as [string, string, number]
      return e[0] === h && e[1] === n && Math.abs(e[2] - w) <= 1e-9 * Math.max(1, Math.abs(w))
    })
  return ok ? {kind: 'agree'} : {kind: 'disagree', detail: `nova ${JSON.stringify(nova)}\n      engine ${JSON.stringify(engine)}`}
}

function replayMatch(r: Extract<Rec, {fn: 'match'}>): Verdict {
  const engine = extraSpecMatch(r.input.value, r.input.req)
  if (isError(r.output)) return {kind: 'disagree', detail: `nova raised ${r.output.error}: ${r.output.message}; engine ${engine}`}
  return r.output.result === engine ? {kind: 'agree'} : {kind: 'disagree', detail: `nova ${r.output.result}, engine ${engine}`}
}

/**
 * `- \`<test id>\` (<what>[, <release>]): reason` lines of the docs section, as "test id|what" for
 * the release asked (an entry without a release holds for every release).
 */
function knownDisagreements(release: EngineRelease): Set<string> {
  const text = readFileSync(DOCS, 'utf8')
  const start = text.indexOf(SECTION)
  if (start < 0) throw new Error(`docs/engine.md has no "${SECTION.slice(4)}" section`)
  const end = text.indexOf('\n#', start + 5)
  const out = new Set<string>()
  for (const m of text.slice(start, end < 0 ? undefined : end).matchAll(/^- `([^`]+)` \(([A-Za-z_.]+)(?:, (zed|2025\.1))?\): \S/gm)) {
    if (m[3] === undefined || m[3] === release) out.add(`${m[1] as string}|${m[2] as string}`)
  }
  return out
}

const label = (r: Rec) => (r.fn === 'match' ? 'extra_specs_ops.match' : r.fn === 'weighed' ? 'weight handler' : r.name)

describe.skipIf(!COMPARE)("compare with nova: nova's own unit tests for the scheduler filters and weighers, replayed", () => {
  it.each(COMPARE_RELEASES)(
    'nova %s: every recorded call agrees, or its test is listed with the reason in docs/engine.md',
    (release) => {
      const records = recorded<Rec>('record_scheduler.py', ['record_hardware.py'], {}, release)
      const known = knownDisagreements(release)
      const table = new Map<string, {recorded: number; agree: number; explained: number; unexplained: number; skipped: number}>()
      const unexplained: string[] = []
      const skippedWhy = new Map<string, number>()
      const disagreeing = new Set<string>()
      for (const r of records) {
        const what = label(r)
        const row = table.get(what) ?? {recorded: 0, agree: 0, explained: 0, unexplained: 0, skipped: 0}
        table.set(what, row)
        row.recorded++
        let v: Verdict
        if (r.unrecordable) v = {kind: 'skipped', reason: `not expressible as JSON (${r.unrecordable})`}
        else if (r.mocked) v = {kind: 'skipped', reason: `the test mocks ${r.mocked.join(', ')}, so nova's answer is the mock's`}
        else if (r.fn === 'match') v = replayMatch(r)
        else if (r.fn === 'filter') v = replayFilter(r, release)
        else if (r.fn === 'weigh') v = replayWeigh(r, release)
        else v = replayWeighed(r, release)
        const key = `${r.test ?? '(no test)'}|${what}`
        if (v.kind === 'agree') row.agree++
        else if (v.kind === 'skipped') {
          row.skipped++
          const k = `${what}: ${v.reason}`
          skippedWhy.set(k, (skippedWhy.get(k) ?? 0) + 1)
        } else if (known.has(key)) {
          row.explained++
          disagreeing.add(key)
        } else {
          row.unexplained++
          unexplained.push(`${r.test} (${what})\n      input ${JSON.stringify(r.input).slice(0, 1500)}\n      ${v.detail}`)
        }
      }
      const stale = [...known].filter((k) => !disagreeing.has(k))
      const lines = [
        '',
        `nova ${release}: nova's scheduler unit tests (filters, extra_specs_ops, weighers) replayed through the engine`,
        '  function / class                      recorded  agree  explained  unexplained  not replayed',
      ]
      for (const [what, row] of [...table].sort((a, b) => a[0].localeCompare(b[0])))
        lines.push(
          `  ${what.padEnd(38)}${String(row.recorded).padStart(8)}${String(row.agree).padStart(7)}${String(row.explained).padStart(11)}${String(row.unexplained).padStart(13)}${String(row.skipped).padStart(14)}`,
        )
      for (const [why, n] of skippedWhy) lines.push(`  not replayed, ${n}x ${why}`)
      console.log(lines.join('\n'))
      // every implemented filter and weigher, extra_specs_ops and the handler must have been exercised
      const replayed = new Set([...table].filter(([, row]) => row.agree + row.explained > 0).map(([what]) => what))
      // (those of this release: nova 31 has no AvailabilityZoneFilter, Zed none of the 2025.1 weighers)
      const inRelease = (n: string) => notInRelease({...defaultSchedulerConfig(release), enabled_filters: [n], weight_classes: []}).length === 0
      const expected = [
        'extra_specs_ops.match',
        'weight handler',
        ...Object.keys(WEIGHERS),
        ...Object.keys(FILTERS).filter((n) => !['RamFilter', 'CoreFilter', 'DiskFilter'].includes(n)),
      ].filter(inRelease)
      expect(expected.filter((n) => !replayed.has(n))).toEqual([])
      expect(unexplained.slice(0, 15).join('\n')).toBe('')
      expect(stale).toEqual([])
    },
    900_000,
  )
})
