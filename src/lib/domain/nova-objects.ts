/**
 * Readers for the JSON nova writes into its text columns. Nova serialises "versioned objects"
 * ({"nova_object.name", "nova_object.version", "nova_object.data", "nova_object.changes"}), nested
 * the same way. Readers accept older object versions (missing fields get the value nova itself would
 * derive) and report unreadable blobs as a value, never by throwing: a broken blob is a finding.
 */

export type Parsed<T> = {ok: true; value: T} | {ok: false; error: string}

const ok = <T>(value: T): Parsed<T> => ({ok: true, value})
const fail = <T>(error: string): Parsed<T> => ({ok: false, error})

type Json = null | boolean | number | string | Json[] | {[k: string]: Json}

export interface VersionedObject {
  name: string | null
  version: string | null
  data: Record<string, unknown>
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Recursively replace every versioned-object wrapper by its data; `nova_object.changes` is dropped.
 * A list or object with no wrapper inside is returned as it is, not copied (a host topology's CPU
 * lists and siblings: most of its arrays): callers pass a value fresh from JSON.parse, which nothing
 * else holds.
 */
export function unwrap(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i]
      const u = unwrap(v)
      if (out) out.push(u)
      else if (u !== v) (out = value.slice(0, i)).push(u)
    }
    return out ?? value
  }
  if (!isRecord(value)) return value
  if ('nova_object.data' in value) {
    const data = value['nova_object.data']
    return isRecord(data) ? unwrap(data) : data
  }
  const keys = Object.keys(value)
  let out: Record<string, unknown> | undefined
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const v = value[k]
    const u = unwrap(v)
    // A "__proto__" key is copied as an assignment copies it (it sets the copy's prototype), as before.
    if (!out && (u !== v || k === '__proto__')) {
      out = {}
      for (let j = 0; j < i; j++) out[keys[j]] = value[keys[j]]
    }
    if (out) out[k] = u
  }
  return out ?? value
}

export function parseJsonText(text: string | null | undefined): Parsed<Json | null> {
  if (text === null || text === undefined || text === '') return ok(null)
  try {
    return ok(JSON.parse(text) as Json)
  } catch (error) {
    return fail(`not valid JSON (${(error as Error).message})`)
  }
}

export function objectVersion(value: unknown): string | null {
  return isRecord(value) && typeof value['nova_object.version'] === 'string' ? value['nova_object.version'] : null
}

/** Compare dotted object versions: -1, 0 or 1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d < 0 ? -1 : 1
  }
  return 0
}

function intArray(v: unknown, field: string): number[] {
  if (v === null || v === undefined) return []
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'number' || !Number.isInteger(x))) {
    throw new Error(`${field} is not a list of integers`)
  }
  return v as number[]
}

function num(v: unknown, field: string, fallback?: number): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if ((v === undefined || v === null) && fallback !== undefined) return fallback
  throw new Error(`${field} is missing or not a number`)
}

// ---------------------------------------------------------------- host NUMA topology

export interface MemPages {
  size_kb: number
  total: number
  used: number
  reserved: number
}

export interface HostNumaCell {
  id: number
  /** CPUs for shared (floating) guests. */
  cpuset: number[]
  /** CPUs for dedicated guests ([compute] cpu_dedicated_set). */
  pcpuset: number[]
  memory: number
  cpu_usage: number
  memory_usage: number
  pinned_cpus: number[]
  siblings: number[][]
  mempages: MemPages[]
  socket: number | null
  /** Object version of this NUMACell, so a rewrite can keep it. */
  version: string | null
}

export interface HostNumaTopology {
  version: string | null
  cells: HostNumaCell[]
}

