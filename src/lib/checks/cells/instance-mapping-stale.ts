import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {type CellInfo, MAP_INSTANCES_MARKER_PROJECT} from '../../domain/snapshot.js'
import type {CheckUnit} from '../unit.js'
import {liveMappings} from './mappings.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.instance-mapping-stale': [FindingSubject, Open]
  }
}

/** A mapping whose instance was deleted longer ago than this is kept for nothing. */
export const STALE_MAPPING_DAYS = 30
const DAY_MS = 86_400_000

/**
 * Mappings of instances deleted long ago (nova-manage db archive_deleted_rows leaves none). A cloud
 * that never archives has one per deleted instance, hundreds of thousands: one finding per cell,
 * with the count, the oldest deletion and the archive command; the uuids in evidence only.
 */
export const instanceMappingStale: CheckUnit = {
  code: 'cell.instance-mapping-stale',
  check: 'cells',
  severity: 'info',
  summary: 'instance_mapping of an instance deleted long ago or archived',
  explain: {
    cause:
      'The cell never archives deleted instances: their instance_mappings stay in nova_api long after the deletion (one finding per cell, the uuids in the evidence).',
    repair: '`nova-manage db archive_deleted_rows --before DATE --purge` (the date is in the finding) removes the old rows and their mappings.',
  },
  run(ctx) {
    const capturedMs = Date.parse(ctx.model.snapshot.captured_at)
    const mappings = ctx.model.snapshot.nova_api.instance_mappings
    const {ofLive} = liveMappings(ctx)
    const stale = new Map<string, {cell: CellInfo; uuids: string[]; oldest: number | undefined; archived: number}>()
    for (let i = 0; i < mappings.length; i++) {
      if (ofLive[i]) continue
      const mapping = mappings[i]
      if (mapping.project_id === MAP_INSTANCES_MARKER_PROJECT) continue
      if (ctx.buildRequestUuids.has(mapping.instance_uuid)) continue
      const cell = ctx.cellById(mapping.cell_id)
      if (!cell || cell.status !== 'available') continue
      // The instance's rows in the mapped cell, read in one indexed pass (no filtered copies): a
      // live one is a hidden copy (a cross-cell move in progress), else the newest deletion counts.
      const all = ctx.rowsOf(mapping.instance_uuid)
      let here = 0
      let liveHere = false
      let newest: number | undefined
      if (all)
        for (let r = 0; r < all.length; r++) {
          const row = all[r]
          if (row.cell_uuid !== cell.uuid) continue
          here++
          if (row.deleted === 0) liveHere = true
          const t = row.deleted_at ? Date.parse(`${row.deleted_at.replace(' ', 'T')}Z`) : Number.NaN
          if (!Number.isNaN(t) && (newest === undefined || t > newest)) newest = t
        }
      if (liveHere) continue
      const ageDays = newest === undefined ? undefined : (capturedMs - newest) / DAY_MS
      if (here > 0 && (ageDays === undefined || ageDays < STALE_MAPPING_DAYS)) continue
      const entry = stale.get(cell.uuid) ?? {cell, uuids: [], oldest: undefined, archived: 0}
      entry.uuids.push(mapping.instance_uuid)
      if (here === 0) entry.archived++
      if (newest !== undefined && (entry.oldest === undefined || newest < entry.oldest)) entry.oldest = newest
      stale.set(cell.uuid, entry)
    }
    const findings: Finding[] = []
    for (const {cell, uuids, oldest, archived} of stale.values()) {
      const name = cell.name ?? cell.uuid
      // --before the staleness cutoff: deletions newer than that stay for nova to archive later.
      const before = new Date(capturedMs - STALE_MAPPING_DAYS * DAY_MS).toISOString().slice(0, 10)
      const oldestDate = oldest === undefined ? null : new Date(oldest).toISOString().slice(0, 10)
      const parts = [
        `${uuids.length} instance_mapping(s) in ${name} are of instances deleted over ${STALE_MAPPING_DAYS} days ago${oldestDate ? ` (oldest ${oldestDate})` : ''}`,
      ]
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
    return findings
  },
}
