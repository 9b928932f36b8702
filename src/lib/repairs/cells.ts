/**
 * cells map-instances and discover-hosts: the nova-manage cell_v2 counterparts, as guarded plans.
 *
 * map-instances creates the instance_mappings `nova-manage cell_v2 map_instances` would (every
 * instance row of the cell, deleted ones too, oldest first, project/user from the instance,
 * queued_for_delete false), fixes NULL and wrong cell ids of live instances, and resolves an instance
 * live in two cells: the copy that is live and not in ERROR wins, the other is soft-deleted as nova
 * does (deleted = id, deleted_at = now, updated_at kept) with the rows nova's instance_destroy takes
 * with it (extra, faults, metadata, info cache, ...; tags and console tokens deleted).
 *
 * discover-hosts creates host_mappings for compute hosts without one and sets compute_nodes.mapped,
 * like `discover_hosts`; unlike nova it also maps hosts whose nodes already say mapped = 1 (nova
 * skips those forever: "Found 0 unmapped computes"), and with `prune` removes host mappings of hosts
 * that no longer run nova-compute anywhere.
 */
import {runChecks} from '../checks/index.js'
import {type Finding, type FindingOf, ofCodes} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {type CellInfo, type HostMapping, type Instance, MAP_INSTANCES_MARKER_PROJECT} from '../domain/snapshot.js'
import {type RepairScope, allCellDbs, cellDbOf, subjectOf} from './common.js'
import {type DbKey, NOW, PlanBuilder, type RepairPlan, col} from './plan.js'

/**
 * What nova's instance_destroy (Zed) soft-deletes with an instance, besides instance_extra, and the
 * column naming the instance. instance_actions and their events stay, as nova keeps them for the
 * record of what happened to a deleted instance.
 */
const DESTROYED_WITH_INSTANCE: ReadonlyArray<readonly [string, string]> = [
  ['security_group_instance_association', 'instance_uuid'],
  ['instance_info_caches', 'instance_uuid'],
  ['instance_metadata', 'instance_uuid'],
  ['instance_faults', 'instance_uuid'],
  ['instance_system_metadata', 'instance_uuid'],
  ['block_device_mapping', 'instance_uuid'],
  ['migrations', 'instance_uuid'],
  ['virtual_interfaces', 'instance_uuid'],
  ['instance_id_mappings', 'uuid'],
]
/** Tables without a deleted column: instance_destroy deletes their rows outright. */
const REMOVED_WITH_INSTANCE: ReadonlyArray<readonly [string, string]> = [
  ['tags', 'resource_id'],
  ['console_auth_tokens', 'instance_uuid'],
]

/** --cell and --host of map-instances / discover-hosts: the audits' filter (RepairScope), default every cell and host. */
export interface MapInstancesOptions extends RepairScope {
  /** At most this many instances handled per run; the rest is left for the next (exit 6). */
  maxCount?: number
  now?: string
}

export function findCell(model: CloudModel, nameOrUuid: string): CellInfo | undefined {
  return model.snapshot.cells.find((c) => c.uuid === nameOrUuid) ?? model.snapshot.cells.find((c) => c.name === nameOrUuid)
}

const byAge = (a: Instance, b: Instance) => (a.created_at ?? '').localeCompare(b.created_at ?? '') || a.id - b.id

/** The copy that keeps living: live and not errored; undefined when that does not single one out. */
export function duplicateWinner(copies: Instance[]): Instance | undefined {
  const healthy = copies.filter((i) => i.deleted === 0 && i.vm_state !== 'error')
  return healthy.length === 1 ? healthy[0] : undefined
}

/** --max-count for map-instances: instances handled, and whether one was left for the next run. */
class InstanceBatch {
  handled = 0
  partial = false
  readonly done = new Set<string>()
  constructor(private readonly max: number) {}

  take(): boolean {
    if (this.handled >= this.max) {
      this.partial = true
      return false
    }
    this.handled++
    return true
  }
}

