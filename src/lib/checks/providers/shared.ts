/**
 * Placement resource providers versus nova compute nodes. nova-compute finds its provider by the
 * compute node's uuid and creates one named after hypervisor_hostname, so a provider left behind with
 * that name makes the creation fail (ResourceProviderCreationFailed, seed 004). What the provider
 * codes share: evidence rows, subjects, and which providers the first codes already explained.
 */
import type {FindingSubject} from '../../domain/finding.js'
import type {ComputeNode, ResourceProvider} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'

export const REPAIR = 'cloudctl repair providers'

export const cnRow = (cn: ComputeNode) => ({
  id: cn.id,
  uuid: cn.uuid,
  cell_uuid: cn.cell_uuid,
  host: cn.host,
  hypervisor_hostname: cn.hypervisor_hostname,
  service_id: cn.service_id,
  deleted: cn.deleted,
  deleted_at: cn.deleted_at,
})

/** The allocations on a provider and its children, as a repair removing the tree must guard them. */
export function treeAllocations(ctx: AuditContext, rp: ResourceProvider) {
  const {model} = ctx
  return model.tree(rp).flatMap((p) =>
    (model.allocationsByProvider.get(p.id) ?? []).map((a) => ({
      id: a.id,
      resource_provider_id: a.resource_provider_id,
      consumer_uuid: a.consumer_id,
      resource_class: model.rc.name(a.resource_class_id),
      used: a.used,
    })),
  )
}

/** Without a live node, the cell and host come from a deleted node row or the host mapping. */
export function providerSubject(ctx: AuditContext, rp: ResourceProvider, cn?: ComputeNode): FindingSubject {
  const dead = cn ? undefined : ctx.model.computeNodesByUuid.get(rp.uuid)?.[0]
  const hm = cn || dead || rp.name === null ? undefined : (ctx.hostMappingsByHost.get(rp.name) ?? [])[0]
  const hmCell = hm ? ctx.cellById(hm.cell_id) : undefined
  const subject: FindingSubject = cn
    ? ctx.nodeSubject(cn)
    : dead
      ? ctx.nodeSubject(dead)
      : hmCell
        ? {cell: hmCell.name ?? hmCell.uuid, cell_uuid: hmCell.uuid, host: rp.name as string}
        : {}
  if (!cn && !dead && rp.name !== null) subject.node = rp.name
  subject.provider_uuid = rp.uuid
  return subject
}

/**
 * Absence of a compute node is only a fact when every cell was read: the host mappings of its host
 * may be as wrong as instance mappings (issue 25's double fault: a host of the dark cell mapped to a
 * readable one), so they do not tell which cell would hold it.
 */
export function absenceDecidable(ctx: AuditContext): boolean {
  return ctx.model.allCellsAvailable
}

/** Root providers that are not sharing providers: the ones that stand for a compute node. */
export function nodeRoots(ctx: AuditContext): ResourceProvider[] {
  return ctx.once(nodeRoots, () => ctx.model.snapshot.placement.resource_providers.filter((rp) => rp.parent_provider_id === null && !ctx.isSharing(rp)))
}

/** Root providers carrying a name: the candidates nova-compute collides with when it creates its own. */
export function namedRoots(ctx: AuditContext, name: string | null): ResourceProvider[] {
  return (name === null ? [] : (ctx.model.providersByName.get(name) ?? [])).filter((rp) => rp.parent_provider_id === null && !ctx.isSharing(rp))
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2)
}
