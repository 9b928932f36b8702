/** Evidence rows, subjects and wording the leak codes share. */
import type {ConsumerSubject, FindingSubject} from '../../domain/finding.js'
import type {Allocation, Consumer, Instance, Migration, ResourceProvider} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import type {ResourceAmounts} from '../flavor-resources.js'

export const REPAIR = 'cloudctl repair leaks'
/** The classes whose amounts are compared with the flavor. */
export const CHECKED_CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']

/** One consumer's allocations on one root provider (or on one sharing provider). */
export interface Group {
  /** The root provider, or the sharing provider itself. */
  rp: ResourceProvider
  sharing: boolean
  allocations: Allocation[]
}

export const allocRows = (ctx: AuditContext, allocs: Allocation[]) =>
  allocs.map((a) => ({id: a.id, resource_provider_id: a.resource_provider_id, resource_class: ctx.model.rc.name(a.resource_class_id), used: a.used}))

export function consumerRow(ctx: AuditContext, c: Consumer | undefined) {
  if (!c) return null
  return {
    id: c.id,
    uuid: c.uuid,
    generation: c.generation,
    project: ctx.model.projectsById.get(c.project_id) ?? null,
    user: ctx.model.usersById.get(c.user_id) ?? null,
  }
}

export const instanceRow = (i: Instance) => ({
  cell_uuid: i.cell_uuid,
  id: i.id,
  uuid: i.uuid,
  host: i.host,
  node: i.node,
  vm_state: i.vm_state,
  task_state: i.task_state,
  deleted: i.deleted,
  deleted_at: i.deleted_at,
})

export const migrationRow = (m: Migration) => ({
  cell_uuid: m.cell_uuid,
  id: m.id,
  uuid: m.uuid,
  instance_uuid: m.instance_uuid,
  migration_type: m.migration_type,
  status: m.status,
  source_compute: m.source_compute,
  source_node: m.source_node,
  dest_compute: m.dest_compute,
  dest_node: m.dest_node,
  updated_at: m.updated_at,
  deleted: m.deleted,
})

/** The node (or the provider's name), the cell when known, the provider and the consumer. */
export function groupSubject(ctx: AuditContext, consumer: string, g: Group, cellUuid?: string): ConsumerSubject {
  const cn = g.sharing ? undefined : ctx.computeNodeOf(g.rp)
  const subject: FindingSubject = cn ? ctx.nodeSubject(cn) : {}
  if (!cn && g.rp.name !== null && !g.sharing) {
    // Every finding names its host (scripts filter on subject.host): without a live node, the host of
    // the deleted node row the provider stood for, else the provider's name where a host mapping has it.
    const host = ctx.model.computeNodesByUuid.get(g.rp.uuid)?.[0]?.host ?? (ctx.hostMappingsByHost.has(g.rp.name) ? g.rp.name : undefined)
    if (host) subject.host = host
    subject.node = g.rp.name
  }
  if (cellUuid !== undefined) {
    subject.cell = ctx.cellName(cellUuid)
    subject.cell_uuid = cellUuid
  }
  subject.provider_uuid = g.rp.uuid
  const out: ConsumerSubject = Object.assign(subject, {consumer_uuid: consumer})
  if (ctx.rowsOf(consumer)) out.instance_uuid = consumer
  return out
}

/**
 * "VCPU=2, MEMORY_MB=4096" of allocation rows. With the group's provider `rp`, rows on its children
 * (a nested tree: vGPU, PCI, neutron's bandwidth providers) are named by child after the root's:
 * "VCPU=1, MEMORY_MB=512 + child host1_pci_0000_81_00_0: VGPU=1", so a leak that spans the tree reads
 * as one and says where each part is.
 */
export function summarize(ctx: AuditContext, allocs: Allocation[], rp?: ResourceProvider): string {
  const amounts = (rows: Allocation[]) => rows.map((a) => `${ctx.model.rc.name(a.resource_class_id)}=${a.used}`).join(', ')
  if (!rp || allocs.every((a) => a.resource_provider_id === rp.id)) return amounts(allocs)
  const parts = [amounts(allocs.filter((a) => a.resource_provider_id === rp.id))].filter((x) => x !== '')
  const children = [...new Set(allocs.map((a) => a.resource_provider_id).filter((id) => id !== rp.id))]
  for (const id of children) {
    const child = ctx.model.providersById.get(id)
    parts.push(`child ${child ? providerLabel(child) : id}: ${amounts(allocs.filter((a) => a.resource_provider_id === id))}`)
  }
  return parts.join(' + ')
}

export function fmtAmounts(r: ResourceAmounts): string {
  const keys = Object.keys(r).sort()
  return keys.length === 0 ? 'nothing' : keys.map((k) => `${k}=${r[k]}`).join(', ')
}

export const providerLabel = (rp: ResourceProvider): string => rp.name ?? rp.uuid