export function planMapInstances(model: CloudModel, opts: MapInstancesOptions = {}): RepairPlan {
  const b = new PlanBuilder('map-instances', opts.now)
  const cells = opts.cell ? [findCell(model, opts.cell)].filter((c): c is CellInfo => c !== undefined) : model.snapshot.cells
  const inScope = new Set(cells.map((c) => c.uuid))
  const mappings = new Map(model.snapshot.nova_api.instance_mappings.map((m) => [m.instance_uuid, m]))
  // --host: the audits' filter on the findings, and the same host-or-node match on the instance rows
  // an unmapped (possibly deleted) instance has no finding for.
  const findings = runChecks(model, {checks: ['cells'], host: opts.host}).findings
  const batch = new InstanceBatch(opts.maxCount ?? Number.POSITIVE_INFINITY)

  for (const c of cells) if (c.status !== 'available') b.skip('cell.undecided', `cell=${c.name ?? c.uuid}`, `cell could not be read (${c.error ?? 'unavailable'}): its instances are left for a later run`)
  // The outage rule: which copies of an instance exist is only known when every cell was read.
  const dark = model.unavailableCells
  const darkReason = `cell ${dark.map((d) => d.name ?? d.uuid).join(', ')} could not be read and may hold another live copy: re-run once every cell is readable`

  // Instances live in two cells first: they decide which cell the mapping points at.
  for (const f of ofCodes(findings, 'cell.instance-duplicate')) {
    const uuid = f.subject.instance_uuid
    const copies = model.liveInstances(uuid)
    if (!copies.some((i) => inScope.has(i.cell_uuid))) continue
    batch.done.add(uuid)
    if (dark.length > 0) {
      b.skip(f.code, subjectOf(f), darkReason)
      continue
    }
    const winner = duplicateWinner(copies)
    if (!winner) {
      b.skip(f.code, subjectOf(f), `copies in ${copies.map((i) => `${model.cellLabel(i.cell_uuid)} (${i.vm_state})`).join(', ')}: no single live, non-error copy; decide by hand which copy to keep`)
      continue
    }
    if (!batch.take()) break
    planDuplicate(model, b, f, uuid, winner, copies, mappings.get(uuid)?.cell_id ?? null, mappings.has(uuid))
  }

  // Wrong or NULL cell ids of live instances.
  for (const f of ofCodes(findings, 'cell.instance-mapped-wrong-cell')) {
    const uuid = f.subject.instance_uuid
    if (batch.done.has(uuid) || !inScope.has(f.subject.cell_uuid)) continue
    if (dark.length > 0) {
      b.skip(f.code, subjectOf(f), darkReason)
      continue
    }
    if (!batch.take()) break
    batch.done.add(uuid)
    const m = mappings.get(uuid)
    const cell = model.cellOf(f.subject.cell_uuid)
    if (!m || !cell) continue
    b.finding(f.code, subjectOf(f), f.message)
    b.about(`instance ${uuid}, which lives in cell ${cell.name ?? cell.uuid}`)
    b.add({db: 'nova_api', table: 'instance_mappings', op: 'update', key: {id: m.id}, expect: {instance_uuid: uuid, cell_id: m.cell_id}, set: {cell_id: cell.id, updated_at: NOW}, why: `${f.code}: ${uuid} lives in ${cell.name ?? cell.uuid} (cell_id ${m.cell_id ?? 'NULL'} -> ${cell.id})`, code: f.code}, `cell_id ${m.cell_id ?? 'NULL'} -> ${cell.id}`)
  }

  const onHost = (i: Instance) => opts.host === undefined || i.host === opts.host || i.node === opts.host
  for (const c of cells) if (c.status === 'available') mapCellInstances(model, b, c, mappings, batch, onHost)

  if (model.snapshot.nova_api.instance_mappings.some((m) => m.project_id === MAP_INSTANCES_MARKER_PROJECT))
    b.note("An INSTANCE_MIGRATION_MARKER row of nova-manage map_instances exists; cloudctl leaves it alone (nova-manage resumes from it; --reset there starts over).")
  const plan = b.build(['nova_api'])
  if (batch.partial) {
    plan.partial = true
    plan.notes.push(`--max-count ${opts.maxCount} reached: run again until it exits 0 (nova-manage exit 1 = cloudctl exit 6).`)
  }
  return plan
}

