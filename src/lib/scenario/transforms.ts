/**
 * What-if transforms: pure functions Snapshot -> Snapshot that never touch their input (changed
 * tables are copied, changed rows replaced). Each returns the new snapshot and one line per change.
 */
import {ResourceClassRegistry} from '../domain/resource-classes.js'
import type {ComputeNode, Snapshot} from '../domain/snapshot.js'
import {ConfigError, NotFoundError} from '../errors.js'

export interface Transformed {
  snapshot: Snapshot
  changes: string[]
}

/** A shallow copy whose table containers can be replaced without touching the original. */
export function copySnapshot(s: Snapshot): Snapshot {
  return {...s, cells: [...s.cells], nova_api: {...s.nova_api}, nova: {...s.nova}, placement: {...s.placement}}
}

function nodesOfHost(s: Snapshot, host: string): ComputeNode[] {
  const nodes = s.nova.compute_nodes.filter((cn) => cn.deleted === 0 && (cn.host === host || cn.hypervisor_hostname === host))
  if (nodes.length === 0) {
    const known = [...new Set(s.nova.compute_nodes.filter((cn) => cn.deleted === 0).map((cn) => cn.host))].slice(0, 8)
    throw new NotFoundError(`host "${host}" is not a live compute node of this snapshot`, `Hosts: ${known.join(', ')}${known.length === 8 ? ', ...' : ''}`)
  }
  return nodes
}

function traitId(s: Snapshot, name: string): number {
  const t = s.placement.traits.find((x) => x.name === name)
  if (t) return t.id
  const id = s.placement.traits.reduce((m, x) => Math.max(m, x.id), 0) + 1
  s.placement.traits = [...s.placement.traits, {id, name}]
  return id
}

/**
 * `openstack compute service set --disable`: the service row, and the COMPUTE_STATUS_DISABLED trait
 * nova-compute then puts on its root providers (request filter compute_status_filter reads it).
 */
export function disableHost(snapshot: Snapshot, host: string, reason = 'cloudctl what-if'): Transformed {
  const s = copySnapshot(snapshot)
  const nodes = nodesOfHost(s, host)
  const hostName = nodes[0]?.host ?? host
  s.nova.services = s.nova.services.map((svc) =>
    svc.deleted === 0 && svc.host === hostName && svc.binary === 'nova-compute' ? {...svc, disabled: true, disabled_reason: reason} : svc,
  )
  const tid = traitId(s, 'COMPUTE_STATUS_DISABLED')
  const rpIds = new Set(nodes.map((cn) => s.placement.resource_providers.find((rp) => rp.uuid === cn.uuid)?.id).filter((x): x is number => x !== undefined))
  const has = new Set(s.placement.resource_provider_traits.filter((t) => t.trait_id === tid).map((t) => t.resource_provider_id))
  s.placement.resource_provider_traits = [
    ...s.placement.resource_provider_traits,
    ...[...rpIds].filter((id) => !has.has(id)).map((id) => ({resource_provider_id: id, trait_id: tid})),
  ]
  return {snapshot: s, changes: [`${hostName}: nova-compute disabled (COMPUTE_STATUS_DISABLED on ${rpIds.size} provider(s))`]}
}

export interface RatioChange {
  rc: string
  ratio: number
  aggregate: string | null
}

/** `VCPU=4.0` or `MEMORY_MB=1.2@aggregate`. */
export function parseAllocationRatio(text: string): RatioChange {
  const m = /^([A-Z][A-Z0-9_]*)=([0-9]*\.?[0-9]+)(?:@(.+))?$/.exec(text.trim())
  if (!m)
    throw new ConfigError(`--set-allocation-ratio "${text}" is not RC=RATIO[@AGGREGATE]`, 'Example: --set-allocation-ratio VCPU=4.0 or MEMORY_MB=1.0@gpu-hosts')
  const ratio = Number(m[2])
  if (!(ratio > 0)) throw new ConfigError(`--set-allocation-ratio ${text}: the ratio must be positive`)
  return {rc: m[1] as string, ratio, aggregate: m[3] ?? null}
}

const NODE_COLUMN: Record<string, 'cpu_allocation_ratio' | 'ram_allocation_ratio' | 'disk_allocation_ratio'> = {
  VCPU: 'cpu_allocation_ratio',
  MEMORY_MB: 'ram_allocation_ratio',
  DISK_GB: 'disk_allocation_ratio',
}

/**
 * The allocation ratio of a resource class on every compute node provider (tree included), or on
 * those of an aggregate's hosts: placement's inventory (stored as a MySQL FLOAT) and, for
 * VCPU/MEMORY_MB/DISK_GB, the compute node column the filters and NUMA limits read.
 */
