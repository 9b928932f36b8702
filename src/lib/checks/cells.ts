/**
 * cells: nova_api mappings versus the cell databases (nova-manage cell_v2 map_instances /
 * discover_hosts territory). Hidden instance copies (cross-cell resize) and the map_instances marker
 * row are not faults.
 */
import type {Finding, FindingSubject} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {type ComputeNode, type Instance, MAP_INSTANCES_MARKER_PROJECT} from '../domain/snapshot.js'
import {AuditContext, push} from './context.js'

/** A mapping whose instance was deleted longer ago than this is kept for nothing. */
export const STALE_MAPPING_DAYS = 30

export function checkCells(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const findings: Finding[] = []
  const snap = model.snapshot
  const instRow = (i: Instance) => ({cell_uuid: i.cell_uuid, id: i.id, uuid: i.uuid, host: i.host, node: i.node, vm_state: i.vm_state, deleted: i.deleted, created_at: i.created_at})
  const capturedMs = Date.parse(snap.captured_at)
  const instanceSubject = (inst: Instance): FindingSubject => {
    const cn = ctx.liveComputeNodeAt(inst.host, inst.node)
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

  // Each instance uuid's mapping (the last one of the uuid, as in a uuid-keyed map), found through the
  // consumer index the leaks check already joined the instances with: mappings of allocation
  // consumers by consumer position, the others (instances holding nothing, deleted ones) by uuid.
  // Live instances mark their mapping; the mappings left unmarked belong to no live instance.
  const mappings = snap.nova_api.instance_mappings
  const mappingOfConsumer = new Int32Array(model.consumerIds.length).fill(-1)
  const otherMappings = new Map<string, number>()
  let repeated = false
  for (let i = 0; i < mappings.length; i++) {
    const index = model.consumerIndex.get(mappings[i].instance_uuid)
    if (index === undefined) {
      const before = otherMappings.size
      otherMappings.set(mappings[i].instance_uuid, i)
      repeated ||= otherMappings.size === before
    } else {
      repeated ||= mappingOfConsumer[index] >= 0
      mappingOfConsumer[index] = i
    }
  }
  const lastMappingOf = (uuid: string): number | undefined => {
    const index = model.consumerIndex.get(uuid)
    if (index === undefined) return otherMappings.get(uuid)
    return mappingOfConsumer[index] >= 0 ? mappingOfConsumer[index] : undefined
  }
  const ofLive = new Uint8Array(mappings.length)
  const instanceRows = ctx.instanceRows

  // Instances: mapped, mapped right, live once.
  for (let k = 0; k < instanceRows.order.length; k++) {
    const index = instanceRows.orderConsumer[k]
    const uuid = instanceRows.order[k][0].uuid
    const rows = ctx.liveOf(uuid, instanceRows.order[k])
    if (!rows) continue
    let live = rows
    const at = index >= 0 ? (mappingOfConsumer[index] >= 0 ? mappingOfConsumer[index] : undefined) : otherMappings.get(uuid)
    if (at !== undefined) ofLive[at] = 1
    const mapping = at === undefined ? undefined : mappings[at]
    if (live.length > 1) {
      // The copy the API uses (the mapped cell) first, the others in cell order: stable whatever order the rows were read in.
      const mappedUuid = mapping ? ctx.cellById(mapping.cell_id)?.uuid : undefined
      const rank = (i: Instance) => (i.cell_uuid === mappedUuid ? -1 : (model.cellOf(i.cell_uuid)?.id ?? Number.MAX_SAFE_INTEGER))
      live = [...live].sort((a, b) => rank(a) - rank(b))
      const cells = live.map((i) => ctx.cellName(i.cell_uuid))
      findings.push({
        check: 'cells',
        code: 'cell.instance-duplicate',
        severity: 'error',
        subject: {...instanceSubject(live.find((i) => i.host) ?? live[0]), cell: cells.join(',')},
        message: `Instance ${uuid} is live in ${live.length} cells (${cells.join(', ')}): the API shows it but cannot delete it; keep the live copy that is not in ERROR, point the mapping at it and soft-delete the other (the mapping may point at the wrong one: seed 004).`,
        evidence: {instances: live.map(instRow), instance_mapping: mapping ?? null, mapped_cell: mapping ? (ctx.cellById(mapping.cell_id)?.name ?? null) : null},
        repair: 'cloudctl cells map-instances',
      })
      continue
    }
    const inst = live[0]
    // No mapping is no proof of where an instance lives: while a cell is unreadable a live copy may
    // be there, so mapping this one (map-instances) could hide the real instance (the outage rule).
    if (!mapping || mapping.cell_id === null) {
      if (model.unavailableCells.length > 0) continue
    }
    if (!mapping) {
      findings.push({
        check: 'cells',
        code: 'cell.instance-unmapped',
        severity: 'error',
        subject: instanceSubject(inst),
        message: `Instance ${uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but has no instance_mapping: the API cannot find it.`,
        evidence: {instance: instRow(inst)},
        repair: 'cloudctl cells map-instances',
      })
      continue
    }
    const mappedCell = ctx.cellById(mapping.cell_id)
    if (mappedCell?.uuid === inst.cell_uuid) continue
    // Mapped to a cell we could not read: the instance may be live there too, so say nothing.
    if (mappedCell && mappedCell.status !== 'available') continue
    findings.push({
      check: 'cells',
      code: 'cell.instance-mapped-wrong-cell',
      severity: 'error',
      subject: instanceSubject(inst),
      message:
        mapping.cell_id === null
          ? `Instance ${uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but its instance_mapping has no cell.`
          : `Instance ${uuid} lives in cell ${ctx.cellName(inst.cell_uuid)} but its instance_mapping points at ${mappedCell?.name ?? `cell id ${mapping.cell_id}`}.`,
      evidence: {
        cause: mapping.cell_id === null ? 'null-cell' : 'other-cell',
        instance_mapping: mapping,
        expected_cell_id: model.cellOf(inst.cell_uuid)?.id ?? null,
        instance: instRow(inst),
      },
      repair: 'cloudctl cells map-instances',
    })
  }

  // A uuid with several mappings: the earlier ones are of a live instance when the last one is.
  if (repeated) {
    for (let i = 0; i < mappings.length; i++) if (!ofLive[i] && ofLive[lastMappingOf(mappings[i].instance_uuid) as number]) ofLive[i] = 1
  }

  // Mappings of instances deleted long ago (nova-manage db archive_deleted_rows leaves none). A cloud
  // that never archives has one per deleted instance, hundreds of thousands: one finding per cell,
  // with the count, the oldest deletion and the archive command; the uuids in evidence only.
  const stale = new Map<string, {cell: (typeof snap.cells)[number]; uuids: string[]; oldest: number | undefined; archived: number}>()
  for (let i = 0; i < mappings.length; i++) {
    if (ofLive[i]) continue
    const mapping = mappings[i]
    if (mapping.project_id === MAP_INSTANCES_MARKER_PROJECT) continue
    if (ctx.buildRequestUuids.has(mapping.instance_uuid)) continue
    const cell = ctx.cellById(mapping.cell_id)
    if (!cell || cell.status !== 'available') continue
    const rows = (ctx.rowsOf(mapping.instance_uuid) ?? []).filter((i) => i.cell_uuid === cell.uuid)
    if (rows.some((i) => i.deleted === 0)) continue // a hidden live copy: a cross-cell move in progress
    const deletedAt = rows.map((i) => (i.deleted_at ? Date.parse(`${i.deleted_at.replace(' ', 'T')}Z`) : Number.NaN)).filter((t) => !Number.isNaN(t))
    const newest = deletedAt.length > 0 ? Math.max(...deletedAt) : undefined
    const ageDays = newest === undefined ? undefined : (capturedMs - newest) / 86_400_000
    if (rows.length > 0 && (ageDays === undefined || ageDays < STALE_MAPPING_DAYS)) continue
    const entry = stale.get(cell.uuid) ?? {cell, uuids: [], oldest: undefined, archived: 0}
    entry.uuids.push(mapping.instance_uuid)
    if (rows.length === 0) entry.archived++
    if (newest !== undefined && (entry.oldest === undefined || newest < entry.oldest)) entry.oldest = newest
    stale.set(cell.uuid, entry)
  }
  for (const {cell, uuids, oldest, archived} of stale.values()) {
    const name = cell.name ?? cell.uuid
    // --before the staleness cutoff: deletions newer than that stay for nova to archive later.
    const before = new Date(capturedMs - STALE_MAPPING_DAYS * 86_400_000).toISOString().slice(0, 10)
    const oldestDate = oldest === undefined ? null : new Date(oldest).toISOString().slice(0, 10)
    const parts = [`${uuids.length} instance_mapping(s) in ${name} are of instances deleted over ${STALE_MAPPING_DAYS} days ago${oldestDate ? ` (oldest ${oldestDate})` : ''}`]
    if (archived > 0) parts.push(`${archived} of them point at instances the cell has no row for (archived)`)
    findings.push({
      check: 'cells',
      code: 'cell.instance-mapping-stale',
      severity: 'info',
      subject: {cell: name, cell_uuid: cell.uuid},
      message: `${parts.join('; ')}.`,
      evidence: {count: uuids.length, archived, oldest_deleted_at: oldestDate, instance_uuids: uuids},
      repair: `nova-manage db archive_deleted_rows --before ${before} --purge`,
    })
  }

  // build_requests whose instance already exists in a cell.
  for (const br of snap.nova_api.build_requests) {
    if (!br.instance_uuid) continue
    const rows = ctx.rowsOf(br.instance_uuid) ?? []
    if (rows.length === 0) continue
    findings.push({
      check: 'cells',
      code: 'cell.build-request-stale',
      severity: 'warning',
      subject: {cell: ctx.cellName(rows[0].cell_uuid), cell_uuid: rows[0].cell_uuid, instance_uuid: br.instance_uuid},
      message: `build_request ${br.id} remains for instance ${br.instance_uuid}, which already exists in cell ${ctx.cellName(rows[0].cell_uuid)}: the API may list it twice.`,
      evidence: {build_request: br, instances: rows.map(instRow)},
      repair: 'cloudctl cells map-instances',
    })
  }

  // Hosts: every live nova-compute service mapped, to its own cell; every mapping backed by a service.
  const computeServiceCells = new Map<string, Set<string>>()
  // Live compute nodes per service host and cell, built once (a scan per service is quadratic at 10k hosts).
  const nodesByHostCell = new Map<string, ComputeNode[]>()
  for (const cn of model.liveComputeNodes) if (cn.host !== null) push(nodesByHostCell, `${cn.cell_uuid}/${cn.host}`, cn)
  for (const svc of snap.nova.services) {
    if (svc.deleted !== 0 || svc.binary !== 'nova-compute' || svc.host === null) continue
    let set = computeServiceCells.get(svc.host)
    if (!set) computeServiceCells.set(svc.host, (set = new Set()))
    set.add(svc.cell_uuid)
    const mappings = ctx.hostMappingsByHost.get(svc.host) ?? []
    const nodes = nodesByHostCell.get(`${svc.cell_uuid}/${svc.host}`) ?? []
    const rp = nodes.length === 1 ? ctx.providerOf(nodes[0]) : undefined
    const subject: FindingSubject = {
      cell: ctx.cellName(svc.cell_uuid),
      cell_uuid: svc.cell_uuid,
      host: svc.host,
      ...(nodes.length === 1 && nodes[0].hypervisor_hostname ? {node: nodes[0].hypervisor_hostname} : {}),
      ...(rp ? {provider_uuid: rp.uuid} : {}),
    }
    if (mappings.length === 0) {
      const mappedFlag = nodes.some((cn) => cn.mapped === 1)
      findings.push({
        check: 'cells',
        code: 'cell.host-unmapped',
        severity: 'error',
        subject,
        message: `Compute host ${svc.host} in cell ${ctx.cellName(svc.cell_uuid)} has no host_mapping: nothing can be scheduled to it${mappedFlag ? ', and discover_hosts skips it because compute_nodes.mapped = 1' : ''}.`,
        evidence: {service: {id: svc.id, uuid: svc.uuid, host: svc.host, cell_uuid: svc.cell_uuid}, compute_nodes: nodes.map((cn) => ({id: cn.id, uuid: cn.uuid, mapped: cn.mapped}))},
        repair: 'cloudctl cells discover-hosts',
      })
      continue
    }
    const mappedCell = ctx.cellById(mappings[0].cell_id)
    if (mappedCell?.uuid !== svc.cell_uuid && (!mappedCell || mappedCell.status === 'available')) {
      findings.push({
        check: 'cells',
        code: 'cell.host-mapped-wrong-cell',
        severity: 'error',
        subject,
        message: `Compute host ${svc.host} runs in cell ${ctx.cellName(svc.cell_uuid)} but its host_mapping points at ${mappedCell?.name ?? `cell id ${mappings[0].cell_id}`}.`,
        evidence: {host_mapping: mappings[0], expected_cell_id: model.cellOf(svc.cell_uuid)?.id ?? null, service: {id: svc.id, host: svc.host, cell_uuid: svc.cell_uuid}},
        repair: 'cloudctl cells discover-hosts',
      })
    }
  }
  for (const hm of snap.nova_api.host_mappings) {
    if (computeServiceCells.has(hm.host)) continue
    const cell = ctx.cellById(hm.cell_id)
    if (cell && cell.status !== 'available') continue
    findings.push({
      check: 'cells',
      code: 'cell.host-mapping-stale',
      severity: 'warning',
      subject: {cell: cell?.name ?? `cell id ${hm.cell_id}`, ...(cell ? {cell_uuid: cell.uuid} : {}), host: hm.host},
      message: `host_mapping ${hm.id} maps ${hm.host} to ${cell?.name ?? `cell id ${hm.cell_id}`}, where no live nova-compute service runs on that host.`,
      evidence: {host_mapping: hm},
      repair: 'cloudctl cells discover-hosts',
    })
  }

  findings.push(...ctx.undecided('cells', 'cell.undecided', 'instance and host mappings of this cell are'))
  return findings
}
