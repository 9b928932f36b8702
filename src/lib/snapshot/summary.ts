import type {CloudModel} from '../domain/model.js'
import type {SnapshotRelease} from '../domain/release.js'
import {type ReadFrom, readFrom} from './read-from.js'

export interface CellSummary {
  name: string | null
  uuid: string
  status: 'available' | 'unavailable'
  error?: string
  disabled: boolean
  database: string | null
  compute_services: number
  compute_services_down: number
  compute_services_disabled: number
  hosts: number
  instances: number
  instances_deleted: number
  /** The release this cell's schema says (absent: not recorded, or the cell was not read). */
  release?: string
}

export interface SnapshotSummary {
  captured_at: string
  source: {kind: string; description: string}
  /** Which server (and Galera node) each database was read from; [] when the snapshot does not record it. */
  read_from: ReadFrom[]
  /** What the databases said about their release at capture; null when the snapshot does not record it. */
  release: SnapshotRelease | null
  cells: CellSummary[]
  totals: {
    hosts: number
    instances: number
    instances_by_vm_state: Record<string, number>
    flavors: number
    aggregates: number
    host_mappings: number
    instance_mappings: number
    build_requests: number
    resource_providers: number
    root_providers: number
    allocations: number
    consumers: number
    unreadable_blobs: number
  }
}

/** Seconds nova waits before it calls a service down ([DEFAULT] service_down_time). */
export const SERVICE_DOWN_TIME = 60

export function parseDbTime(ts: string | null): number | null {
  if (!ts) return null
  const ms = Date.parse(ts.includes('T') ? ts : `${ts.replace(' ', 'T')}Z`)
  return Number.isNaN(ms) ? null : ms
}

/** A service is up when it reported within service_down_time of the capture (nova's DB servicegroup driver). */
export function serviceIsUp(
  svc: {last_seen_up: string | null; updated_at: string | null; created_at: string | null; forced_down: boolean | null},
  nowMs: number,
  downTime = SERVICE_DOWN_TIME,
): boolean {
  if (svc.forced_down) return false
  const seen = parseDbTime(svc.last_seen_up) ?? parseDbTime(svc.updated_at) ?? parseDbTime(svc.created_at)
  return seen !== null && Math.abs(nowMs - seen) <= downTime * 1000
}

export function summarize(model: CloudModel): SnapshotSummary {
  const s = model.snapshot
  const now = Date.parse(s.captured_at)
  const cells = new Map<string, CellSummary>()
  for (const c of s.cells) {
    cells.set(c.uuid, {
      name: c.name,
      uuid: c.uuid,
      status: c.status,
      ...(c.error === undefined ? {} : {error: c.error}),
      disabled: c.disabled,
      database: c.database_connection,
      compute_services: 0,
      compute_services_down: 0,
      compute_services_disabled: 0,
      hosts: 0,
      instances: 0,
      instances_deleted: 0,
      ...(s.release?.cells[c.uuid] === undefined ? {} : {release: s.release.cells[c.uuid].name}),
    })
  }
  for (const svc of s.nova.services) {
    const c = cells.get(svc.cell_uuid)
    if (!c || svc.deleted !== 0 || svc.binary !== 'nova-compute') continue
    c.compute_services++
    if (svc.disabled) c.compute_services_disabled++
    if (!serviceIsUp(svc, now)) c.compute_services_down++
  }
  for (const cn of model.liveComputeNodes) {
    const c = cells.get(cn.cell_uuid)
    if (c) c.hosts++
  }
  const byState: Record<string, number> = {}
  let live = 0
  for (const inst of s.nova.instances) {
    const c = cells.get(inst.cell_uuid)
    if (inst.deleted !== 0) {
      if (c) c.instances_deleted++
      continue
    }
    if (inst.hidden) continue
    live++
    if (c) c.instances++
    const state = inst.vm_state ?? 'unknown'
    byState[state] = (byState[state] ?? 0) + 1
  }
  const rps = s.placement.resource_providers
  return {
    captured_at: s.captured_at,
    source: {kind: s.source.kind, description: s.source.description},
    read_from: readFrom(s),
    release: s.release ?? null,
    cells: [...cells.values()],
    totals: {
      hosts: model.liveComputeNodes.length,
      instances: live,
      instances_by_vm_state: byState,
      flavors: s.nova_api.flavors.length,
      aggregates: s.nova_api.aggregates.length,
      host_mappings: s.nova_api.host_mappings.length,
      instance_mappings: s.nova_api.instance_mappings.length,
      build_requests: s.nova_api.build_requests.length,
      resource_providers: rps.length,
      root_providers: rps.filter((rp) => rp.parent_provider_id === null).length,
      allocations: s.placement.allocations.length,
      consumers: s.placement.consumers.length,
      unreadable_blobs: model.blobErrors().length,
    },
  }
}
