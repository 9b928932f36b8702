/**
 * cells map-instances: the nova-manage cell_v2 counterpart, as a guarded plan (discover-hosts is in
 * discover-hosts.ts).
 *
 * map-instances creates the instance_mappings `nova-manage cell_v2 map_instances` would (every
 * instance row of the cell, deleted ones too, oldest first, project/user from the instance,
 * queued_for_delete false), fixes NULL and wrong cell ids of live instances, and resolves an instance
 * live in two cells: the copy that is live and not in ERROR wins, the other is soft-deleted as nova
 * does (deleted = id, deleted_at = now, updated_at kept) with the rows nova's instance_destroy takes
 * with it (extra, faults, metadata, info cache, ...; tags and console tokens deleted).

 */
import {runChecks} from '../checks/index.js'
import {type Finding, ofCodes} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {type CellInfo, type Instance, type InstanceMapping, MAP_INSTANCES_MARKER_PROJECT} from '../domain/snapshot.js'
import {type RepairScope, cellDbOf, subjectOf} from './common.js'
import {NOW, PlanBuilder, type RepairPlan, col} from './plan.js'

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

/** --cell and --host of map-instances: the audits' filter (RepairScope), default every cell and host. */
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

  for (const c of cells)
    if (c.status !== 'available')
      b.skip('cell.undecided', `cell=${c.name ?? c.uuid}`, `cell could not be read (${c.error ?? 'unavailable'}): its instances are left for a later run`)
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
      b.skip(
        f.code,
        subjectOf(f),
        `copies in ${copies.map((i) => `${model.cellLabel(i.cell_uuid)} (${i.vm_state})`).join(', ')}: no single live, non-error copy; decide by hand which copy to keep`,
      )
      continue
    }
    if (!batch.take()) break
    planDuplicate(model, b, f, uuid, winner, copies, mappings.get(uuid)?.cell_id ?? null, mappings.has(uuid))
  }

  repointWrongCells(model, b, findings, {inScope, mappings, batch, darkReason})

  const onHost = (i: Instance) => opts.host === undefined || i.host === opts.host || i.node === opts.host
  for (const c of cells) if (c.status === 'available') mapCellInstances(model, b, c, mappings, batch, onHost)

  if (model.snapshot.nova_api.instance_mappings.some((m) => m.project_id === MAP_INSTANCES_MARKER_PROJECT))
    b.note(
      'An INSTANCE_MIGRATION_MARKER row of nova-manage map_instances exists; cloudctl leaves it alone (nova-manage resumes from it; --reset there starts over).',
    )
  const plan = b.build(['nova_api'])
  if (batch.partial) {
    plan.partial = true
    plan.notes.push(`--max-count ${opts.maxCount} reached: run again until it exits 0 (nova-manage exit 1 = cloudctl exit 6).`)
  }
  return plan
}

/** Wrong or NULL cell ids of live instances. */
function repointWrongCells(
  model: CloudModel,
  b: PlanBuilder,
  findings: Finding[],
  w: {inScope: Set<string>; mappings: Map<string, InstanceMapping>; batch: InstanceBatch; darkReason: string},
): void {
  const {inScope, mappings, batch, darkReason} = w
  for (const f of ofCodes(findings, 'cell.instance-mapped-wrong-cell')) {
    const uuid = f.subject.instance_uuid
    if (batch.done.has(uuid) || !inScope.has(f.subject.cell_uuid)) continue
    if (model.unavailableCells.length > 0) {
      b.skip(f.code, subjectOf(f), darkReason)
      continue
    }
    if (!batch.take()) break
    batch.done.add(uuid)
    const im = mappings.get(uuid)
    const cell = model.cellOf(f.subject.cell_uuid)
    if (!im || !cell) continue
    b.finding(f.code, subjectOf(f), f.message)
    b.about(`instance ${uuid}, which lives in cell ${cell.name ?? cell.uuid}`)
    b.add(
      {
        db: 'nova_api',
        table: 'instance_mappings',
        op: 'update',
        key: {id: im.id},
        expect: {instance_uuid: uuid, cell_id: im.cell_id},
        set: {cell_id: cell.id, updated_at: NOW},
        why: `${f.code}: ${uuid} lives in ${cell.name ?? cell.uuid} (cell_id ${im.cell_id ?? 'NULL'} -> ${cell.id})`,
        code: f.code,
      },
      `cell_id ${im.cell_id ?? 'NULL'} -> ${cell.id}`,
    )
  }
}

