/**
 * An independent consistency checker for generated snapshots: what "nova and placement agree" means
 * for the builder, written from the rules in test/support/builders.ts rather than from the audits,
 * so that the generator's tests do not merely replay src/lib/checks.
 */
import {parseHostNumaTopology, parseInstanceFlavors, parseInstanceNumaTopology} from '../../src/lib/domain/nova-objects.js'
import type {Flavor, Snapshot} from '../../src/lib/domain/snapshot.js'
import {flavorResources} from '../support/builders.js'

const DONE = new Set(['confirmed', 'reverted', 'error', 'failed', 'completed', 'cancelled', 'done'])
const RC_NAMES: Record<number, string> = {0: 'VCPU', 1: 'MEMORY_MB', 2: 'DISK_GB', 14: 'PCPU'}

export function violations(s: Snapshot): string[] {
  const out: string[] = []
  const liveCn = s.nova.compute_nodes.filter((c) => c.deleted === 0)
  const rpByUuid = new Map(s.placement.resource_providers.map((r) => [r.uuid, r]))
  const rpById = new Map(s.placement.resource_providers.map((r) => [r.id, r]))
  const cnByUuid = new Map(liveCn.map((c) => [c.uuid as string, c]))
  const sharing = new Set(
    s.placement.resource_provider_traits
      .filter((t) => s.placement.traits.find((x) => x.id === t.trait_id)?.name === 'MISC_SHARES_VIA_AGGREGATE')
      .map((t) => t.resource_provider_id),
  )

  for (const cn of liveCn) {
    const rp = rpByUuid.get(cn.uuid as string)
    if (!rp) out.push(`provider: compute node ${cn.hypervisor_hostname} has no provider`)
    else if (rp.name !== cn.hypervisor_hostname) out.push(`provider: ${cn.uuid} named ${rp.name}`)
  }
  for (const rp of s.placement.resource_providers) {
    if (rp.parent_provider_id === null && !sharing.has(rp.id) && !cnByUuid.has(rp.uuid)) out.push(`provider: root ${rp.name} has no live compute node`)
  }

  const flavorById = new Map<number, Flavor>(s.nova_api.flavors.map((f) => [f.id, f]))
  const live = s.nova.instances.filter((i) => i.deleted === 0)
  const liveByUuid = new Map<string, number>()
  for (const i of live) liveByUuid.set(i.uuid, (liveByUuid.get(i.uuid) ?? 0) + 1)
  for (const [u, n] of liveByUuid) if (n > 1) out.push(`cell: instance ${u} live ${n} times`)
  const mapping = new Map(s.nova_api.instance_mappings.map((m) => [m.instance_uuid, m]))
  const cellIdByUuid = new Map(s.cells.map((c) => [c.uuid, c.id]))
  for (const i of live) {
    const m = mapping.get(i.uuid)
    if (!m) out.push(`cell: instance ${i.uuid} unmapped`)
    else if (m.cell_id !== cellIdByUuid.get(i.cell_uuid)) out.push(`cell: instance ${i.uuid} mapped to cell ${m.cell_id}`)
  }
  const mappedHosts = new Set(s.nova_api.host_mappings.map((h) => h.host))
  const liveServiceHosts = new Set(s.nova.services.filter((x) => x.deleted === 0 && x.binary === 'nova-compute').map((x) => x.host))
  for (const h of liveServiceHosts) if (!mappedHosts.has(h as string)) out.push(`cell: host ${h} unmapped`)
  for (const h of mappedHosts) if (!liveServiceHosts.has(h)) out.push(`cell: host mapping ${h} stale`)

  // allocations per consumer versus what each live instance / in-progress migration should hold
  const allocs = new Map<string, Map<string, number>>()
  for (const a of s.placement.allocations) {
    const rp = rpById.get(a.resource_provider_id)
    const key = `${rp?.uuid}/${RC_NAMES[a.resource_class_id] ?? a.resource_class_id}`
    let m = allocs.get(a.consumer_id)
    if (!m) allocs.set(a.consumer_id, (m = new Map()))
    m.set(key, (m.get(key) ?? 0) + a.used)
  }
  const consumers = new Map(s.placement.consumers.map((c) => [c.uuid, c]))
  const projects = new Map(s.placement.projects.map((p) => [p.id, p.external_id]))
  const expected = new Map<string, Map<string, number>>()
  const add = (consumer: string, node: string, res: Record<string, number>) => {
    const cn = liveCn.find((c) => c.hypervisor_hostname === node)
    let m = expected.get(consumer)
    if (!m) expected.set(consumer, (m = new Map()))
    for (const [rc, n] of Object.entries(res)) m.set(`${cn?.uuid}/${rc}`, (m.get(`${cn?.uuid}/${rc}`) ?? 0) + n)
  }
  const inProgress = s.nova.migrations.filter((m) => m.deleted === 0 && !DONE.has(m.status ?? ''))
  const usage = new Map<string, {vcpus: number; mem: number; disk: number; swap: number; n: number}>()
  const track = (
    node: string | null,
    f: {vcpus: number; memory_mb: number; root_gb: number | null; ephemeral_gb: number | null; swap: number},
    bfv: boolean,
    counted: boolean,
  ) => {
    if (!node) return
    let u = usage.get(node)
    if (!u) usage.set(node, (u = {vcpus: 0, mem: 0, disk: 0, swap: 0, n: 0}))
    u.vcpus += f.vcpus
    u.mem += f.memory_mb
    u.disk += (bfv ? 0 : (f.root_gb ?? 0)) + (f.ephemeral_gb ?? 0)
    u.swap += f.swap
    if (counted) u.n += 1
  }
  const pinsByNode = new Map<string, Map<number, number[]>>()
  for (const i of live) {
    if (i.cell_uuid === '00000000-0000-0000-0000-000000000000') continue
    const parsed = parseInstanceFlavors(i.extra?.flavor ?? null)
    const cur = parsed.ok ? parsed.value?.cur : null
    const row = flavorById.get(i.instance_type_id as number)
    if (!cur || !row) {
      out.push(`instance: ${i.uuid} has no flavor`)
      continue
    }
    const bfv = i.image_ref === ''
    const res = flavorResources(row, bfv).resources
    const mig = inProgress.find((m) => m.instance_uuid === i.uuid)
    if (mig) {
      // the instance consumer holds the destination, the migration (or, evacuating, the instance) the source
      const src = mig.migration_type === 'evacuation' ? i.uuid : (mig.uuid as string)
      add(src, mig.source_node as string, res)
      add(i.uuid, mig.dest_node as string, res)
      track(mig.source_node === i.node ? mig.dest_node : mig.source_node, row, false, false)
    } else add(i.uuid, i.node as string, res)
    track(i.node, row, bfv, true)
    const numa = parseInstanceNumaTopology(i.extra?.numa_topology ?? null)
    if (numa.ok && numa.value) {
      let byCell = pinsByNode.get(i.node as string)
      if (!byCell) pinsByNode.set(i.node as string, (byCell = new Map()))
      const pinned = numa.value.cells.reduce((n, c) => n + new Set([...c.cpu_pinning.values(), ...c.cpuset_reserved]).size, 0)
      if ((res.PCPU ?? 0) !== pinned) out.push(`pinning: ${i.uuid} pins ${pinned} pCPUs, asks placement for ${res.PCPU ?? 0} PCPU`)
      for (const c of numa.value.cells) {
        const list = byCell.get(c.id) ?? []
        list.push(...c.cpu_pinning.values(), ...c.cpuset_reserved)
        byCell.set(c.id, list)
      }
    }
  }
  for (const consumer of new Set([...allocs.keys(), ...expected.keys()])) {
    const a = allocs.get(consumer) ?? new Map()
    const e = expected.get(consumer) ?? new Map()
    for (const k of new Set([...a.keys(), ...e.keys()])) {
      if ((a.get(k) ?? 0) !== (e.get(k) ?? 0)) out.push(`allocation: ${consumer} ${k} holds ${a.get(k) ?? 0}, expected ${e.get(k) ?? 0}`)
    }
    if (allocs.has(consumer)) {
      const c = consumers.get(consumer)
      if (!c || projects.get(c.project_id) === '00000000-0000-0000-0000-000000000000') out.push(`allocation: consumer ${consumer} incomplete`)
    }
  }

  // capacity
  const used = new Map<string, number>()
  for (const a of s.placement.allocations)
    used.set(`${a.resource_provider_id}/${a.resource_class_id}`, (used.get(`${a.resource_provider_id}/${a.resource_class_id}`) ?? 0) + a.used)
  for (const inv of s.placement.inventories) {
    const u = used.get(`${inv.resource_provider_id}/${inv.resource_class_id}`) ?? 0
    if (u > (inv.total - inv.reserved) * inv.allocation_ratio)
      out.push(`provider: ${rpById.get(inv.resource_provider_id)?.name} over capacity on ${inv.resource_class_id}`)
  }

  // compute node columns, inventories and pins
  for (const cn of liveCn) {
    const node = cn.hypervisor_hostname as string
    const u = usage.get(node) ?? {vcpus: 0, mem: 0, disk: 0, swap: 0, n: 0}
    if (cn.hypervisor_type === 'ironic') continue
    const mem = u.mem + 512
    const disk = Math.trunc(u.disk + u.swap / 1024)
    if (cn.vcpus_used !== u.vcpus || cn.memory_mb_used !== mem || cn.local_gb_used !== disk || cn.running_vms !== u.n)
      out.push(`usage: ${node} columns ${cn.vcpus_used}/${cn.memory_mb_used}/${cn.local_gb_used}/${cn.running_vms} vs ${u.vcpus}/${mem}/${disk}/${u.n}`)
    if (cn.free_ram_mb !== cn.memory_mb - cn.memory_mb_used || cn.free_disk_gb !== cn.local_gb - cn.local_gb_used) out.push(`usage: ${node} free columns`)
    if ((cn.free_ram_mb ?? 0) < 0 || (cn.free_disk_gb ?? 0) < 0 || cn.vcpus_used > cn.vcpus) out.push(`usage: ${node} negative free`)
    const rp = rpByUuid.get(cn.uuid as string)
    const inv = rp ? s.placement.inventories.filter((x) => x.resource_provider_id === rp.id) : []
    const mi = inv.find((x) => x.resource_class_id === 1)
    const vi = inv.find((x) => x.resource_class_id === 0)
    if (rp && (mi?.total !== cn.memory_mb || (vi?.total ?? 0) !== cn.vcpus)) out.push(`provider: ${node} inventory drift`)
    const topo = parseHostNumaTopology(cn.numa_topology)
    if (!topo.ok || !topo.value) continue
    for (const hc of topo.value.cells) {
      const pins = pinsByNode.get(node)?.get(hc.id) ?? []
      const union = [...new Set(pins)].sort((a, b) => a - b)
      if (union.length !== pins.length) out.push(`pinning: ${node} cell ${hc.id} overlap`)
      if (pins.some((p) => !hc.pcpuset.includes(p))) out.push(`pinning: ${node} cell ${hc.id} outside dedicated set`)
      if (JSON.stringify(union) !== JSON.stringify([...hc.pinned_cpus].sort((a, b) => a - b)))
        out.push(`pinning: ${node} cell ${hc.id} pinned_cpus ${hc.pinned_cpus} vs pins ${union}`)
    }
  }

  // nova aggregates mirrored in placement
  const aggIdByUuid = new Map(s.placement.placement_aggregates.map((a) => [a.uuid, a.id]))
  const links = new Set(s.placement.resource_provider_aggregates.map((l) => `${l.resource_provider_id}/${l.aggregate_id}`))
  const expectedLinks = new Set<string>()
  for (const agg of s.nova_api.aggregates) {
    for (const host of agg.hosts) {
      for (const cn of liveCn.filter((c) => c.host === host)) {
        const rp = rpByUuid.get(cn.uuid as string)
        if (rp) expectedLinks.add(`${rp.id}/${aggIdByUuid.get(agg.uuid)}`)
      }
    }
  }
  for (const l of expectedLinks) if (!links.has(l)) out.push(`aggregate: missing link ${l}`)
  const liveRpIds = new Set(liveCn.map((c) => rpByUuid.get(c.uuid as string)?.id))
  // links of providers with no live compute node belong to the provider findings, not here
  for (const l of links) if (!expectedLinks.has(l) && liveRpIds.has(Number(l.split('/')[0]))) out.push(`aggregate: extra link ${l}`)
  return out
}