export function parseHostNumaTopology(text: string | null): Parsed<HostNumaTopology | null> {
  const json = parseJsonText(text)
  if (!json.ok) return json
  if (json.value === null) return ok(null)
  try {
    const raw = json.value
    const data = unwrap(raw)
    if (!isRecord(data) || !Array.isArray(data.cells)) throw new Error('has no "cells" list')
    const rawCells = isRecord(raw) && isRecord(raw['nova_object.data']) ? (raw['nova_object.data'].cells as unknown[]) : []
    const cells = data.cells.map((c, i): HostNumaCell => {
      if (!isRecord(c)) throw new Error(`cell ${i} is not an object`)
      const version = objectVersion(rawCells?.[i])
      const cpuset = intArray(c.cpuset, `cells[${i}].cpuset`)
      // NUMACell < 1.5 predates cpu_dedicated_set: pinned guests were placed on `cpuset` itself.
      const pcpuset = 'pcpuset' in c ? intArray(c.pcpuset, `cells[${i}].pcpuset`) : [...cpuset]
      const siblings = Array.isArray(c.siblings) ? c.siblings.map((s, j) => intArray(s, `cells[${i}].siblings[${j}]`)) : []
      const mempages = Array.isArray(c.mempages)
        ? c.mempages.map((m): MemPages => {
            const r = isRecord(m) ? m : {}
            return {
              size_kb: num(r.size_kb, 'size_kb', 4),
              total: num(r.total, 'total', 0),
              used: num(r.used, 'used', 0),
              reserved: num(r.reserved, 'reserved', 0),
            }
          })
        : []
      return {
        id: num(c.id, `cells[${i}].id`),
        cpuset,
        pcpuset,
        memory: num(c.memory, `cells[${i}].memory`, 0),
        cpu_usage: num(c.cpu_usage, `cells[${i}].cpu_usage`, 0),
        memory_usage: num(c.memory_usage, `cells[${i}].memory_usage`, 0),
        pinned_cpus: intArray(c.pinned_cpus, `cells[${i}].pinned_cpus`),
        siblings,
        mempages,
        socket: typeof c.socket === 'number' ? c.socket : null,
        version,
      }
    })
    return ok({version: objectVersion(raw), cells})
  } catch (error) {
    return fail(`NUMATopology: ${(error as Error).message}`)
  }
}

// ---------------------------------------------------------------- instance NUMA topology

export interface InstanceNumaCell {
  id: number
  /** Shared (floating) vCPUs. */
  cpuset: number[]
  /** Dedicated (pinned) vCPUs. */
  pcpuset: number[]
  memory: number
  pagesize: number | null
  /** vCPU -> host pCPU; empty when not pinned. */
  cpu_pinning: Map<number, number>
  /** Host pCPUs reserved for emulator threads (hw:emulator_threads_policy=isolate). */
  cpuset_reserved: number[]
  cpu_policy: string | null
  cpu_thread_policy: string | null
}

export interface InstanceNumaTopology {
  version: string | null
  cells: InstanceNumaCell[]
}

export function parseInstanceNumaTopology(text: string | null): Parsed<InstanceNumaTopology | null> {
  const json = parseJsonText(text)
  if (!json.ok) return json
  if (json.value === null) return ok(null)
  try {
    const data = unwrap(json.value)
    if (!isRecord(data) || !Array.isArray(data.cells)) throw new Error('has no "cells" list')
    const cells = data.cells.map((c, i): InstanceNumaCell => {
      if (!isRecord(c)) throw new Error(`cell ${i} is not an object`)
      const policy = typeof c.cpu_policy === 'string' ? c.cpu_policy : null
      let cpuset = intArray(c.cpuset, `cells[${i}].cpuset`)
      let pcpuset = intArray(c.pcpuset, `cells[${i}].pcpuset`)
      // Before InstanceNUMACell 1.5 (Ussuri), dedicated vCPUs lived in cpuset with cpu_policy=dedicated.
      if (!('pcpuset' in c) && policy === 'dedicated') {
        pcpuset = cpuset
        cpuset = []
      }
      const pinning = new Map<number, number>()
      if (isRecord(c.cpu_pinning_raw)) {
        for (const [vcpu, pcpu] of Object.entries(c.cpu_pinning_raw)) {
          if (typeof pcpu !== 'number' || !/^\d+$/.test(vcpu)) throw new Error(`cells[${i}].cpu_pinning_raw has a bad entry ${vcpu}`)
          pinning.set(Number(vcpu), pcpu)
        }
      } else if (c.cpu_pinning_raw !== null && c.cpu_pinning_raw !== undefined) {
        throw new Error(`cells[${i}].cpu_pinning_raw is not an object`)
      }
      return {
        id: num(c.id, `cells[${i}].id`),
        cpuset,
        pcpuset,
        memory: num(c.memory, `cells[${i}].memory`, 0),
        pagesize: typeof c.pagesize === 'number' ? c.pagesize : null,
        cpu_pinning: pinning,
        cpuset_reserved: intArray(c.cpuset_reserved, `cells[${i}].cpuset_reserved`),
        cpu_policy: policy,
        cpu_thread_policy: typeof c.cpu_thread_policy === 'string' ? c.cpu_thread_policy : null,
      }
    })
    return ok({version: objectVersion(json.value), cells})
  } catch (error) {
    return fail(`InstanceNUMATopology: ${(error as Error).message}`)
  }
}

