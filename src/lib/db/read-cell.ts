/** One nova cell database into the snapshot: services, compute nodes, instances, migrations. */
import type {Instance, NovaCellTables} from '../domain/snapshot.js'
import {COMPUTE_NODES, INSTANCE_EXTRA, INSTANCES, MIGRATIONS, SERVICES} from '../domain/tables/nova-cell.js'
import {type Reader, readEach, readRows} from './table-reader.js'

/** `present`: the newer columns this database has ('table.column', from the schema probe). */
export async function readCell(r: Reader, cellUuid: string, present: ReadonlySet<string>): Promise<NovaCellTables> {
  const services = await readRows(r, SERVICES, {cellUuid})
  const compute_nodes = await readRows(r, COMPUTE_NODES, {cellUuid})

  // instances and instance_extra are read as two primary-key scans and matched here by uuid. A
  // join makes the server look up instance_extra through its instance_uuid index for every instance
  // (then the clustered index for the blobs): about three times the server time of two scans.
  // The matching costs one map entry per instance, the extra rows being kept anyway.
  // An instance with two live instance_extra rows (never written by nova) keeps the one with the
  // lowest id.
  const instances: Instance[] = []
  const byUuid = new Map<string, Instance>()
  await readEach(r, INSTANCES, {cellUuid, present}, (row) => {
    instances.push(row)
    byUuid.set(row.uuid, row)
  })
  await readEach(r, INSTANCE_EXTRA, {where: 'deleted = 0', also: ['instance_uuid']}, (extra, raw) => {
    const inst = byUuid.get(String(raw.instance_uuid))
    if (inst && inst.extra === null) inst.extra = extra
  })
  byUuid.clear()

  const migrations = await readRows(r, MIGRATIONS, {cellUuid, present, where: 'deleted = 0'})
  return {services, compute_nodes, instances, migrations}
}