/** Every instance row of a cell without a mapping, oldest first, as nova-manage maps them. */
function mapCellInstances(
  model: CloudModel,
  b: PlanBuilder,
  c: CellInfo,
  mappings: Map<string, unknown>,
  batch: InstanceBatch,
  onHost: (i: Instance) => boolean,
): void {
  const dark = model.unavailableCells
  const rows = model.snapshot.nova.instances.filter((i) => i.cell_uuid === c.uuid && onHost(i)).sort(byAge)
  if (dark.length > 0) {
    // The outage rule: without a mapping nothing proves the instance is not live in the unreadable
    // cell too, and a mapping to this copy would hide that one from the API.
    const unmapped = rows.filter((i) => !mappings.has(i.uuid) && !batch.done.has(i.uuid)).length
    if (unmapped > 0)
      b.skip(
        'cell.instance-unmapped',
        `cell=${model.cellLabel(c.uuid)}`,
        `${unmapped} unmapped instance(s) left alone: cell ${dark.map((d) => d.name ?? d.uuid).join(', ')} could not be read and may hold a live copy; re-run once every cell is readable`,
      )
    return
  }
  for (const inst of rows) {
    if (batch.partial) break
    if (mappings.has(inst.uuid) || batch.done.has(inst.uuid)) continue
    if (model.liveInstances(inst.uuid).length > 1) continue // a duplicate handled (or skipped) above
    if (inst.deleted !== 0 && model.liveInstances(inst.uuid).length > 0) continue // a deleted copy: the live one gets the mapping
    if (inst.project_id === null) {
      b.skip(
        'cell.instance-unmapped',
        `cell=${model.cellLabel(c.uuid)} instance=${inst.uuid}`,
        'the instance has no project_id (instance_mappings.project_id is NOT NULL)',
      )
      continue
    }
    if (!batch.take()) break
    batch.done.add(inst.uuid)
    b.about(`instances of cell ${model.cellLabel(c.uuid)} without an instance mapping (deleted ones too, as nova-manage maps them)`)
    const code = inst.deleted === 0 ? 'cell.instance-unmapped' : 'cell.instance-unmapped (deleted)'
    if (inst.deleted === 0)
      b.finding(
        'cell.instance-unmapped',
        `cell=${model.cellLabel(c.uuid)} instance=${inst.uuid}`,
        `Instance ${inst.uuid} lives in cell ${model.cellLabel(c.uuid)} but has no instance_mapping.`,
      )
    b.add({
      db: 'nova_api',
      table: 'instance_mappings',
      op: 'insert',
      unique: {instance_uuid: inst.uuid},
      values: {
        created_at: NOW,
        updated_at: null,
        instance_uuid: inst.uuid,
        cell_id: c.id,
        project_id: inst.project_id,
        user_id: inst.user_id,
        queued_for_delete: 0,
      },
      why: `${code}: map ${inst.uuid} to ${c.name ?? c.uuid}${inst.deleted !== 0 ? ' (deleted instance: nova-manage maps those too)' : ''}`,
      code: 'cell.instance-unmapped',
    })
  }
}

function planDuplicate(
  model: CloudModel,
  b: PlanBuilder,
  f: Finding,
  uuid: string,
  winner: Instance,
  copies: Instance[],
  mappedCellId: number | null,
  hasMapping: boolean,
): void {
  const winCell = model.cellOf(winner.cell_uuid) as CellInfo
  b.finding(f.code, subjectOf(f), f.message)
  b.about(`instance ${uuid}, live in cells ${copies.map((i) => model.cellLabel(i.cell_uuid)).join(' and ')}: the copy in ${winCell.name ?? winCell.uuid} stays`)
  b.note(
    'Duplicates: nova_api commits first (the mapping points at the surviving copy), then the cell of the other copy; if the second commit fails, `cloudctl audit cells` still reports the duplicate and a re-run finishes it.',
  )
  mapToWinner(model, b, f, uuid, winner, mappedCellId, hasMapping)
  for (const loser of copies) if (loser !== winner) softDeleteCopy(model, b, f, uuid, loser)
  // The surviving copy must still be live and not errored when we commit.
  b.add({
    db: cellDbOf(model, b, winner.cell_uuid),
    table: 'instances',
    op: 'check',
    where: {id: winner.id},
    rows: [{uuid, deleted: 0, vm_state: winner.vm_state}],
    why: `${f.code}: the copy in ${winCell.name ?? winCell.uuid} is still live and ${winner.vm_state}`,
  })
}

