/**
 * Builder family: determinism (seeded ids, the fixed clock) and nova's own serialisation of the
 * versioned-object blobs (Python json.dumps style) that CloudBuilder writes into rows.
 */
import {type Flavor} from '../../../src/lib/domain/snapshot.js'

// ---------------------------------------------------------------- determinism

/** sfc32: small, fast, seedable; every id, uuid and random choice of a build comes from it. */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    this.a = 0x9e3779b9
    this.b = 0x243f6a88
    this.c = 0xb7e15162
    this.d = seed >>> 0
    for (let i = 0; i < 15; i++) this.u32()
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** [0, 1) */
  next(): number {
    return this.u32() / 4294967296
  }

  int(lo: number, hiInclusive: number): number {
    return lo + Math.floor(this.next() * (hiInclusive - lo + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  hex(n: number): string {
    let s = ''
    while (s.length < n) s += this.u32().toString(16).padStart(8, '0')
    return s.slice(0, n)
  }

  /** A version-4 uuid. */
  uuid(): string {
    const h = this.hex(32)
    const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`
  }
}

// ---------------------------------------------------------------- clock

export const DEFAULT_NOW = '2024-05-14 09:30:00'

export function parseTs(ts: string): number {
  return Date.parse(`${ts.replace(' ', 'T')}Z`)
}

export function formatTs(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

// ---------------------------------------------------------------- nova's JSON serialisation

/** A Python float: serialised with a decimal point (1.0, 16.0). */
export class PyFloat {
  constructor(readonly value: number) {}
}

type Py = null | boolean | number | string | PyFloat | Py[] | {[k: string]: Py}

const NON_ASCII = /[\u007f-\uffff]/g

const PLAIN = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/

export function pyString(s: string): string {
  if (PLAIN.test(s)) return `"${s}"`
  return JSON.stringify(s).replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** Python json.dumps(value) with its default separators. */
export function pyDumps(v: Py): string {
  if (v === null) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return String(v)
  if (typeof v === 'string') return pyString(v)
  if (v instanceof PyFloat) return Number.isInteger(v.value) ? `${v.value}.0` : String(v.value)
  if (Array.isArray(v)) return `[${v.map(pyDumps).join(', ')}]`
  const parts: string[] = []
  for (const k of Object.keys(v)) parts.push(`${pyString(k)}: ${pyDumps(v[k])}`)
  return `{${parts.join(', ')}}`
}

function novaObject(name: string, version: string, data: {[k: string]: Py}, changes?: string[]): {[k: string]: Py} {
  const o: {[k: string]: Py} = {'nova_object.name': name, 'nova_object.namespace': 'nova', 'nova_object.version': version, 'nova_object.data': data}
  if (changes) o['nova_object.changes'] = changes
  return o
}

const NUMA_CELL_CHANGES = [
  'memory',
  'cpu_usage',
  'network_metadata',
  'cpuset',
  'memory_usage',
  'pcpuset',
  'socket',
  'mempages',
  'siblings',
  'pinned_cpus',
  'id',
]
const PAGES_CHANGES = ['size_kb', 'reserved', 'total', 'used']
const INSTANCE_NUMA_CELL_CHANGES = ['memory', 'cpuset', 'cpu_pinning_raw', 'cpu_policy', 'cpu_thread_policy', 'cpuset_reserved', 'pcpuset', 'id', 'pagesize']

/**
 * When the clouds' flavors were created: the flavor object nova embeds carries its row's timestamps
 * and soft-delete fields (nova 26 writes them in every blob), and these clouds create flavors first.
 */
const FLAVOR_CREATED_AT = '2024-01-01T00:00:00Z'

/** The Flavor object nova embeds in instance_extra.flavor and request specs. */
export function flavorObject(f: Flavor): {[k: string]: Py} {
  return novaObject('Flavor', '1.2', {
    id: f.id,
    name: f.name,
    memory_mb: f.memory_mb,
    vcpus: f.vcpus,
    root_gb: f.root_gb,
    ephemeral_gb: f.ephemeral_gb,
    flavorid: f.flavorid,
    swap: f.swap,
    rxtx_factor: new PyFloat(f.rxtx_factor ?? 1),
    vcpu_weight: f.vcpu_weight ?? 0,
    disabled: f.disabled,
    is_public: f.is_public,
    extra_specs: {...f.extra_specs},
    description: f.description,
    // Last, in this order, as nova 26 writes them.
    created_at: FLAVOR_CREATED_AT,
    updated_at: null,
    deleted_at: null,
    deleted: false,
  })
}

/** instance_extra.flavor: {"cur": Flavor, "old": Flavor|null, "new": Flavor|null}. */
export function instanceFlavorBlob(cur: Flavor, old: Flavor | null = null, next: Flavor | null = null): string {
  return pyDumps({cur: flavorObject(cur), old: old ? flavorObject(old) : null, new: next ? flavorObject(next) : null})
}

export interface HostNumaCellSpec {
  /** CPUs for shared guests. */
  cpuset: number[]
  /** CPUs for dedicated guests ([compute] cpu_dedicated_set). */
  pcpuset?: number[]
  /** MiB */
  memory: number
  /** Hyperthread sibling sets; default: none reported. */
  siblings?: number[][]
  /** Page pools (4 KiB, huge pages); default: all the cell's memory in 4 KiB pages. */
  mempages?: MemPages[]
}

export interface MemPages {
  size_kb: number
  total: number
  used: number
  reserved: number
}

export interface HostNumaCellState {
  id: number
  cpuset: number[]
  pcpuset: number[]
  memory: number
  siblings: number[][]
  pinned: Set<number>
  cpuUsage: number
  memoryUsage: number
  mempages?: MemPages[]
}

export function hostNumaTopologyBlob(cells: ReadonlyArray<HostNumaCellState>): string {
  return pyDumps(
    novaObject(
      'NUMATopology',
      '1.2',
      {
        cells: cells.map((c) =>
          novaObject(
            'NUMACell',
            '1.5',
            {
              id: c.id,
              cpuset: [...c.cpuset],
              pcpuset: [...c.pcpuset],
              memory: c.memory,
              cpu_usage: c.cpuUsage,
              memory_usage: c.memoryUsage,
              pinned_cpus: [...c.pinned].sort((a, b) => a - b),
              siblings: c.siblings.map((s) => [...s]),
              mempages: (
                c.mempages ?? [
                  {size_kb: 4, total: c.memory * 256, used: 0, reserved: 0},
                  {size_kb: 2048, total: 0, used: 0, reserved: 0},
                ]
              ).map((p) => novaObject('NUMAPagesTopology', '1.1', {size_kb: p.size_kb, total: p.total, used: p.used, reserved: p.reserved}, PAGES_CHANGES)),
              network_metadata: novaObject('NetworkMetadata', '1.0', {physnets: [], tunneled: false}, ['physnets', 'tunneled']),
              socket: c.id,
            },
            NUMA_CELL_CHANGES,
          ),
        ),
      },
      ['cells'],
    ),
  )
}

export interface InstanceNumaCellSpec {
  id: number
  cpuset: number[]
  pcpuset: number[]
  cpuset_reserved: number[] | null
  memory: number
  cpu_pinning: Map<number, number> | null
  cpu_policy: string | null
  cpu_thread_policy: string | null
  /** KiB pages backing the guest (hw:mem_page_size); null: the host's default. */
  pagesize?: number | null
}

/** An InstanceNUMACell's fields as nova stores them (cpu_pinning_raw keyed by the guest CPU as a string). */
export function instanceNumaCellFields(c: InstanceNumaCellSpec): {[k: string]: Py} {
  let raw: {[k: string]: Py} | null = null
  if (c.cpu_pinning && c.cpu_pinning.size > 0) {
    raw = {}
    for (const [v, p] of c.cpu_pinning) raw[String(v)] = p
  }
  return {
    id: c.id,
    cpuset: [...c.cpuset],
    pcpuset: [...c.pcpuset],
    cpuset_reserved: c.cpuset_reserved ? [...c.cpuset_reserved] : null,
    memory: c.memory,
    pagesize: c.pagesize ?? null,
    cpu_pinning_raw: raw,
    cpu_policy: c.cpu_policy,
    cpu_thread_policy: c.cpu_thread_policy,
  }
}

/**
 * instance_extra.numa_topology. nova does not store the instance_uuid field (it is set again on load);
 * emulator_threads_policy is 'isolate' for an isolate flavor (the emulator threads have reserved
 * pCPUs), else null as for flavors without hw:emulator_threads_policy.
 */
export function instanceNumaTopologyBlob(cells: ReadonlyArray<InstanceNumaCellSpec>): string {
  return pyDumps(
    novaObject(
      'InstanceNUMATopology',
      '1.3',
      {
        emulator_threads_policy: cells.some((c) => c.cpuset_reserved !== null && c.cpuset_reserved.length > 0) ? 'isolate' : null,
        cells: cells.map((c) => novaObject('InstanceNUMACell', '1.6', instanceNumaCellFields(c), INSTANCE_NUMA_CELL_CHANGES)),
      },
      ['cells', 'emulator_threads_policy'],
    ),
  )
}

export function requestSpecBlob(args: {
  instanceUuid: string
  flavor: Flavor
  projectId: string
  userId: string
  az: string | null
  imageId: string | null
  groupUuid?: string | null
}): string {
  const image = novaObject(
    'ImageMeta',
    '1.8',
    args.imageId
      ? {
          id: args.imageId,
          name: 'ubuntu-22.04',
          status: 'active',
          size: 702021632,
          container_format: 'bare',
          disk_format: 'qcow2',
          min_ram: 0,
          min_disk: 0,
          properties: novaObject('ImageMetaProps', '1.34', {hw_architecture: 'x86_64'}, ['hw_architecture']),
        }
      : {min_ram: 0, min_disk: 0, size: 0, status: 'active', properties: novaObject('ImageMetaProps', '1.34', {}, [])},
    args.imageId
      ? ['min_ram', 'disk_format', 'min_disk', 'container_format', 'size', 'name', 'properties', 'status', 'id']
      : ['min_ram', 'min_disk', 'size', 'status', 'properties'],
  )
  return pyDumps(
    novaObject(
      'RequestSpec',
      '1.14',
      {
        image,
        numa_topology: null,
        pci_requests: null,
        project_id: args.projectId,
        user_id: args.userId,
        availability_zone: args.az,
        flavor: flavorObject(args.flavor),
        num_instances: 1,
        ignore_hosts: null,
        force_hosts: null,
        force_nodes: null,
        retry: null,
        instance_group: null,
        scheduler_hints: args.groupUuid ? {group: [args.groupUuid]} : {},
        instance_uuid: args.instanceUuid,
      },
      [
        'numa_topology',
        'pci_requests',
        'user_id',
        'num_instances',
        'project_id',
        'ignore_hosts',
        'instance_uuid',
        'instance_group',
        'force_nodes',
        'force_hosts',
        'image',
        'retry',
        'availability_zone',
        'flavor',
        'scheduler_hints',
      ],
    ),
  )
}

export const PCI_STATS_EMPTY = pyDumps(novaObject('PciDevicePoolList', '1.1', {objects: []}, ['objects']))
export const SUPPORTED_INSTANCES = pyDumps([
  ['i686', 'qemu', 'hvm'],
  ['x86_64', 'qemu', 'hvm'],
  ['i686', 'kvm', 'hvm'],
  ['x86_64', 'kvm', 'hvm'],
])

export function cpuInfo(cells: number, cpus: number, threads: number): string {
  const cores = Math.max(1, Math.floor(cpus / Math.max(1, cells) / threads))
  return pyDumps({
    arch: 'x86_64',
    model: 'Cascadelake-Server-noTSX',
    vendor: 'Intel',
    topology: {cells, sockets: 1, cores, threads},
    features: ['avx', 'avx2', 'avx512f', 'sse4.2', 'vmx', 'aes', 'pdpe1gb', 'x2apic'],
  })
}