/** Every instance row of a cell without a mapping, oldest first, as nova-manage maps them. */
function mapCellInstances(model: CloudModel, b: PlanBuilder, c: CellInfo, mappings: Map<string, unknown>, batch: InstanceBatch, onHost: (i: Instance) => boolean): void {
  const dark = model.unavailableCells
  const rows = model.snapshot.nova.instances.filter((i) => i.cell_uuid === c.uuid && onHost(i)).sort(byAge)
  if (dark.length > 0) {
    // The outage rule: without a mapping nothing proves the instance is not live in the unreadable
    // cell too, and a mapping to this copy would hide that one from the API.
    const unmapped = rows.filter((i) => !mappings.has(i.uuid) && !batch.done.has(i.uuid)).length
    if (unmapped > 0) b.skip('cell.instance-unmapped', `cell=${model.cellLabel(c.uuid)}`, `${unmapped} unmapped instance(s) left alone: cell ${dark.map((d) => d.name ?? d.uuid).join(', ')} could not be read and may hold a live copy; re-run once every cell is readable`)
    return
  }
  for (const inst of rows) {
    if (batch.partial) break
    if (mappings.has(inst.uuid) || batch.done.has(inst.uuid)) continue
    if (model.liveInstances(inst.uuid).length > 1) continue // a duplicate handled (or skipped) above
    if (inst.deleted !== 0 && model.liveInstances(inst.uuid).length > 0) continue // a deleted copy: the live one gets the mapping
    if (inst.project_id === null) {
      b.skip('cell.instance-unmapped', `cell=${model.cellLabel(c.uuid)} instance=${inst.uuid}`, 'the instance has no project_id (instance_mappings.project_id is NOT NULL)')
      continue
    }
    if (!batch.take()) break
    batch.done.add(inst.uuid)
    b.about(`instances of cell ${model.cellLabel(c.uuid)} without an instance mapping (deleted ones too, as nova-manage maps them)`)
    const code = inst.deleted === 0 ? 'cell.instance-unmapped' : 'cell.instance-unmapped (deleted)'
    if (inst.deleted === 0) b.finding('cell.instance-unmapped', `cell=${model.cellLabel(c.uuid)} instance=${inst.uuid}`, `Instance ${inst.uuid} lives in cell ${model.cellLabel(c.uuid)} but has no instance_mapping.`)
    b.add({
      db: 'nova_api',
      table: 'instance_mappings',
      op: 'insert',
      unique: {instance_uuid: inst.uuid},
      values: {created_at: NOW, updated_at: null, instance_uuid: inst.uuid, cell_id: c.id, project_id: inst.project_id, user_id: inst.user_id, queued_for_delete: 0},
      why: `${code}: map ${inst.uuid} to ${c.name ?? c.uuid}${inst.deleted !== 0 ? ' (deleted instance: nova-manage maps those too)' : ''}`,
      code: 'cell.instance-unmapped',
    })
  }
}

function planDuplicate(model: CloudModel, b: PlanBuilder, f: Finding, uuid: string, winner: Instance, copies: Instance[], mappedCellId: number | null, hasMapping: boolean): void {
  const winCell = model.cellOf(winner.cell_uuid) as CellInfo
  b.finding(f.code, subjectOf(f), f.message)
  b.about(`instance ${uuid}, live in cells ${copies.map((i) => model.cellLabel(i.cell_uuid)).join(' and ')}: the copy in ${winCell.name ?? winCell.uuid} stays`)
  b.note('Duplicates: nova_api commits first (the mapping points at the surviving copy), then the cell of the other copy; if the second commit fails, `cloudctl audit cells` still reports the duplicate and a re-run finishes it.')
  const m = model.snapshot.nova_api.instance_mappings.find((x) => x.instance_uuid === uuid)
  if (!hasMapping || !m) {
    b.add({db: 'nova_api', table: 'instance_mappings', op: 'insert', unique: {instance_uuid: uuid}, values: {created_at: NOW, updated_at: null, instance_uuid: uuid, cell_id: winCell.id, project_id: winner.project_id ?? '', user_id: winner.user_id, queued_for_delete: 0}, why: `${f.code}: map ${uuid} to ${winCell.name ?? winCell.uuid}, where it is live and not errored`, code: f.code}, `to cell ${winCell.name ?? winCell.uuid}`)
  } else if (mappedCellId !== winCell.id) {
    b.add({db: 'nova_api', table: 'instance_mappings', op: 'update', key: {id: m.id}, expect: {instance_uuid: uuid, cell_id: mappedCellId}, set: {cell_id: winCell.id, updated_at: NOW}, why: `${f.code}: point ${uuid} at ${winCell.name ?? winCell.uuid}, where it is live and not errored`, code: f.code}, `to cell ${winCell.name ?? winCell.uuid}`)
  }
  for (const loser of copies) {
    if (loser === winner) continue
    const db = cellDbOf(model, b, loser.cell_uuid)
    b.add({
      db,
      table: 'instances',
      op: 'update',
      key: {id: loser.id},
      expect: {uuid, deleted: 0, vm_state: loser.vm_state, host: loser.host},
      set: {deleted: col('id'), deleted_at: NOW},
      why: `${f.code}: soft-delete the ${loser.vm_state ?? ''} copy in ${model.cellLabel(loser.cell_uuid)} as nova does (deleted = id, deleted_at; updated_at kept)`,
      code: f.code,
    }, `the ${loser.vm_state ?? ''} copy in cell ${model.cellLabel(loser.cell_uuid)}`)
    if (loser.extra !== null)
      b.add({db, table: 'instance_extra', op: 'update', key: {instance_uuid: uuid, deleted: 0}, expect: {}, set: {deleted: col('id'), deleted_at: NOW}, why: `${f.code}: soft-delete its instance_extra row with it, as nova's instance_destroy does`, code: f.code})
    // The rest of what instance_destroy takes with the instance, in that copy's cell only (the other
    // copy shares the uuid). The snapshot does not read these tables: every such row is locked and
    // recorded in the undo file when the repair runs, under the instance step's guard above.
    for (const [table, column] of DESTROYED_WITH_INSTANCE)
      b.add({db, table, op: 'update-all', where: {[column]: uuid, deleted: 0}, set: {deleted: col('id'), deleted_at: NOW}, why: `${f.code}: soft-delete its ${table} rows with it, as nova's instance_destroy does`, code: f.code})
    for (const [table, column] of REMOVED_WITH_INSTANCE)
      b.add({db, table, op: 'delete-all', where: {[column]: uuid}, why: `${f.code}: delete its ${table} rows with it, as nova's instance_destroy does (the table has no deleted column)`, code: f.code})
  }
  // The surviving copy must still be live and not errored when we commit.
  b.add({db: cellDbOf(model, b, winner.cell_uuid), table: 'instances', op: 'check', where: {id: winner.id}, rows: [{uuid, deleted: 0, vm_state: winner.vm_state}], why: `${f.code}: the copy in ${winCell.name ?? winCell.uuid} is still live and ${winner.vm_state}`})
}

