/** Planting faults in a built snapshot (before seeding), the way the incidents leave them. */
import type {Allocation, Migration, Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder} from '../support/builders.js'

export function nextId(rows: ReadonlyArray<{id: number}>): number {
  return rows.reduce((m, r) => Math.max(m, r.id), 0) + 1
}

export function providerId(s: Snapshot, name: string): number {
  const rp = s.placement.resource_providers.find((p) => p.name === name)
  if (!rp) throw new Error(`no provider ${name}`)
  return rp.id
}

/** Allocation rows (and a consumers row when absent) for `consumer` on provider `rpName`. */
export function addAllocations(s: Snapshot, consumer: string, rpName: string, amounts: Record<number, number>): Allocation[] {
  const rpId = providerId(s, rpName)
  const out: Allocation[] = []
  for (const [rc, used] of Object.entries(amounts)) {
    const a = {id: nextId(s.placement.allocations), resource_provider_id: rpId, consumer_id: consumer, resource_class_id: Number(rc), used}
    s.placement.allocations.push(a)
    out.push(a)
  }
  if (!s.placement.consumers.some((c) => c.uuid === consumer))
    s.placement.consumers.push({
      id: nextId(s.placement.consumers),
      uuid: consumer,
      project_id: s.placement.projects[0].id,
      user_id: s.placement.users[0].id,
      generation: 1,
      consumer_type_id: null,
    })
  return out
}

export function addMigrationRow(
  s: Snapshot,
  m: Partial<Migration> & {instance_uuid: string; uuid: string; status: string; migration_type: Migration['migration_type']},
): Migration {
  const cell = s.nova.instances.find((i) => i.uuid === m.instance_uuid)?.cell_uuid ?? s.cells[1].uuid
  const row: Migration = {
    cell_uuid: cell,
    id: nextId(s.nova.migrations.filter((x) => x.cell_uuid === cell)),
    source_compute: null,
    dest_compute: null,
    dest_host: null,
    source_node: null,
    dest_node: null,
    old_instance_type_id: null,
    new_instance_type_id: null,
    hidden: false,
    cross_cell_move: false,
    deleted: 0,
    created_at: '2024-05-10 10:00:00',
    updated_at: '2024-05-10 10:05:00',
    ...m,
  }
  s.nova.migrations.push(row)
  return row
}

/** Two hosts in cell1 with a few m1.small instances: the base every repair test breaks. */
export function baseCloud(seed = 7): {b: CloudBuilder} {
  const b = new CloudBuilder({seed, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'compute1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell1', {host: 'compute2', vcpus: 16, memory_mb: 32768, local_gb: 500})
  return {b}
}
