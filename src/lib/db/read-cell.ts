/** One nova cell database into the snapshot: services, compute nodes, instances, migrations. */
import type {Instance, NovaCellTables} from '../domain/snapshot.js'
import {COMPUTE_NODES, INSTANCE_EXTRA, INSTANCES, MIGRATIONS, SERVICES} from '../domain/tables/nova-cell.js'
import {type Reader, readEach, readRows} from './table-reader.js'

/**
 * The audit view (Snapshot.scope 'audit'): row columns no audit reads, left out of a live audit's
 * read (they hold null). Blobs the scheduler parses and an audit does not (cpu_info,
 * supported_instances, pci_stats, pci_requests), and instance columns no check or evidence names:
 * a third of the values of the largest table, strings most of them (display_name, one per
 * instance). A check that starts reading one of them must take it off this list:
 * test/db/audit-view.test.ts holds the view's findings equal to a full read's.
 * In placement the view reads the resource_provider_traits rows of AUDIT_TRAITS only
 * (domain/trait-sets.ts): one trait of the 60-100 a real compute reports.
 */
export const AUDIT_VIEW = {
  compute_nodes: ['hypervisor_version', 'host_ip', 'disk_available_least', 'current_workload', 'cpu_info', 'supported_instances', 'pci_stats'],
  instances: ['power_state', 'display_name', 'os_type', 'architecture', 'launched_at', 'terminated_at', 'updated_at'],
  instance_extra: ['pci_requests'],
} as const satisfies Partial<Record<string, readonly string[]>>

/** Row columns a cell read leaves out, by table (AUDIT_VIEW, or none). */
export type CellColumns = Partial<Record<keyof typeof AUDIT_VIEW, readonly string[]>>

/**
 * `present`: the newer columns this database has ('table.column', from the schema probe);
 * `leaveOut`: row columns not read, by table (AUDIT_VIEW for a live audit).
 */
export async function readCell(r: Reader, cellUuid: string, present: ReadonlySet<string>, leaveOut: CellColumns = {}): Promise<NovaCellTables> {
  const services = await readRows(r, SERVICES, {cellUuid})
  const compute_nodes = await readRows(r, COMPUTE_NODES, {cellUuid, leaveOut: leaveOut.compute_nodes})

  // instances and instance_extra are read as two primary-key scans and matched here by uuid. A
  // join makes the server look up instance_extra through its instance_uuid index for every instance
  // (then the clustered index for the blobs): about three times the server time of two scans.
  // nova writes an instance and its instance_extra row in one transaction, so both scans meet the
  // instances in the same order: the match is the instance at a cursor, a few rows on where some
  // had no extra row, and a uuid map (built once, on the first miss) otherwise.
  // An instance with two live instance_extra rows (never written by nova) keeps the one with the
  // lowest id.
  const instances = await readRows(r, INSTANCES, {cellUuid, present, leaveOut: leaveOut.instances})
  await readExtras(r, instances, 'deleted = 0', [], leaveOut.instance_extra)

  // Soft-deleted migrations too: nova's instance_destroy soft-deletes an instance's migrations with it,
  // and a migration allocation nova failed to remove outlives both (leaks names it as that
  // migration's). Every use of in-progress migrations filters on deleted (isMigrationInProgress).
  const migrations = await readRows(r, MIGRATIONS, {cellUuid, present})
  return {services, compute_nodes, instances, migrations}
}

/**
 * The live instance_extra rows of `instances` (those `where` selects, with its `params`) into their
 * `extra`; an instance with two such rows keeps the one with the lowest id.
 */
export async function readExtras(r: Reader, instances: Instance[], where: string, params: unknown[] = [], leaveOut?: readonly string[]): Promise<void> {
  const match = new InstanceMatcher(instances)
  await readEach(r, INSTANCE_EXTRA, {where, params, also: ['instance_uuid'], leaveOut}, (extra, raw, at) => {
    const inst = match.find(String(raw[at]))
    if (inst && inst.extra === null) inst.extra = extra
  })
}

/** How far past the cursor a match is looked for before the uuid map. */
const LOOK_AHEAD = 8

/** Instances by uuid for rows that mostly come in the instances' own order (see readCell). */
class InstanceMatcher {
  private next = 0
  private byUuid: Map<string, Instance> | null = null

  constructor(private readonly instances: Instance[]) {}

  find(uuid: string): Instance | undefined {
    const rows = this.instances
    const end = Math.min(rows.length, this.next + LOOK_AHEAD)
    for (let i = this.next; i < end; i++) {
      if ((rows[i] as Instance).uuid === uuid) {
        this.next = i + 1
        return rows[i]
      }
    }
    this.byUuid ??= new Map(rows.map((inst) => [inst.uuid, inst]))
    return this.byUuid.get(uuid)
  }
}