const NO_PINS: readonly number[] = []

/**
 * Host pCPUs an instance cell pins: its pinning values plus the emulator-thread reservation. Shared
 * and read-only: made once per cell object. The audits parse each distinct NUMA text once, so one
 * cell stands for every instance with that text (192 distinct texts among the 300k live instances of
 * the 10k bench cloud, 18k of them pinned): a Set and two arrays per pinned guest and audit before.
 */
export function pinnedHostCpus(cell: InstanceNumaCell): readonly number[] {
  // Most instance cells pin nothing (hw:numa_nodes without hw:cpu_policy): no Set, no arrays.
  if (cell.cpu_pinning.size === 0 && cell.cpuset_reserved.length === 0) return NO_PINS
  let pins = pinsOfCell.get(cell)
  if (pins === undefined) pinsOfCell.set(cell, (pins = [...new Set([...cell.cpu_pinning.values(), ...cell.cpuset_reserved])]))
  return pins
}

// Parsed cells are never modified after parsing (nothing writes cpu_pinning or cpuset_reserved).
const pinsOfCell = new WeakMap<InstanceNumaCell, readonly number[]>()

// ---------------------------------------------------------------- flavor blob

export interface FlavorObject {
  id: number | null
  flavorid: string | null
  name: string | null
  memory_mb: number
  vcpus: number
  root_gb: number
  ephemeral_gb: number
  swap: number
  extra_specs: Record<string, string>
}

export interface InstanceFlavors {
  cur: FlavorObject | null
  old: FlavorObject | null
  new: FlavorObject | null
}

function toFlavor(v: unknown, label: string): FlavorObject | null {
  if (v === null || v === undefined) return null
  if (!isRecord(v)) throw new Error(`${label} is not an object`)
  const specs: Record<string, string> = {}
  if (isRecord(v.extra_specs)) for (const [k, s] of Object.entries(v.extra_specs)) specs[k] = String(s)
  return {
    id: typeof v.id === 'number' ? v.id : null,
    flavorid: typeof v.flavorid === 'string' ? v.flavorid : null,
    name: typeof v.name === 'string' ? v.name : null,
    memory_mb: num(v.memory_mb, `${label}.memory_mb`),
    vcpus: num(v.vcpus, `${label}.vcpus`),
    root_gb: num(v.root_gb, `${label}.root_gb`, 0),
    ephemeral_gb: num(v.ephemeral_gb, `${label}.ephemeral_gb`, 0),
    swap: num(v.swap, `${label}.swap`, 0),
    extra_specs: specs,
  }
}

export function parseInstanceFlavors(text: string | null): Parsed<InstanceFlavors | null> {
  const json = parseJsonText(text)
  if (!json.ok) return json
  if (json.value === null) return ok(null)
  try {
    const data = unwrap(json.value)
    if (!isRecord(data)) throw new Error('is not an object')
    return ok({cur: toFlavor(data.cur, 'cur'), old: toFlavor(data.old, 'old'), new: toFlavor(data.new, 'new')})
  } catch (error) {
    return fail(`instance flavor: ${(error as Error).message}`)
  }
}

// ---------------------------------------------------------------- flat JSON columns

/** compute_nodes.stats: a flat object of strings. */
export function parseStats(text: string | null): Parsed<Record<string, string>> {
  const json = parseJsonText(text)
  if (!json.ok) return json
  if (json.value === null) return ok({})
  if (!isRecord(json.value)) return fail('stats: not a JSON object')
  // nova writes every stat as a string; copy only when a writer did not (10k nodes per snapshot).
  const value = json.value
  let allStrings = true
  for (const k in value) {
    if (typeof value[k] !== 'string') {
      allStrings = false
      break
    }
  }
  if (allStrings) return ok(value as Record<string, string>)
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(value)) out[k] = v === null ? '' : String(v)
  return ok(out)
}

/** Any JSON column read generically (cpu_info, supported_instances, pci_stats, request spec). */
export function parseUnwrapped(text: string | null, what: string): Parsed<unknown> {
  const json = parseJsonText(text)
  if (!json.ok) return fail(`${what}: ${json.error}`)
  return ok(unwrap(json.value))
}