export function setAllocationRatio(snapshot: Snapshot, change: RatioChange): Transformed {
  const s = copySnapshot(snapshot)
  const rcId = new ResourceClassRegistry(s.placement.resource_classes).id(change.rc)
  if (rcId === undefined)
    throw new ConfigError(`unknown resource class ${change.rc}`, 'Standard classes: VCPU, PCPU, MEMORY_MB, DISK_GB, ...; custom ones start with CUSTOM_.')
  let nodes = s.nova.compute_nodes.filter((cn) => cn.deleted === 0)
  if (change.aggregate) {
    const agg = s.nova_api.aggregates.find((a) => a.name === change.aggregate || a.uuid === change.aggregate)
    if (!agg)
      throw new NotFoundError(
        `aggregate "${change.aggregate}" not found`,
        `Aggregates: ${s.nova_api.aggregates.map((a) => a.name ?? a.uuid).join(', ') || '(none)'}`,
      )
    const hosts = new Set(agg.hosts)
    nodes = nodes.filter((cn) => cn.host !== null && hosts.has(cn.host))
  }
  const rootIds = new Set<number>()
  const byUuid = new Map(s.placement.resource_providers.map((rp) => [rp.uuid, rp]))
  for (const cn of nodes) {
    const rp = cn.uuid ? byUuid.get(cn.uuid) : undefined
    if (rp) rootIds.add(rp.root_provider_id ?? rp.id)
  }
  const inTree = new Set(s.placement.resource_providers.filter((rp) => rootIds.has(rp.root_provider_id ?? rp.id)).map((rp) => rp.id))
  const stored = Math.fround(change.ratio)
  let n = 0
  s.placement.inventories = s.placement.inventories.map((inv) => {
    if (inv.resource_class_id !== rcId || !inTree.has(inv.resource_provider_id)) return inv
    n++
    return {...inv, allocation_ratio: stored}
  })
  const col = NODE_COLUMN[change.rc]
  if (col) {
    const ids = new Set(nodes.map((cn) => `${cn.cell_uuid}/${cn.id}`))
    s.nova.compute_nodes = s.nova.compute_nodes.map((cn) => (ids.has(`${cn.cell_uuid}/${cn.id}`) ? {...cn, [col]: stored} : cn))
  }
  const where = change.aggregate ? `hosts of aggregate ${change.aggregate}` : 'every compute node'
  return {snapshot: s, changes: [`${change.rc} allocation_ratio ${change.ratio} on ${where} (${n} inventories)`]}
}

/** Rewrite the cells of a host NUMA topology blob (versioned object or plain JSON). */
export function rewriteHostNumaCells(text: string, fn: (cell: Record<string, unknown>) => void): string {
  const raw = JSON.parse(text) as Record<string, unknown>
  const data = (raw['nova_object.data'] ?? raw) as {cells?: unknown[]}
  for (const c of data.cells ?? []) {
    const rec = c as Record<string, unknown>
    fn((rec['nova_object.data'] ?? rec) as Record<string, unknown>)
  }
  return JSON.stringify(raw)
}

function emptyStats(text: string | null): string | null {
  if (text === null) return null
  try {
    const v = JSON.parse(text) as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (
        k === 'num_instances' ||
        k === 'io_workload' ||
        k.startsWith('num_vm_') ||
        k.startsWith('num_task_') ||
        k.startsWith('num_os_type_') ||
        k.startsWith('num_proj_')
      )
        continue
      out[k] = x
    }
    out.num_instances = '0'
    out.io_workload = '0'
    return JSON.stringify(out)
  } catch {
    return text
  }
}

