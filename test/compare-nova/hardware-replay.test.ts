/**
 * Replays nova's own unit tests for nova.virt.hardware through the engine, for Zed (the host's
 * python3-nova) and 2025.1 (nova 31 in the chroot of test/releases), the engine set to each:
 * record_hardware.py runs `nova.tests.unit.virt.test_hardware` with numa_get_constraints,
 * numa_fit_instance_to_host and numa_usage_from_instance_numa wrapped to record every call (inputs
 * and output, or the exception), then each recorded call is asked of the engine. Prints an
 * agreement table; a disagreement fails unless its test is listed, with the reason, under
 * "Known disagreements with nova's unit tests" in docs/engine.md (and a listed test that now agrees
 * fails too, so the list stays true). An entry for one release only names it:
 * "- `test id` (function, 2025.1): reason".
 */
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import type {HostNumaTopology} from '../../src/lib/domain/nova-objects.js'
import {
  consumeNuma,
  CpuPinningError,
  fitInstanceToHost,
  instanceTopologyFor,
  NumaRequestError,
  type CpuPolicy,
  type FittedCell,
  type InstanceTopologyRequest,
  type ThreadPolicy,
} from '../../src/lib/engine/numa.js'
import type {EngineRelease} from '../../src/lib/engine/config.js'
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
  physnets: string[]
  tunneled: boolean
}
interface RecInstCell {
  id: number
  cpuset: number[]
  pcpuset: number[]
  memory: number
  pagesize: number | null
  cpu_policy: string | null
  cpu_thread_policy: string | null
  pinning: Record<string, number>
  reserved: number[]
}
interface RecInstance {
  cells: RecInstCell[]
  emulator_threads_policy: string | null
}
interface RecError {
  error: string
  message: string
}
interface Common {
  test: string | null
  unrecordable?: string
  mocked?: string[]
}
type Record_ = Common &
  (
    | {
        fn: 'numa_get_constraints'
        input: {flavor: {vcpus: number; memory_mb: number; extra_specs: Record<string, string>}; image: Record<string, string>}
        output: {topology: RecInstance | null} | RecError
      }
    | {
        fn: 'numa_fit_instance_to_host'
        input: {
          host: {cells: RecHostCell[]}
          instance: RecInstance
          limits: {cpu: number; ram: number; physnets: string[]; tunneled: boolean} | null
          pci: boolean
          packing: boolean
        }
        output: {topology: RecInstance | null} | RecError
      }
    | {
        fn: 'numa_usage_from_instance_numa'
        input: {host: {cells: RecHostCell[]} | null; instance: RecInstance | null; free: boolean}
        output: {host: {cells: RecHostCell[]} | null} | RecError
      }
  )

type Verdict = {kind: 'agree'} | {kind: 'disagree'; detail: string} | {kind: 'skipped'; reason: string}

const DOCS = fileURLToPath(new URL('../../docs/engine.md', import.meta.url))

const isError = (o: unknown): o is RecError => typeof o === 'object' && o !== null && 'error' in o

