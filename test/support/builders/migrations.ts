/**
 * Builder family: migrations. A move of an instance in progress or done, with the allocations
 * nova's conductor and compute leave for each status (migration consumer on the source, instance on
 * the destination) and the trackers that count it.
 */
import type {Flavor, Migration} from '../../../src/lib/domain/snapshot.js'
import {instanceFlavorBlob} from './blobs.js'
import {flavorResources} from './resources.js'
import {
  type HostRec,
  type InstanceRec,
  type MigrationRec,
  type MigrationSpec,
  CONSUMER_TYPE_INSTANCE,
  CONSUMER_TYPE_MIGRATION,
  MIGRATION_DONE,
  NOT_ON_HOST,
} from './specs.js'
import {InstanceFamily} from './instances.js'

export abstract class MigrationFamily extends InstanceFamily {
  /**
   * A move of an instance. In progress (status not done): the source keeps its allocation under the
   * migration uuid, the destination is held by the instance; both nodes' trackers count it. Done
   * statuses leave the instance on the destination (confirmed/completed/done) or the source
   * (reverted/error/failed/cancelled) holding only its own allocation there.
   */
  addMigration(instanceUuid: string, spec: MigrationSpec): MigrationRec {
    const inst = this.instance(instanceUuid)
    const source = inst.hostRec
    if (!source) throw new Error(`instance ${instanceUuid} has no host`)
    const dest = this.hostRec(spec.dest, spec.dest_node)
    if (dest.cell !== source.cell) throw new Error('cross-cell moves are not built')
    if (inst.pins.size > 0 && !MIGRATION_DONE.has(spec.status))
      throw new Error('in-progress moves of pinned instances are not built (their claims live in migration_context)')
    const newFlavor = spec.new_flavor ? this.flavor(spec.new_flavor) : inst.flavor
    const uuid = spec.uuid ?? this.rng.uuid()
    const at = this.ago(1800)
    const row: Migration = {
      cell_uuid: source.cell.uuid,
      id: ++this.seq.mig,
      uuid,
      instance_uuid: instanceUuid,
      source_compute: source.host,
      dest_compute: dest.host,
      dest_host: dest.cn.host_ip,
      source_node: source.node,
      dest_node: dest.node,
      status: spec.status,
      migration_type: spec.type,
      old_instance_type_id: inst.flavor.id,
      new_instance_type_id: newFlavor.id,
      hidden: false,
      cross_cell_move: false,
      deleted: 0,
      created_at: at,
      updated_at: at,
    }
    const rec: MigrationRec = {row, inst, source, dest, newFlavor, alsoTrackedOn: null}
    const oldFlavor = inst.flavor
    this.migrations.set(uuid, rec)
    this.migrationRows.push(row)
    const project = inst.row.project_id ?? this.defaultProject
    const user = inst.row.user_id ?? this.defaultUser
    const srcAllocs = this.allocations.get(instanceUuid) ?? []
    const newRes = flavorResources(newFlavor, inst.bootFromVolume)
    const done = MIGRATION_DONE.has(spec.status)
    const failed = ['reverted', 'error', 'failed', 'cancelled'].includes(spec.status)
    if (!done) {
      if (spec.type === 'evacuation') {
        // evacuation: the instance consumer holds both source and destination (no migration consumer)
        const destAllocs = this.resolve(dest, newRes.resources, false)
        this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, [...srcAllocs, ...destAllocs])
      } else {
        this.putAllocations(
          uuid,
          project,
          user,
          CONSUMER_TYPE_MIGRATION,
          srcAllocs.map((a) => ({...a})),
        )
        // the source claim moves to the migration consumer before the destination is claimed
        const destAllocs = this.resolve(dest, newRes.resources, false)
        this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, destAllocs)
      }
      // the instance stays on the source until the move finishes ('finished' = waiting for resize confirm)
      const onDest = spec.status === 'finished' || spec.status === 'confirming'
      const other = onDest ? source : dest
      if (onDest) this.moveInstanceRow(inst, dest, newFlavor)
      this.trackUsage(other, onDest ? oldFlavor : newFlavor, 1)
      rec.alsoTrackedOn = other
      // prep_resize sets old_flavor/new_flavor; finish_resize makes the new one current
      if (spec.type !== 'evacuation' && spec.type !== 'live-migration' && inst.row.extra) {
        inst.row.extra.flavor = instanceFlavorBlob(onDest ? newFlavor : oldFlavor, oldFlavor, newFlavor)
      }
    } else if (!failed) {
      const destAllocs = this.resolve(dest, newRes.resources, false)
      this.putAllocations(instanceUuid, project, user, CONSUMER_TYPE_INSTANCE, destAllocs)
      this.moveInstanceRow(inst, dest, newFlavor)
    }
    return rec
  }

  protected moveInstanceRow(inst: InstanceRec, dest: HostRec, flavor: Flavor): void {
    this.untrack(inst)
    inst.hostRec = dest
    inst.row.host = dest.host
    inst.row.node = dest.node
    inst.row.cell_uuid = dest.cell.uuid
    if (flavor !== inst.flavor) {
      inst.flavor = flavor
      inst.res = flavorResources(flavor, inst.bootFromVolume)
      inst.row.instance_type_id = flavor.id
      inst.row.vcpus = flavor.vcpus
      inst.row.memory_mb = flavor.memory_mb
      inst.row.root_gb = flavor.root_gb
      inst.row.ephemeral_gb = flavor.ephemeral_gb
      if (inst.row.extra) inst.row.extra.flavor = this.flavorBlob(flavor)
    }
    if (inst.row.extra?.numa_topology) {
      const cells = this.fitNuma(dest, inst, undefined, false)
      inst.numaCells = cells
      inst.row.extra.numa_topology = cells ? this.instanceNumaBlob(inst.flavor, cells) : null
    }
    if (!NOT_ON_HOST.has(inst.row.vm_state ?? '')) {
      this.trackInstance(dest, inst.row, 1)
      this.trackUsage(dest, flavor, 1, inst.bootFromVolume)
    }
  }
}
