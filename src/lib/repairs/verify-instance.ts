/**
 * cells verify-instance: nova-manage cell_v2 verify_instance's five answers, plus what it cannot see
 * (a copy live in another cell, a mapping to the wrong cell, a cell that could not be read).
 */
import type {CloudModel} from '../domain/model.js'

export type VerifyState = 'mapped' | 'unmapped' | 'no-cell' | 'deleted' | 'archived' | 'mapped-to-wrong-cell' | 'live-in-several-cells' | 'cell-unavailable'

/** nova-manage cell_v2 verify_instance's exit code for each state (cloudctl exits 0 for mapped, else 3). */
export const NOVA_VERIFY_CODE: Record<VerifyState, number | null> = {
  mapped: 0,
  unmapped: 1,
  'no-cell': 2,
  deleted: 3,
  archived: 4,
  'mapped-to-wrong-cell': null,
  'live-in-several-cells': null,
  'cell-unavailable': null,
}

export interface VerifyResult {
  instance_uuid: string
  state: VerifyState
  nova_manage_exit_code: number | null
  message: string
  mapping: {id: number; cell_id: number | null; project_id: string; user_id: string | null} | null
  mapped_cell: {id: number; uuid: string; name: string | null; status: string} | null
  copies: Array<{cell: string; cell_uuid: string; id: number; deleted: number; vm_state: string | null; host: string | null}>
  repair?: string
}

export function verifyInstance(model: CloudModel, uuid: string): VerifyResult {
  const mapping = model.snapshot.nova_api.instance_mappings.find((m) => m.instance_uuid === uuid) ?? null
  const cell = mapping?.cell_id == null ? undefined : model.cellsById.get(mapping.cell_id)
  const rows = model.instancesByUuid.get(uuid) ?? []
  const copies = rows.map((i) => ({
    cell: model.cellLabel(i.cell_uuid),
    cell_uuid: i.cell_uuid,
    id: i.id,
    deleted: i.deleted,
    vm_state: i.vm_state,
    host: i.host,
  }))
  const live = rows.filter((i) => i.deleted === 0)
  const base = {
    instance_uuid: uuid,
    mapping: mapping ? {id: mapping.id, cell_id: mapping.cell_id, project_id: mapping.project_id, user_id: mapping.user_id} : null,
    mapped_cell: cell ? {id: cell.id, uuid: cell.uuid, name: cell.name, status: cell.status} : null,
    copies,
  }
  const r = (state: VerifyState, message: string, repair?: string): VerifyResult => ({
    ...base,
    state,
    nova_manage_exit_code: NOVA_VERIFY_CODE[state],
    message,
    ...(repair ? {repair} : {}),
  })
  if (live.length > 1)
    return r(
      'live-in-several-cells',
      `Instance ${uuid} is live in ${live.length} cells (${live.map((i) => `${model.cellLabel(i.cell_uuid)}: ${i.vm_state}`).join(', ')}).`,
      'cloudctl cells map-instances',
    )
  if (!mapping)
    return r(
      'unmapped',
      `Instance ${uuid} is not mapped to a cell${live.length ? ` (it lives in ${model.cellLabel(live[0].cell_uuid)})` : ' (upgrade is incomplete) or does not exist'}.`,
      live.length ? 'cloudctl cells map-instances' : undefined,
    )
  if (mapping.cell_id === null)
    return r(
      'no-cell',
      `Instance ${uuid} is not mapped to a cell (instance_mappings.cell_id is NULL).`,
      live.length ? 'cloudctl cells map-instances' : undefined,
    )
  if (!cell || cell.status !== 'available')
    return r('cell-unavailable', `Instance ${uuid} is mapped to ${cell?.name ?? `cell id ${mapping.cell_id}`}, which could not be read.`)
  const here = rows.filter((i) => i.cell_uuid === cell.uuid)
  if (here.some((i) => i.deleted === 0)) return r('mapped', `Instance ${uuid} is in cell: ${cell.name ?? ''} (${cell.uuid}).`)
  if (live.length === 1)
    return r(
      'mapped-to-wrong-cell',
      `Instance ${uuid} is mapped to ${cell.name ?? cell.uuid} but lives in ${model.cellLabel(live[0].cell_uuid)}.`,
      'cloudctl cells map-instances',
    )
  if (here.length > 0)
    return r('deleted', `The instance with uuid ${uuid} has been deleted; its instance_mapping remains.`, 'nova-manage db archive_deleted_rows')
  return r('archived', `The instance with uuid ${uuid} has been archived; however its instance_mapping remains.`)
}