const cloneUuid = (kind: number, n: number) => `c10e${kind.toString(16).padStart(4, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

/**
 * N new hosts like an existing one, empty: its service, compute node (usage reset, NUMA cells with
 * nothing pinned), host mapping, root provider with the same inventories, traits and aggregates
 * (nova and placement). Child providers (PCI, vGPU) are not copied.
 */
export function addHostsLike(snapshot: Snapshot, count: number, like: string): Transformed {
  if (!Number.isInteger(count) || count < 1) throw new ConfigError('--add-hosts must be a positive integer')
  const s = copySnapshot(snapshot)
  const [cn0] = nodesOfHost(s, like)
  const cn = cn0 as ComputeNode
  const host = cn.host ?? like
  const svc = s.nova.services.find((x) => x.deleted === 0 && x.host === host && x.binary === 'nova-compute' && x.cell_uuid === cn.cell_uuid)
  const rp = s.placement.resource_providers.find((x) => x.uuid === cn.uuid)
  if (!svc || !rp) throw new ConfigError(`host ${like} has no nova-compute service or no resource provider: it cannot be copied`)
  const taken = new Set([
    ...s.nova.compute_nodes.map((x) => x.host),
    ...s.nova.compute_nodes.map((x) => x.hypervisor_hostname),
    ...s.nova.services.map((x) => x.host),
  ])
  const maxId = <T extends {id: number}>(rows: T[]) => rows.reduce((m, x) => Math.max(m, x.id), 0)
  let svcId = maxId(s.nova.services.filter((x) => x.cell_uuid === cn.cell_uuid))
  let cnId = maxId(s.nova.compute_nodes.filter((x) => x.cell_uuid === cn.cell_uuid))
  let rpId = maxId(s.placement.resource_providers)
  let invId = maxId(s.placement.inventories)
  let hmId = maxId(s.nova_api.host_mappings)
  const cellId = s.cells.find((c) => c.uuid === cn.cell_uuid)?.id ?? 0
  const invs = s.placement.inventories.filter((i) => i.resource_provider_id === rp.id)
  const traits = s.placement.resource_provider_traits.filter((t) => t.resource_provider_id === rp.id)
  const paggs = s.placement.resource_provider_aggregates.filter((a) => a.resource_provider_id === rp.id)
  const memRc = new ResourceClassRegistry(s.placement.resource_classes).id('MEMORY_MB')
  const memReserved = invs.find((i) => i.resource_class_id === memRc)?.reserved ?? 0
  const numa = cn.numa_topology
    ? rewriteHostNumaCells(cn.numa_topology, (c) => {
        c.pinned_cpus = []
        c.cpu_usage = 0
        c.memory_usage = 0
        if (Array.isArray(c.mempages))
          for (const p of c.mempages as Array<Record<string, unknown>>)
            (p['nova_object.data'] ? (p['nova_object.data'] as Record<string, unknown>) : p).used = 0
      })
    : null
  const services = [...s.nova.services]
  const nodes = [...s.nova.compute_nodes]
  const providers = [...s.placement.resource_providers]
  const inventories = [...s.placement.inventories]
  const rpTraits = [...s.placement.resource_provider_traits]
  const rpAggs = [...s.placement.resource_provider_aggregates]
  const mappings = [...s.nova_api.host_mappings]
  const names: string[] = []
  for (let k = 1, made = 0; made < count; k++) {
    const name = `${host}-copy-${k}`
    if (taken.has(name)) continue
    made++
    names.push(name)
    const uuid = cloneUuid(1, rpId + 1)
    services.push({...svc, id: ++svcId, uuid: cloneUuid(2, svcId), host: name, disabled: false, disabled_reason: null, forced_down: false})
    nodes.push({
      ...cn,
      id: ++cnId,
      uuid,
      service_id: svcId,
      host: name,
      hypervisor_hostname: name,
      vcpus_used: 0,
      memory_mb_used: memReserved,
      local_gb_used: 0,
      free_ram_mb: cn.memory_mb - memReserved,
      free_disk_gb: cn.local_gb,
      disk_available_least: cn.local_gb,
      current_workload: 0,
      running_vms: 0,
      stats: emptyStats(cn.stats),
      numa_topology: numa,
    })
    const newRp = ++rpId
    providers.push({id: newRp, uuid, name, generation: 1, root_provider_id: newRp, parent_provider_id: null})
    for (const inv of invs) inventories.push({...inv, id: ++invId, resource_provider_id: newRp})
    for (const t of traits)
      if (t.trait_id !== s.placement.traits.find((x) => x.name === 'COMPUTE_STATUS_DISABLED')?.id)
        rpTraits.push({resource_provider_id: newRp, trait_id: t.trait_id})
    for (const a of paggs) rpAggs.push({resource_provider_id: newRp, aggregate_id: a.aggregate_id})
    mappings.push({id: ++hmId, cell_id: cellId, host: name})
  }
  s.nova.services = services
  s.nova.compute_nodes = nodes
  s.placement.resource_providers = providers
  s.placement.inventories = inventories
  s.placement.resource_provider_traits = rpTraits
  s.placement.resource_provider_aggregates = rpAggs
  s.nova_api.host_mappings = mappings
  s.nova_api.aggregates = s.nova_api.aggregates.map((a) => (a.hosts.includes(host) ? {...a, hosts: [...a.hosts, ...names]} : a))
  return {
    snapshot: s,
    changes: [`${count} empty host(s) like ${host}: ${names.length > 4 ? `${names.slice(0, 3).join(', ')}, ..., ${names.at(-1)}` : names.join(', ')}`],
  }
}