export interface DiscoverHostsOptions extends RepairScope {
  byService?: boolean
  prune?: boolean
  /** At most this many hosts or host-mapping findings per plan; the rest waits for a re-run (exit 6). */
  maxCount?: number
  now?: string
}

export function planDiscoverHosts(model: CloudModel, opts: DiscoverHostsOptions = {}): RepairPlan {
  const b = new PlanBuilder('discover-hosts', opts.now, opts.maxCount)
  const s = model.snapshot
  const cells = (opts.cell ? [findCell(model, opts.cell)].filter((c): c is CellInfo => c !== undefined) : s.cells).filter((c) => !c.is_cell0)
  const mapped = new Map(s.nova_api.host_mappings.map((h) => [h.host, h]))
  const planned = new Set<string>()
  // --host: the audits' filter (a service host, or the hypervisor_hostname of one of its nodes).
  const findings = runChecks(model, {checks: ['cells'], host: opts.host}).findings
  const named = new Set(model.liveComputeNodes.filter((cn) => opts.host !== undefined && cn.hypervisor_hostname === opts.host).map((cn) => `${cn.cell_uuid}/${cn.host}`))
  const onHost = (c: CellInfo, host: string) => opts.host === undefined || host === opts.host || named.has(`${c.uuid}/${host}`)

  for (const c of cells) {
    if (c.status !== 'available') {
      b.skip('cell.undecided', `cell=${c.name ?? c.uuid}`, `cell could not be read (${c.error ?? 'unavailable'}): its hosts are left for a later run`)
      continue
    }
    const db = cellDbOf(model, b, c.uuid)
    const hosts = new Set<string>()
    if (opts.byService) {
      for (const svc of s.nova.services) if (svc.cell_uuid === c.uuid && svc.deleted === 0 && svc.binary === 'nova-compute' && svc.host) hosts.add(svc.host)
    } else {
      for (const cn of model.liveComputeNodes) if (cn.cell_uuid === c.uuid && cn.host) hosts.add(cn.host)
    }
    for (const host of [...hosts].sort()) if (onHost(c, host)) b.unit(() => discoverHost(model, b, {cell: c, db, host, hm: mapped.get(host), planned, byService: opts.byService}))
  }

  for (const f of ofCodes(findings, 'cell.host-mapped-wrong-cell')) {
    const ev = f.evidence
    const expected = ev.expected_cell_id
    if (expected === null || (opts.cell && !cells.some((c) => c.uuid === f.subject.cell_uuid))) continue
    b.unit(() => {
      b.finding(f.code, subjectOf(f), f.message)
      b.about(`compute host ${ev.host_mapping.host}, which runs in cell ${f.subject.cell}`)
      b.add({db: 'nova_api', table: 'host_mappings', op: 'update', key: {id: ev.host_mapping.id}, expect: {host: ev.host_mapping.host, cell_id: ev.host_mapping.cell_id}, set: {cell_id: expected, updated_at: NOW}, why: `${f.code}: ${ev.host_mapping.host} runs in ${f.subject.cell}`, code: f.code}, `cell_id ${ev.host_mapping.cell_id} -> ${expected}`)
    })
  }

  for (const f of ofCodes(findings, 'cell.host-mapping-stale')) b.unit(() => pruneHostMapping(model, b, f, opts))
  if (b.findings.length > 0) b.note('nova_api commits first, then each cell (compute_nodes.mapped); if a cell commit fails, a re-run sets the flag left unset.')
  return b.build(['nova_api'])
}

