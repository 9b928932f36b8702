/**
 * providers: placement resource providers versus nova compute nodes. nova-compute finds its provider
 * by the compute node's uuid and creates one named after hypervisor_hostname, so a provider left
 * behind with that name makes the creation fail (ResourceProviderCreationFailed, seed 004).
 */
import type {Finding, FindingSubject} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, ResourceProvider} from '../domain/snapshot.js'
import {AuditContext, capacityOf, floatColumn, push, shortHostName as shortName} from './context.js'

const REPAIR = 'cloudctl repair providers'

export function checkProviders(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const findings: Finding[] = []
  const rc = model.rc
  const providerRow = (rp: ResourceProvider) => ({id: rp.id, uuid: rp.uuid, name: rp.name, generation: rp.generation})
  const cnRow = (cn: ComputeNode) => ({
    id: cn.id,
    uuid: cn.uuid,
    cell_uuid: cn.cell_uuid,
    host: cn.host,
    hypervisor_hostname: cn.hypervisor_hostname,
    service_id: cn.service_id,
    deleted: cn.deleted,
    deleted_at: cn.deleted_at,
  })
  const treeAllocations = (rp: ResourceProvider) =>
    model.tree(rp).flatMap((p) =>
      (model.allocationsByProvider.get(p.id) ?? []).map((a) => ({
        id: a.id,
        resource_provider_id: a.resource_provider_id,
        consumer_uuid: a.consumer_id,
        resource_class: rc.name(a.resource_class_id),
        used: a.used,
      })),
    )
  const providerSubject = (rp: ResourceProvider, cn?: ComputeNode): FindingSubject => {
    // Without a live node, name the cell and host from a deleted node row or the host mapping.
    const dead = cn ? undefined : model.computeNodesByUuid.get(rp.uuid)?.[0]
    const hm = cn || dead || rp.name === null ? undefined : (ctx.hostMappingsByHost.get(rp.name) ?? [])[0]
    const hmCell = hm ? ctx.cellById(hm.cell_id) : undefined
    const subject: FindingSubject = cn ? ctx.nodeSubject(cn) : dead ? ctx.nodeSubject(dead) : hmCell ? {cell: hmCell.name ?? hmCell.uuid, cell_uuid: hmCell.uuid, host: rp.name as string} : {}
    if (!cn && !dead && rp.name !== null) subject.node = rp.name
    subject.provider_uuid = rp.uuid
    return subject
  }
  /** Absence of a compute node is only a fact when the cell that would hold it was read. */
  const absenceDecidable = (rp: ResourceProvider): boolean => {
    if (model.allCellsAvailable) return true
    if (rp.name === null) return false
    const mappings = ctx.hostMappingsByHost.get(rp.name) ?? ctx.hostMappingsByHost.get(shortName(rp.name)) ?? []
    return mappings.length > 0 && mappings.every((hm) => ctx.cellById(hm.cell_id)?.status === 'available')
  }

  const roots: ResourceProvider[] = []
  for (const rp of model.snapshot.placement.resource_providers) {
    if (rp.parent_provider_id !== null || ctx.isSharing(rp)) continue
    roots.push(rp)
  }

  // Live compute nodes without a provider of their uuid: uuid-mismatch when a provider carries the name.
  const claimed = new Set<number>()
  for (const cn of model.liveComputeNodes) {
    if (cn.uuid && model.providersByUuid.has(cn.uuid)) continue
    const named = (cn.hypervisor_hostname === null ? [] : (model.providersByName.get(cn.hypervisor_hostname) ?? [])).filter(
      (rp) => rp.parent_provider_id === null && !ctx.isSharing(rp),
    )
    if (named.length > 0) {
      for (const rp of named) claimed.add(rp.id)
      findings.push({
        check: 'providers',
        code: 'provider.uuid-mismatch',
        severity: 'error',
        subject: {...ctx.nodeSubject(cn), provider_uuid: named[0].uuid},
        message: `Compute node ${cn.hypervisor_hostname} has uuid ${cn.uuid} but provider ${named[0].uuid} carries its name: nova-compute fails with ResourceProviderCreationFailed.`,
        evidence: {
          compute_node: cnRow(cn),
          providers: named.map((rp) => ({...providerRow(rp), allocations: treeAllocations(rp)})),
        },
        repair: REPAIR,
      })
      continue
    }
    findings.push({
      check: 'providers',
      code: 'provider.missing',
      severity: 'warning',
      subject: ctx.nodeSubject(cn),
      message: `Compute node ${cn.hypervisor_hostname ?? cn.host} (uuid ${cn.uuid}) has no resource provider: the scheduler cannot place anything on it.`,
      evidence: {compute_node: cnRow(cn), service: model.serviceOf(cn) ?? null},
      repair: 'Restart nova-compute on the host (it creates its provider), or: cloudctl repair providers',
    })
  }

  // Several root providers for one hostname (a renamed host, FQDN versus short name).
  const byHostname = new Map<string, ResourceProvider[]>()
  for (const rp of roots) if (rp.name !== null && !claimed.has(rp.id)) push(byHostname, shortName(rp.name).toLowerCase(), rp)
  for (const [hostname, rps] of byHostname) {
    if (rps.length < 2) continue
    const extra = rps.filter((rp) => !ctx.computeNodeOf(rp))
    if (extra.length === 0 || !extra.every(absenceDecidable)) continue
    for (const rp of extra) claimed.add(rp.id)
    const keep = rps.find((rp) => ctx.computeNodeOf(rp))
    const keepCn = keep && ctx.computeNodeOf(keep)
    findings.push({
      check: 'providers',
      code: 'provider.duplicate-name',
      severity: 'warning',
      subject: keepCn ? {...ctx.nodeSubject(keepCn), provider_uuid: extra[0].uuid} : {node: extra[0].name ?? hostname, provider_uuid: extra[0].uuid},
      message: `${rps.length} resource providers stand for host ${hostname} (${rps.map((rp) => rp.name).join(', ')}); ${extra.length} of them belong to no live compute node.`,
      evidence: {
        hostname,
        providers: rps.map((rp) => {
          const cn = ctx.computeNodeOf(rp)
          return {...providerRow(rp), compute_node: cn ? cnRow(cn) : null, stale: !cn, allocations: cn ? undefined : treeAllocations(rp)}
        }),
      },
      repair: REPAIR,
    })
  }

  // Stale providers: no compute node, a deleted one, or a deleted nova-compute service.
  let undecided = 0
  for (const rp of roots) {
    if (claimed.has(rp.id)) continue
    const cn = ctx.computeNodeOf(rp)
    let cause: 'no-compute-node' | 'compute-node-deleted' | 'service-deleted' | undefined
    let detail: Record<string, unknown> = {}
    if (cn) {
      const svc = model.serviceOf(cn)
      if (!svc || svc.deleted !== 0) {
        cause = 'service-deleted'
        detail = {compute_node: cnRow(cn), service: svc ?? null}
      }
    } else {
      const rows = model.computeNodesByUuid.get(rp.uuid) ?? []
      if (rows.length > 0) {
        cause = 'compute-node-deleted'
        detail = {compute_nodes: rows.map(cnRow)}
      } else if (absenceDecidable(rp)) {
        cause = 'no-compute-node'
      } else {
        undecided++
      }
    }
    if (!cause) continue
    const allocations = treeAllocations(rp)
    const why = {
      'no-compute-node': 'no compute node in any cell has its uuid',
      'compute-node-deleted': 'its compute node is deleted',
      'service-deleted': 'the nova-compute service of its compute node is deleted',
    }[cause]
    findings.push({
      check: 'providers',
      code: 'provider.stale',
      severity: 'warning',
      subject: cn ? {...ctx.nodeSubject(cn), provider_uuid: rp.uuid} : providerSubject(rp),
      message: `Resource provider ${rp.name ?? rp.uuid} is stale: ${why}${allocations.length > 0 ? `; ${new Set(allocations.map((a) => a.consumer_uuid)).size} consumer(s) still hold allocations on it` : ''}.`,
      evidence: {cause, provider: providerRow(rp), children: model.tree(rp).slice(1).map(providerRow), blocking_allocations: allocations, ...detail},
      repair: REPAIR,
    })
  }

  // Capacity: placement refuses any allocation write to a provider whose usage exceeds capacity.
  for (const rp of model.snapshot.placement.resource_providers) {
    const usage = model.usageByProvider.get(rp.id)
    if (!usage) continue
    for (const [rcId, used] of usage) {
      const inv = model.inventory(rp.id, rcId)
      const capacity = inv ? capacityOf(inv) : 0
      if (used <= capacity + 1e-6) continue
      const root = model.rootOf(rp)
      const cn = ctx.computeNodeOf(root)
      findings.push({
        check: 'providers',
        code: 'provider.over-capacity',
        severity: 'error',
        subject: providerSubject(rp, cn),
        message: `${rc.name(rcId)} on ${rp.name ?? rp.uuid}: ${used} used, capacity ${fmt(capacity)}${inv ? ` = (${inv.total} - ${inv.reserved}) x ${floatColumn(inv.allocation_ratio)}` : ' (no inventory)'}; placement refuses every allocation change on it.`,
        evidence: {
          provider: providerRow(rp),
          resource_class: rc.name(rcId),
          used,
          capacity,
          inventory: inv ? {id: inv.id, total: inv.total, reserved: inv.reserved, allocation_ratio: floatColumn(inv.allocation_ratio)} : null,
        },
        repair: REPAIR,
      })
    }
  }

  // Inventory versus what the compute node reports (libvirt/ironic resources).
  for (const cn of model.liveComputeNodes) {
    const rp = ctx.providerOf(cn)
    if (!rp || cn.hypervisor_type === 'ironic') continue
    const drift: Record<string, {inventory_total: number; compute_node: number; inventory_id: number}> = {}
    const compare = (name: string, value: number) => {
      const id = rc.id(name)
      const inv = id === undefined ? undefined : model.inventory(rp.id, id)
      if (inv && inv.total !== value) drift[name] = {inventory_total: inv.total, compute_node: value, inventory_id: inv.id}
    }
    compare('VCPU', cn.vcpus)
    compare('MEMORY_MB', cn.memory_mb)
    compare('DISK_GB', cn.local_gb)
    if (Object.keys(drift).length === 0) continue
    findings.push({
      check: 'providers',
      code: 'provider.inventory-drift',
      severity: 'warning',
      subject: {...ctx.nodeSubject(cn), provider_uuid: rp.uuid},
      message: `Inventory of ${rp.name ?? rp.uuid} disagrees with compute node ${cn.hypervisor_hostname}: ${Object.entries(drift)
        .map(([k, d]) => `${k} ${d.inventory_total} vs ${d.compute_node}`)
        .join(', ')} (nova-compute has not updated placement).`,
      evidence: {provider: providerRow(rp), compute_node: cnRow(cn), drift},
      repair: REPAIR,
    })
  }

  findings.push(...ctx.undecided('providers', 'provider.undecided', 'stale providers are', {undecided_providers: undecided}))
  return findings
}


function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2)
}
