/**
 * Builder family: blobs in the shapes real nova wrote (test/fixtures/real-shapes/zed.json, recorded
 * by test/realnova/record-shapes.ts from driver_shapes.py's play on production-like fake-libvirt
 * computes). Each blob is the recorded one with this cloud's values put in: key order, object
 * versions and `nova_object.changes` stay nova's. Used by `generateCloud({shapes: 'real'})`.
 *
 * Blobs that depend only on the flavor (request specs, vcpu_model) or the user (key pairs) are made
 * once and shared; request specs are concatenated around the instance's own ids, so 300k of them
 * share their text instead of holding 1 GB of copies.
 */
import {readFileSync} from 'node:fs'

import type {Flavor} from '../../../src/lib/domain/snapshot.js'
import {flavorObject, type HostNumaCellState, type InstanceNumaCellSpec, instanceNumaCellFields, pyDumps} from './blobs.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

interface Fixture {
  compute_node: {numa_topology: string; stats: string; cpu_info: string}
  instances: Record<string, {flavor: string; user_id: string; extra: Record<string, string | null>; request_spec: string}>
  traits: {reported: string[]; added_from_os_traits: string[]}
}

const FIXTURE = new URL('../../fixtures/real-shapes/zed.json', import.meta.url)

/** A nova object's data rebuilt in the template's key order, every template key given a value. */
function fill(template: Json, values: Record<string, unknown>): Json {
  const data: Record<string, unknown> = {}
  for (const k of Object.keys(template['nova_object.data'] as object)) {
    if (!(k in values)) throw new Error(`real shapes: no value for ${String(template['nova_object.name'])}.${k}`)
    data[k] = values[k]
  }
  return {...template, 'nova_object.data': data}
}

export type InstanceKind = 'shared' | 'dedicated' | 'isolate'

export function instanceKind(f: Flavor): InstanceKind {
  const policy = f.extra_specs['hw:cpu_policy'] ?? 'shared'
  if (policy === 'shared') return 'shared'
  return f.extra_specs['hw:emulator_threads_policy'] === 'isolate' ? 'isolate' : 'dedicated'
}

const KIND_FLAVOR: Record<InstanceKind, string> = {shared: 'p.medium', dedicated: 'p.pinned', isolate: 'p.nfv'}

export class RealShapes {
  readonly traits: string[]
  private readonly fx: Fixture
  private readonly hostNumaT: Json
  private readonly specCache = new Map<string, string[]>()
  private readonly vcpuCache = new Map<number, string>()
  private readonly keypairCache = new Map<string, string>()
  private readonly sharedNumaCache = new Map<string, string>()

  constructor(path: URL | string = FIXTURE) {
    this.fx = JSON.parse(readFileSync(path, 'utf8')) as Fixture
    this.hostNumaT = JSON.parse(this.fx.compute_node.numa_topology)
    this.traits = [...this.fx.traits.reported, ...this.fx.traits.added_from_os_traits]
  }

  private recorded(kind: InstanceKind) {
    const r = this.fx.instances[KIND_FLAVOR[kind]]
    if (!r) throw new Error(`real shapes: no recorded ${kind} instance`)
    return r
  }

  /** compute_nodes.numa_topology of a host with these cells (pages as the cell holds them). */
  hostNuma(cells: ReadonlyArray<HostNumaCellState>): string {
    const top = this.hostNumaT
    const cellT = top['nova_object.data'].cells[0]
    const pageT = cellT['nova_object.data'].mempages[0]
    return pyDumps(
      fill(top, {
        cells: cells.map((c, i) =>
          fill(cellT, {
            id: c.id,
            cpuset: [...c.cpuset],
            pcpuset: [...c.pcpuset],
            memory: c.memory,
            cpu_usage: c.cpuUsage,
            memory_usage: c.memoryUsage,
            pinned_cpus: [...c.pinned].sort((a, b) => a - b),
            siblings: c.siblings.map((s) => [...s]),
            mempages: (c.mempages ?? [{size_kb: 4, total: c.memory * 256, used: 0, reserved: 0}]).map((p) => fill(pageT, {...p})),
            network_metadata: cellT['nova_object.data'].network_metadata,
            socket: i,
          }),
        ),
      }),
    )
  }

  private instanceNumaObject(kind: InstanceKind, cells: ReadonlyArray<InstanceNumaCellSpec>, fromSpec: boolean): Json {
    const rec = this.recorded(kind)
    const top = fromSpec ? JSON.parse(rec.request_spec)['nova_object.data'].numa_topology : JSON.parse(rec.extra.numa_topology as string)
    const cellT = top['nova_object.data'].cells[0]
    return fill(top, {
      cells: cells.map((c) => fill(cellT, instanceNumaCellFields(c))),
      emulator_threads_policy: kind === 'isolate' ? 'isolate' : null,
    })
  }