/** One compute host of a cell: its host mapping when it has none, and compute_nodes.mapped of its nodes. */
function discoverHost(model: CloudModel, b: PlanBuilder, h: {cell: CellInfo; db: DbKey; host: string; hm: HostMapping | undefined; planned: Set<string>; byService?: boolean}): void {
  const {cell: c, db, host, hm} = h
  const s = model.snapshot
  const nodes = model.liveComputeNodes.filter((cn) => cn.cell_uuid === c.uuid && cn.host === host)
  const hostSubject = `compute host ${host} (cell ${c.name ?? c.uuid})`
  if (!hm && !h.planned.has(host)) {
    const elsewhere = s.nova.services.filter((x) => x.host === host && x.binary === 'nova-compute' && x.deleted === 0 && x.cell_uuid !== c.uuid)
    if (elsewhere.length > 0) {
      b.skip('cell.host-unmapped', `host=${host}`, `nova-compute runs on ${host} in several cells (${[c.uuid, ...elsewhere.map((x) => x.cell_uuid)].map((u) => model.cellLabel(u)).join(', ')}): decide by hand`)
      return
    }
    h.planned.add(host)
    b.about(hostSubject)
    b.finding('cell.host-unmapped', `cell=${c.name ?? c.uuid} host=${host}`, `Compute host ${host} has no host_mapping.`)
    b.add({db: 'nova_api', table: 'host_mappings', op: 'insert', unique: {host}, values: {created_at: NOW, updated_at: null, cell_id: c.id, host}, why: `cell.host-unmapped: map ${host} to ${c.name ?? c.uuid}`, code: 'cell.host-unmapped'}, `to cell ${c.name ?? c.uuid}`)
  }
  if (h.byService) return // nova's --by_service path does not touch compute_nodes.mapped
  if (hm && hm.cell_id !== c.id) return // mapped elsewhere: reported as host-mapped-wrong-cell
  for (const cn of nodes) {
    if (cn.mapped === 1) continue
    b.about(hostSubject)
    b.add({db, table: 'compute_nodes', op: 'update', key: {id: cn.id}, expect: {host, deleted: 0, mapped: cn.mapped}, set: {mapped: 1, updated_at: NOW}, why: `compute node ${cn.hypervisor_hostname ?? cn.id} of ${host} is mapped (as discover_hosts records it)`}, `${cn.hypervisor_hostname ?? cn.id}: mapped = 1`)
  }
}

/** cell.host-mapping-stale with --prune: the mapping goes once no cell runs nova-compute on the host. */
function pruneHostMapping(model: CloudModel, b: PlanBuilder, f: FindingOf<'cell.host-mapping-stale'>, opts: DiscoverHostsOptions): void {
  const hm = f.evidence.host_mapping
  if (!opts.prune) return void b.skip(f.code, subjectOf(f), 'pass --prune to remove host mappings of hosts without nova-compute')
  if (!model.allCellsAvailable) return void b.skip(f.code, subjectOf(f), 'a cell could not be read: the host may run there')
  b.finding(f.code, subjectOf(f), f.message)
  b.about(`host ${hm.host}, which runs nova-compute in no cell`)
  for (const {db} of allCellDbs(model, b))
    if (db !== 'cell:00000000-0000-0000-0000-000000000000')
      b.add({db, table: 'services', op: 'check', where: {host: hm.host, binary: 'nova-compute', deleted: 0}, rows: [], why: `${f.code}: still no nova-compute on ${hm.host}`})
  b.add({db: 'nova_api', table: 'host_mappings', op: 'delete', key: {id: hm.id}, expect: {host: hm.host, cell_id: hm.cell_id}, why: `${f.code}: no nova-compute runs on ${hm.host} in any cell`, code: f.code})
}
