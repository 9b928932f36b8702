/**
 * The host filters that compare what a flavor or image asks for with what a host says of itself
 * (nova's extra_specs_ops, ComputeCapabilitiesFilter, ImagePropertiesFilter,
 * AggregateInstanceExtraSpecsFilter): apart from filters.ts because they share a small language
 * (operators, Python str() and version rules) that no other filter speaks.
 */
import {aggregateMetadata, pyFloat, type HostState} from './host-state.js'
import {type HostFilter, reject} from './host-filter.js'
import type {RequestSpec} from './request-spec.js'

// ---------------------------------------------------------------- extra_specs_ops

/** Python's float(): nova raises ValueError (the filter errors out); the engine treats it as no match. */
function num(x: string): number {
  const n = pyFloat(x)
  if (n === null) throw new Error(`could not convert string to float: '${x}'`)
  return n
}

/** nova/scheduler/filters/extra_specs_ops.match */
export function extraSpecMatch(value: string | null, req: string): boolean {
  const words = req.split(/\s+/).filter(Boolean)
  const op = words.shift()
  const ops: Record<string, (x: string, y: string) => boolean> = {
    '=': (x, y) => num(x) >= num(y),
    '<in>': (x, y) => x.includes(y),
    '==': (x, y) => num(x) === num(y),
    '!=': (x, y) => num(x) !== num(y),
    '>=': (x, y) => num(x) >= num(y),
    '<=': (x, y) => num(x) <= num(y),
    's==': (x, y) => x === y,
    's!=': (x, y) => x !== y,
    's<': (x, y) => x < y,
    's<=': (x, y) => x <= y,
    's>': (x, y) => x > y,
    's>=': (x, y) => x >= y,
  }
  if (op !== '<or>' && op !== '<all-in>' && (op === undefined || !ops[op])) return value === req
  if (value === null) return false
  if (op === '<or>') {
    while (words.length > 0) {
      if (words.shift() === value) return true
      if (words.length === 0) break
      words.shift()
    }
    return false
  }
  if (words.length === 0) return false
  if (op === '<all-in>') return words.every((w) => value.includes(w))
  try {
    return (ops[op as string] as (x: string, y: string) => boolean)(value, words[0] as string)
  } catch {
    return false
  }
}

// ---------------------------------------------------------------- ComputeCapabilitiesFilter

const FLOAT_ATTRS = new Set(['cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio'])