  /** instance_extra.numa_topology (a shared guest's depends only on its flavor and cell: shared text). */
  instanceNuma(f: Flavor, cells: ReadonlyArray<InstanceNumaCellSpec>): string {
    const kind = instanceKind(f)
    if (kind !== 'shared') return pyDumps(this.instanceNumaObject(kind, cells, false))
    const key = `${f.id}/${cells.map((c) => `${c.id}:${c.memory}:${c.cpuset.length}`).join(',')}`
    let s = this.sharedNumaCache.get(key)
    if (s === undefined) this.sharedNumaCache.set(key, (s = pyDumps(this.instanceNumaObject(kind, cells, false))))
    return s
  }

  /** The NUMA topology a request asks for: the flavor's vCPUs on cell 0, nothing pinned yet. */
  private requestedNuma(f: Flavor, kind: InstanceKind): InstanceNumaCellSpec[] {
    const all = Array.from({length: f.vcpus}, (_, i) => i)
    return [
      {
        id: 0,
        cpuset: kind === 'shared' ? all : [],
        pcpuset: kind === 'shared' ? [] : all,
        cpuset_reserved: null,
        memory: f.memory_mb,
        cpu_pinning: null,
        cpu_policy: kind === 'shared' ? null : 'dedicated',
        cpu_thread_policy: f.extra_specs['hw:cpu_thread_policy'] ?? null,
        pagesize: null,
      },
    ]
  }

  /** nova_api.request_specs.spec, as nova 26's API writes it for a boot of one instance. */
  requestSpec(args: {
    instanceUuid: string
    flavor: Flavor
    projectId: string
    userId: string
    az: string | null
    imageId: string | null
    groupUuid?: string | null
  }): string {
    const kind = instanceKind(args.flavor)
    const key = `${args.flavor.id}/${args.az ?? ''}/${args.imageId ?? ''}/${args.groupUuid ?? ''}`
    let parts = this.specCache.get(key)
    if (parts === undefined) {
      const spec = JSON.parse(this.recorded(kind).request_spec)
      const d = spec['nova_object.data']
      const image = {...d.image, 'nova_object.data': {...d.image['nova_object.data'], id: args.imageId ?? d.image['nova_object.data'].id}}
      const numa =
        args.flavor.extra_specs['hw:numa_nodes'] !== undefined || kind !== 'shared'
          ? this.instanceNumaObject(kind, this.requestedNuma(args.flavor, kind), true)
          : null
      const marks = {uuid: '@@U@@', project: '@@P@@', user: '@@S@@'}
      const text = pyDumps(
        fill(spec, {
          ...d,
          image,
          numa_topology: numa,
          project_id: marks.project,
          user_id: marks.user,
          availability_zone: args.az,
          flavor: flavorObject(args.flavor),
          scheduler_hints: args.groupUuid ? {group: [args.groupUuid]} : {},
          instance_uuid: marks.uuid,
          is_bfv: args.imageId === null,
        }),
      )
      parts = text.split(/@@([UPS])@@/)
      this.specCache.set(key, parts)
    }
    const vals: Record<string, string> = {U: args.instanceUuid, P: args.projectId, S: args.userId}
    let out = ''
    for (let i = 0; i < parts.length; i++) out += i % 2 === 0 ? parts[i] : vals[parts[i]]
    return out
  }

  /** instance_extra.vcpu_model ([libvirt] cpu_mode host-model; one socket per vCPU, nova's default topology). */
  vcpuModel(vcpus: number): string {
    let s = this.vcpuCache.get(vcpus)
    if (s === undefined) {
      const m = JSON.parse(this.recorded('shared').extra.vcpu_model as string)
      const topo = m['nova_object.data'].topology
      const data = {...m['nova_object.data'], topology: fill(topo, {...topo['nova_object.data'], sockets: vcpus, cores: 1, threads: 1})}
      this.vcpuCache.set(vcpus, (s = pyDumps({...m, 'nova_object.data': data})))
    }
    return s
  }

  /** instance_extra.keypairs: the user's key pair (the recorded one, owned by this user). */
  keypairs(userId: string): string {
    let s = this.keypairCache.get(userId)
    if (s === undefined) {
      const k = JSON.parse(this.recorded('shared').extra.keypairs as string)
      const obj = k['nova_object.data'].objects[0]
      const one = {...obj, 'nova_object.data': {...obj['nova_object.data'], user_id: userId}}
      this.keypairCache.set(userId, (s = pyDumps({...k, 'nova_object.data': {objects: [one]}})))
    }
    return s
  }
}

let shared: RealShapes | undefined

/** The recorded shapes, read once per process. */
export function realShapes(): RealShapes {
  return (shared ??= new RealShapes())
}