function hostOf(h: {cells: RecHostCell[]}): HostNumaTopology {
  return {
    version: '1.2',
    cells: h.cells.map((c) => ({
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

function requestOf(i: RecInstance): InstanceTopologyRequest {
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

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
const differ = (nova: unknown, engine: unknown): Verdict =>
  same(nova, engine) ? {kind: 'agree'} : {kind: 'disagree', detail: `nova ${JSON.stringify(nova)}\n      engine ${JSON.stringify(engine)}`}

function replayConstraints(r: Extract<Record_, {fn: 'numa_get_constraints'}>): Verdict {
  const {flavor, image} = r.input
  let engine: unknown
  try {
    const t = instanceTopologyFor(flavor.vcpus, flavor.memory_mb, flavor.extra_specs, image)
    engine =
      t === null
        ? null
        : {
            cells: t.cells.map((c) => ({
              cpuset: c.cpuset,
              pcpuset: c.pcpuset,
              memory: c.memory,
              pagesize: c.pagesize,
              policy: c.cpuPolicy,
              thread: c.threadPolicy,
            })),
            emulatorIsolated: t.emulatorThreadsIsolated,
          }
  } catch (error) {
    if (!(error instanceof NumaRequestError)) throw error
    engine = {error: error.novaName, message: error.message}
  }
  const o = r.output
  const nova = isError(o)
    ? o
    : o.topology === null
      ? null
      : {
          cells: o.topology.cells.map((c) => ({
            cpuset: c.cpuset,
            pcpuset: c.pcpuset,
            memory: c.memory,
            pagesize: c.pagesize,
            policy: c.cpu_policy,
            thread: c.cpu_thread_policy,
          })),
          emulatorIsolated: o.topology.emulator_threads_policy === 'isolate',
        }
  return differ(nova, engine)
}

function replayFit(r: Extract<Record_, {fn: 'numa_fit_instance_to_host'}>, release: EngineRelease): Verdict {
  const {host, instance, limits, pci, packing} = r.input
  if (pci) return {kind: 'skipped', reason: 'PCI requests / pools with a NUMA topology (PCI NUMA affinity is not modelled)'}
  if (limits && (limits.physnets.length > 0 || limits.tunneled)) return {kind: 'skipped', reason: 'network (physnet / tunnel) NUMA affinity is not modelled'}
  const fit = fitInstanceToHost(hostOf(host), requestOf(instance), {limits: limits ? {cpu: limits.cpu, ram: limits.ram} : null, packing, release})
  const engine = fit.ok
    ? fit.cells.map((c) => ({
        id: c.id,
        pinning: Object.fromEntries(c.pinning.map(([v, p]) => [String(v), p]).sort((a, b) => Number(a[0]) - Number(b[0]))),
        reserved: [...c.cpusetReserved].sort((a, b) => a - b),
        pagesize: c.pagesize,
      }))
    : null
  const o = r.output
  // nova raising (ValueError on a cell without siblings) is a host that does not fit for the engine
  if (isError(o)) return fit.ok ? {kind: 'disagree', detail: `nova raised ${o.error}: ${o.message}; engine fitted`} : {kind: 'agree'}
  const nova = o.topology === null ? null : o.topology.cells.map((c) => ({id: c.id, pinning: c.pinning, reserved: c.reserved, pagesize: c.pagesize}))
  return differ(nova, engine)
}

function replayUsage(r: Extract<Record_, {fn: 'numa_usage_from_instance_numa'}>): Verdict {
  const {host, instance, free} = r.input
  if (free) return {kind: 'skipped', reason: 'free=True (a deleted instance): the engine only ever claims'}
  if (host === null || instance === null)
    return {kind: 'skipped', reason: 'no host or instance topology: nova returns the host unchanged, the engine never calls it'}
  const cells: FittedCell[] = instance.cells.map((c) => ({
    id: c.id,
    cpuset: c.cpuset,
    pcpuset: c.pcpuset,
    memory: c.memory,
    pagesize: c.pagesize,
    cpuPolicy: c.cpu_policy as CpuPolicy | null,
    pinning: Object.entries(c.pinning).map(([v, p]) => [Number(v), p] as [number, number]),
    cpusetReserved: c.reserved,
    threadPolicy: c.cpu_thread_policy as ThreadPolicy | null,
  }))
  let engine: unknown
  try {
    const after = consumeNuma(hostOf(host), cells)
    engine = after.cells.map((c) => ({
      id: c.id,
      pinned_cpus: [...c.pinned_cpus].sort((a, b) => a - b),
      cpu_usage: c.cpu_usage,
      memory_usage: c.memory_usage,
      pages: c.mempages.map((p) => [p.size_kb, p.used]),
    }))
  } catch (error) {
    if (!(error instanceof CpuPinningError)) throw error
    engine = {error: error.novaName, message: error.message}
  }
  const o = r.output
  const nova = isError(o)
    ? o
    : o.host === null
      ? null
      : o.host.cells.map((c) => ({
          id: c.id,
          pinned_cpus: c.pinned_cpus,
          cpu_usage: c.cpu_usage,
          memory_usage: c.memory_usage,
          pages: c.mempages.map((p) => [p.size_kb, p.used]),
        }))
  return differ(nova, engine)
}

/** `- \`nova.tests...test_x\` (function): reason` lines of the docs section, as test id -> function. */
function knownDisagreements(release: EngineRelease): Map<string, string> {
  const text = readFileSync(DOCS, 'utf8')
  const start = text.indexOf("### Known disagreements with nova's unit tests")
  const out = new Map<string, string>()
  if (start < 0) throw new Error('docs/engine.md has no "Known disagreements with nova\'s unit tests" section')
  const end = text.indexOf('\n#', start + 5)
  for (const m of text.slice(start, end < 0 ? undefined : end).matchAll(/^- `([^`]+)` \((numa_[a-z_]+)(?:, (zed|2025\.1))?\): \S/gm)) {
    if (m[3] === undefined || m[3] === release) out.set(`${m[1] as string}|${m[2] as string}`, m[2] as string)
  }
  return out
}

describe.skipIf(!COMPARE)("compare with nova: nova's own unit tests for nova.virt.hardware, replayed", () => {
  it.each(COMPARE_RELEASES)(
    'nova %s: every recorded call agrees, or its test is listed with the reason in docs/engine.md',
    (release) => {
      const records = recorded<Record_>('record_hardware.py', [], {}, release)
      const known = knownDisagreements(release)
      const table = new Map<string, {recorded: number; agree: number; explained: number; unexplained: number; skipped: number}>()
      const unexplained: string[] = []
      const skippedWhy = new Map<string, number>()
      const stillListed = new Set(known.keys())
      const disagreeingTests = new Set<string>()
      for (const r of records) {
        const row = table.get(r.fn) ?? {recorded: 0, agree: 0, explained: 0, unexplained: 0, skipped: 0}
        table.set(r.fn, row)
        row.recorded++
        let v: Verdict
        if (r.unrecordable) v = {kind: 'skipped', reason: `not expressible as JSON (${r.unrecordable})`}
        else if (r.mocked) v = {kind: 'skipped', reason: `the test mocks hardware.${r.mocked.join(', hardware.')}, so nova's answer is the mock's`}
        else if (r.fn === 'numa_get_constraints') v = replayConstraints(r)
        else if (r.fn === 'numa_fit_instance_to_host') v = replayFit(r, release)
        else v = replayUsage(r)
        const key = `${r.test ?? '(no test)'}|${r.fn}`
        if (v.kind === 'agree') row.agree++
        else if (v.kind === 'skipped') {
          row.skipped++
          skippedWhy.set(`${r.fn}: ${v.reason}`, (skippedWhy.get(`${r.fn}: ${v.reason}`) ?? 0) + 1)
        } else if (known.has(key)) {
          row.explained++
          disagreeingTests.add(key)
        } else {
          row.unexplained++
          unexplained.push(`${r.test} (${r.fn})\n      input ${JSON.stringify(r.input)}\n      ${v.detail}`)
        }
      }
      for (const k of disagreeingTests) stillListed.delete(k)
      const lines = [
        '',
        `nova ${release}, nova.virt.hardware: nova's unit tests replayed through the engine`,
        '  function                        recorded  agree  explained  unexplained  not replayed',
      ]
      for (const [fn, row] of table)
        lines.push(
          `  ${fn.padEnd(32)}${String(row.recorded).padStart(8)}${String(row.agree).padStart(7)}${String(row.explained).padStart(11)}${String(row.unexplained).padStart(13)}${String(row.skipped).padStart(14)}`,
        )
      for (const [why, n] of skippedWhy) lines.push(`  not replayed, ${n}x ${why}`)
      console.log(lines.join('\n'))
      // the three functions must all have been replayed, or the replay proves little
      expect(
        [...table]
          .filter(([, row]) => row.agree + row.explained > 0)
          .map(([fn]) => fn)
          .sort(),
      ).toEqual(['numa_fit_instance_to_host', 'numa_get_constraints', 'numa_usage_from_instance_numa'])
      expect(unexplained.slice(0, 10).join('\n')).toBe('')
      expect([...stillListed]).toEqual([])
    },
    900_000,
  )
})