/** str() of a Python value, for the values capabilities can hold. */
function pyStr(v: unknown, floatLike = false): string {
  if (v === null || v === undefined) return 'None'
  if (typeof v === 'number') return floatLike && Number.isInteger(v) ? `${v}.0` : String(v)
  if (typeof v === 'boolean') return v ? 'True' : 'False'
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return `[${v.map((x) => (typeof x === 'string' ? `'${x}'` : pyStr(x))).join(', ')}]`
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `'${k}': ${typeof x === 'string' ? `'${x}'` : pyStr(x)}`)
    .join(', ')}}`
}

/** Attributes HostState takes from the compute node: None until its usage is reported. */
const FROM_COMPUTE_NODE = new Set([
  'uuid',
  'host_ip',
  'hypervisor_type',
  'hypervisor_version',
  'hypervisor_hostname',
  'cpu_info',
  'supported_instances',
  'cpu_allocation_ratio',
  'ram_allocation_ratio',
  'disk_allocation_ratio',
])

/** HostState attributes by their nova names. */
function hostAttr(hs: HostState, name: string): unknown {
  if (hs.usageNotReported && FROM_COMPUTE_NODE.has(name)) return undefined
  const map: Record<string, unknown> = {
    host: hs.host,
    nodename: hs.nodename,
    uuid: hs.uuid,
    cell_uuid: hs.cellUuid,
    free_ram_mb: hs.freeRamMb,
    free_disk_mb: hs.freeDiskMb,
    total_usable_ram_mb: hs.totalUsableRamMb,
    total_usable_disk_gb: hs.totalUsableDiskGb,
    disk_mb_used: hs.diskMbUsed,
    vcpus_total: hs.vcpusTotal,
    vcpus_used: hs.vcpusUsed,
    num_instances: hs.numInstances,
    num_io_ops: hs.numIoOps,
    failed_builds: hs.failedBuilds,
    hypervisor_type: hs.hypervisorType,
    hypervisor_version: hs.hypervisorVersion,
    hypervisor_hostname: hs.nodename,
    host_ip: hs.hostIp,
    cpu_info: hs.cpuInfo,
    supported_instances: hs.supportedInstances,
    stats: hs.stats,
    cpu_allocation_ratio: hs.cpuAllocationRatio,
    ram_allocation_ratio: hs.ramAllocationRatio,
    disk_allocation_ratio: hs.diskAllocationRatio,
  }
  return Object.prototype.hasOwnProperty.call(map, name) ? map[name] : undefined
}

/** HostState attributes consumeHost changes, by their nova names. */
const CONSUMED_ATTRS = new Set(['free_ram_mb', 'free_disk_mb', 'vcpus_used', 'num_instances', 'num_io_ops'])

/** Whether the request's extra specs compare a capability that placing an instance changes. */
function capabilitiesReadConsumed(spec: RequestSpec): boolean {
  for (const key of Object.keys(spec.extraSpecs)) {
    const scope = key.split(':')
    if (scope.length === 1 && CONSUMED_ATTRS.has(key)) return true
    if (scope[0] === 'capabilities' && CONSUMED_ATTRS.has(scope[1] ?? '')) return true
  }
  return false
}

const HOST_ATTRS_WITHOUT_VALUE = new Set(['numa_topology', 'pci_stats', 'aggregates', 'instances', 'metrics', 'updated', 'limits', 'service'])

function capability(hs: HostState, scope: string[]): {value: unknown; floatLike: boolean} | null {
  let cap: unknown = hs
  let floatLike = false
  for (const part of scope) {
    if (typeof cap === 'string') {
      try {
        cap = JSON.parse(cap)
      } catch {
        return null
      }
    }
    if (cap === hs) {
      const v = hostAttr(hs, part)
      floatLike = FLOAT_ATTRS.has(part)
      cap = v === undefined || v === null ? (hs.stats[part] ?? null) : v
    } else if (cap && typeof cap === 'object' && !Array.isArray(cap)) {
      cap = (cap as Record<string, unknown>)[part] ?? null
    } else return null
    if (cap === null || cap === undefined) return null
  }
  return {value: cap, floatLike}
}

export const ComputeCapabilitiesFilter: HostFilter = {
  name: 'ComputeCapabilitiesFilter',
  runOncePerRequest: true,
  reads: (spec) => (capabilitiesReadConsumed(spec) ? 'placed' : 'flavor'),
  hostPasses(hs, spec, ctx) {
    let specs = Object.entries(spec.extraSpecs)
    const bits = spec.extraSpecs['hw:maxphysaddr_bits']
    // nova 31 turns hw:maxphysaddr_bits into a capability check on cpu_info (placed last)
    if (ctx.cfg.release !== 'zed' && bits !== undefined)
      specs = [...specs.filter(([k]) => k !== 'hw:maxphysaddr_bits'), ['capabilities:cpu_info:maxphysaddr:bits', `>= ${bits}`]]
    for (const [key, req] of specs) {
      let scope = key.split(':')
      if (scope.length === 1) {
        const has = hostAttr(hs, key) !== undefined || HOST_ATTRS_WITHOUT_VALUE.has(key) || key in hs.stats
        if (!has) continue
      } else {
        if (scope[0] !== 'capabilities') continue
        scope = scope.slice(1)
      }
      const cap = capability(hs, scope)
      if (cap === null) return reject(`capability ${scope.join(':')} missing`, `host has no capability ${scope.join(':')} (extra spec ${key}=${req})`)
      const text = pyStr(cap.value, cap.floatLike)
      if (!extraSpecMatch(text, req)) return reject(`extra spec ${key} not matched`, `extra spec ${key}="${req}" does not match host value "${text}"`)
    }
    return null
  },
}

// ---------------------------------------------------------------- ImagePropertiesFilter

function canonArch(a: string | undefined | null): string | null {
  if (!a) return null
  const s = a.toLowerCase()
  // fields.Architecture.canonicalize: only these aliases (and the Xen 32-bit names) are mapped.
  if (['i386', 'i486', 'i586', 'x86_32', 'x86_32p'].includes(s)) return 'i686'
  if (s === 'amd64') return 'x86_64'
  return s
}
function canonHv(h: string | undefined | null): string | null {
  if (!h) return null
  const s = h.toLowerCase()
  return s === 'xapi' ? 'xen' : s
}
function canonVmMode(m: string | undefined | null): string | null {
  if (!m) return null
  const s = m.toLowerCase()
  if (s === 'pv') return 'xen'
  if (s === 'hv' || s === 'baremetal') return 'hvm'
  return s
}

/** nova's versionutils.convert_version_to_str: 6001002 -> "6.1.2". */
function versionToStr(v: number): string {
  const parts: number[] = []
  let x = v
  while (x !== 0) {
    parts.unshift(x % 1000)
    x = Math.floor(x / 1000)
  }
  return parts.join('.')
}

function versionSatisfies(have: string, predicate: string): boolean {
  const cmp = (a: string, b: string) => {
    const pa = a.split('.').map(Number)
    const pb = b.split('.').map(Number)
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const d = (pa[i] ?? 0) - (pb[i] ?? 0)
      if (d !== 0) return d
    }
    return 0
  }
  return predicate.split(',').every((clause) => {
    const m = /^\s*(>=|<=|==|!=|>|<)\s*([\d.]+)\s*$/.exec(clause)
    if (!m) return false
    const d = cmp(have, m[2] as string)
    switch (m[1]) {
      case '>=':
        return d >= 0
      case '<=':
        return d <= 0
      case '==':
        return d === 0
      case '!=':
        return d !== 0
      case '>':
        return d > 0
      default:
        return d < 0
    }
  })
}

export const ImagePropertiesFilter: HostFilter = {
  name: 'ImagePropertiesFilter',
  runOncePerRequest: true,
  reads: () => 'request',
  hostPasses(hs, spec, ctx) {
    const p = spec.image.properties
    const wanted = [canonArch(p.hw_architecture ?? ctx.cfg.image_properties_default_architecture), canonHv(p.img_hv_type), canonVmMode(p.hw_vm_mode)]
    if (!wanted.some(Boolean)) return null
    const text = `architecture=${wanted[0] ?? '*'} hv_type=${wanted[1] ?? '*'} vm_mode=${wanted[2] ?? '*'}`
    if (hs.supportedInstances.length === 0)
      return reject('image properties not supported', `image asks ${text} but the compute node advertises no supported_instances`)
    const version = p.img_hv_requested_version
    // nova 31 also compares hw_maxphysaddr_bits with cpu_info's maxphysaddr bits
    const bits = ctx.cfg.release === 'zed' ? undefined : p.hw_maxphysaddr_bits
    for (const entry of hs.supportedInstances) {
      if (!wanted.every((w) => !w || entry.includes(w))) continue
      if (!version || !hs.hypervisorVersion || versionSatisfies(versionToStr(hs.hypervisorVersion), version)) {
        if (!bits) return null
        const info: unknown = hs.cpuInfo
        // A real HostState's cpu_info is the compute node's JSON text, on which nova 31 calls .get()
        if (typeof info === 'string')
          return reject(
            'image properties not supported',
            `image asks hw_maxphysaddr_bits=${bits}: nova ${ctx.cfg.release}'s ImagePropertiesFilter raises AttributeError on ${hs.host}'s cpu_info (a JSON string), which fails the request`,
          )
        const have = (info as {maxphysaddr?: {bits?: number}} | null)?.maxphysaddr?.bits
        if (!have || have >= Number(bits)) return null
      }
    }
    return reject(
      'image properties not supported',
      `image asks ${text}${version ? ` hypervisor version ${version}` : ''}; host supports ${JSON.stringify(hs.supportedInstances)} (hypervisor_version ${hs.hypervisorVersion})`,
    )
  },
}

// ---------------------------------------------------------------- AggregateInstanceExtraSpecsFilter

export const AggregateInstanceExtraSpecsFilter: HostFilter = {
  name: 'AggregateInstanceExtraSpecsFilter',
  runOncePerRequest: true,
  reads: () => 'flavor',
  hostPasses(hs, spec) {
    const specs = Object.entries(spec.extraSpecs)
    if (specs.length === 0) return null
    const md = aggregateMetadata(hs)
    for (const [key, req] of specs) {
      const i = key.indexOf(':')
      let k = key
      if (i >= 0) {
        if (key.slice(0, i) !== 'aggregate_instance_extra_specs') continue
        k = key.slice(i + 1)
      }
      const vals = md.get(k)
      if (!vals || vals.size === 0) return reject(`aggregate metadata ${k} missing`, `no aggregate of ${hs.host} sets ${k} (extra spec ${key}=${req})`)
      if (![...vals].some((v) => extraSpecMatch(v, req)))
        return reject(`aggregate metadata ${k} not matched`, `aggregate metadata ${k}=${[...vals].join(',')} does not match "${req}"`)
    }
    return null
  },
}