/** The instance mapping points at the surviving copy's cell: created when missing, re-pointed when wrong. */
function mapToWinner(model: CloudModel, b: PlanBuilder, f: Finding, uuid: string, winner: Instance, mappedCellId: number | null, hasMapping: boolean): void {
  const winCell = model.cellOf(winner.cell_uuid) as CellInfo
  const m = model.snapshot.nova_api.instance_mappings.find((x) => x.instance_uuid === uuid)
  if (!hasMapping || !m) {
    b.add(
      {
        db: 'nova_api',
        table: 'instance_mappings',
        op: 'insert',
        unique: {instance_uuid: uuid},
        values: {
          created_at: NOW,
          updated_at: null,
          instance_uuid: uuid,
          cell_id: winCell.id,
          project_id: winner.project_id ?? '',
          user_id: winner.user_id,
          queued_for_delete: 0,
        },
        why: `${f.code}: map ${uuid} to ${winCell.name ?? winCell.uuid}, where it is live and not errored`,
        code: f.code,
      },
      `to cell ${winCell.name ?? winCell.uuid}`,
    )
  } else if (mappedCellId !== winCell.id) {
    b.add(
      {
        db: 'nova_api',
        table: 'instance_mappings',
        op: 'update',
        key: {id: m.id},
        expect: {instance_uuid: uuid, cell_id: mappedCellId},
        set: {cell_id: winCell.id, updated_at: NOW},
        why: `${f.code}: point ${uuid} at ${winCell.name ?? winCell.uuid}, where it is live and not errored`,
        code: f.code,
      },
      `to cell ${winCell.name ?? winCell.uuid}`,
    )
  }
}

/** The losing copy, soft-deleted in its own cell with what nova's instance_destroy takes with it. */
function softDeleteCopy(model: CloudModel, b: PlanBuilder, f: Finding, uuid: string, loser: Instance): void {
  const db = cellDbOf(model, b, loser.cell_uuid)
  b.add(
    {
      db,
      table: 'instances',
      op: 'update',
      key: {id: loser.id},
      expect: {uuid, deleted: 0, vm_state: loser.vm_state, host: loser.host},
      set: {deleted: col('id'), deleted_at: NOW},
      why: `${f.code}: soft-delete the ${loser.vm_state ?? ''} copy in ${model.cellLabel(loser.cell_uuid)} as nova does (deleted = id, deleted_at; updated_at kept)`,
      code: f.code,
    },
    `the ${loser.vm_state ?? ''} copy in cell ${model.cellLabel(loser.cell_uuid)}`,
  )
  if (loser.extra !== null)
    b.add({
      db,
      table: 'instance_extra',
      op: 'update',
      key: {instance_uuid: uuid, deleted: 0},
      expect: {},
      set: {deleted: col('id'), deleted_at: NOW},
      why: `${f.code}: soft-delete its instance_extra row with it, as nova's instance_destroy does`,
      code: f.code,
    })
  // The rest of what instance_destroy takes with the instance, in that copy's cell only (the other
  // copy shares the uuid). The snapshot does not read these tables: every such row is locked and
  // recorded in the undo file when the repair runs, under the instance step's guard above.
  for (const [table, column] of DESTROYED_WITH_INSTANCE)
    b.add({
      db,
      table,
      op: 'update-all',
      where: {[column]: uuid, deleted: 0},
      set: {deleted: col('id'), deleted_at: NOW},
      why: `${f.code}: soft-delete its ${table} rows with it, as nova's instance_destroy does`,
      code: f.code,
    })
  for (const [table, column] of REMOVED_WITH_INSTANCE)
    b.add({
      db,
      table,
      op: 'delete-all',
      where: {[column]: uuid},
      why: `${f.code}: delete its ${table} rows with it, as nova's instance_destroy does (the table has no deleted column)`,
      code: f.code,
    })
}
