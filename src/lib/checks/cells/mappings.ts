/**
 * nova_api mappings versus the cell databases (nova-manage cell_v2 map_instances / discover_hosts
 * territory). Hidden instance copies (cross-cell resize) and the map_instances marker row are not
 * faults. The joins the cell codes share, built once per audit.
 */
import type {InstanceSubject} from '../../domain/finding.js'
import type {Instance, InstanceMapping} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'

export interface LiveMappings {
  /** Per uuid in instanceRows' order: how many live, non-hidden rows it has (liveRowsAt reads them)... */
  liveCount: Int32Array
  /** ...its live row when it has exactly one (the rows themselves: no array per uuid)... */
  sole: ReadonlyArray<Instance | undefined>
  /** ...and the position of its mapping in nova_api.instance_mappings (-1: none). */
  mappingAt: Int32Array
  /** Per mapping position: 1 when the mapping is of a live instance. */
  ofLive: Uint8Array
}

/**
 * Each live instance uuid's mapping (the last one of the uuid, as in a uuid-keyed map), found through
 * the consumer index the leaks check already joined the instances with: mappings of allocation
 * consumers by consumer position, the others (instances holding nothing, deleted ones) by uuid.
 * Live instances mark their mapping; the mappings left unmarked belong to no live instance.
 */
export function liveMappings(ctx: AuditContext): LiveMappings {
  return ctx.once(liveMappings, () => {
    const {model} = ctx
    const mappings = model.snapshot.nova_api.instance_mappings
    const {ofConsumer: mappingOfConsumer, other: otherMappings, repeated} = model.mappingPositions
    const ofLive = new Uint8Array(mappings.length)
    const instanceRows = ctx.instanceRows
    const orderConsumer = instanceRows.orderConsumer
    const liveCount = new Int32Array(instanceRows.size)
    const sole: Array<Instance | undefined> = new Array(instanceRows.size)
    const mappingAt = new Int32Array(instanceRows.size).fill(-1)
    for (let k = 0; k < instanceRows.size; k++) {
      const all = instanceRows.order(k)
      const uuid = all[0].uuid
      const rows = ctx.liveOf(uuid, all)
      if (!rows) continue
      liveCount[k] = rows.length
      if (rows.length === 1) sole[k] = rows[0]
      const index = orderConsumer[k]
      const at = index >= 0 ? mappingOfConsumer[index] : (otherMappings.get(uuid) ?? -1)
      mappingAt[k] = at
      if (at >= 0) ofLive[at] = 1
    }
    // A uuid with several mappings: the earlier ones are of a live instance when the last one is.
    if (repeated) {
      const lastMappingOf = (uuid: string): number => {
        const index = model.consumerIndex.get(uuid)
        return index === undefined ? (otherMappings.get(uuid) as number) : mappingOfConsumer[index]
      }
      for (let i = 0; i < mappings.length; i++) if (!ofLive[i] && ofLive[lastMappingOf(mappings[i].instance_uuid)]) ofLive[i] = 1
    }
    return {liveCount, sole, mappingAt, ofLive}
  })
}

/** The live, non-hidden rows of the k-th uuid of instanceRows' order (lm.liveCount[k] of them), undefined when none. */
export function liveRowsAt(ctx: AuditContext, k: number): Instance[] | undefined {
  const all = ctx.instanceRows.order(k)
  return ctx.liveOf(all[0].uuid, all)
}

/** The mapping of the k-th uuid of instanceRows' order, if it has one. */
export function mappingOfLive(ctx: AuditContext, lm: LiveMappings, k: number): InstanceMapping | undefined {
  const at = lm.mappingAt[k]
  return at < 0 ? undefined : ctx.model.snapshot.nova_api.instance_mappings[at]
}

export const instRow = (i: Instance) => ({
  cell_uuid: i.cell_uuid,
  id: i.id,
  uuid: i.uuid,
  host: i.host,
  node: i.node,
  vm_state: i.vm_state,
  deleted: i.deleted,
  created_at: i.created_at,
})

export function instanceSubject(ctx: AuditContext, inst: Instance): InstanceSubject {
  const cn = ctx.model.nodeOfInstance(inst)
  const rp = cn && ctx.providerOf(cn)
  return {
    cell: ctx.cellName(inst.cell_uuid),
    cell_uuid: inst.cell_uuid,
    ...(inst.host ? {host: inst.host} : {}),
    ...(inst.node ? {node: inst.node} : {}),
    ...(rp ? {provider_uuid: rp.uuid} : {}),
    instance_uuid: inst.uuid,
    consumer_uuid: inst.uuid,
  }
}

/**
 * Phase 2 of a boot (conductor schedule_and_build_instances): the instance is created in its cell,
 * building, while its build request is still there and its mapping has no cell yet; the conductor
 * maps it (_map_instance_to_cell) and deletes the build request next. Not a fault while it lasts.
 */
export function inConductor(ctx: AuditContext, inst: Instance): boolean {
  return inst.vm_state === 'building' && ctx.buildRequestUuids.has(inst.uuid) && ctx.mappingOf(inst.uuid)?.cell_id === null
}
