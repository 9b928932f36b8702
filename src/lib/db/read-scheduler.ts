/**
 * The scheduler view (Snapshot.scope 'scheduler'): what one `simulate boot` / `simulate capacity` /
 * `simulate migrate` question reads, instead of every row of every table. nova's scheduler reads
 * providers, inventories, usage, traits and aggregates from placement, services and compute nodes
 * from the cells, flavors, aggregates and server groups from nova_api, and instances only to answer
 * "is X on this host" (engine/reads.ts). So:
 * - placement: every table but allocations, consumers, projects and users; usage summed by the
 *   database per provider and class (the provider/class/used index answers the GROUP BY without
 *   touching the rows); allocation rows only of the instance the question names;
 * - nova_api: cell and host mappings, flavors, aggregates, server groups; the request spec of the
 *   named instance only (every row when it has none, so that the error suggests the same uuid);
 * - each cell: services and compute nodes (blobs included); instance rows (with instance_extra)
 *   only of the instances the question reads, once nova_api has said which.
 */
import type {Instance, NovaApiTables, NovaCellTables, PlacementTables, ProviderUsage} from '../domain/snapshot.js'
import type {RowOf} from '../domain/tables/define.js'
import {HOST_MAPPINGS, REQUEST_SPECS} from '../domain/tables/nova-api.js'
import {COMPUTE_NODES, INSTANCES, SERVICES} from '../domain/tables/nova-cell.js'
import {
  ALLOCATIONS,
  INVENTORIES,
  PLACEMENT_AGGREGATES,
  RESOURCE_CLASSES,
  RESOURCE_PROVIDER_AGGREGATES,
  RESOURCE_PROVIDER_TRAITS,
  RESOURCE_PROVIDERS,
  TRAITS,
} from '../domain/tables/placement.js'
import type {SchedulerView} from '../snapshot/source.js'
import {readAggregates, readFlavors, readInstanceGroups} from './read-nova-api.js'
import {readProviderTraits} from './read-placement.js'
import {readExtras} from './read-cell.js'
import {rowConverter} from './row-converter.js'
import {type Reader, readRows, selectSql} from './table-reader.js'

/** Placeholders per IN list: well under max_allowed_packet for uuids, few round trips. */
const CHUNK = 1000

export async function readNovaApiForScheduler(r: Reader, view: SchedulerView): Promise<NovaApiTables> {
  const host_mappings = await readRows(r, HOST_MAPPINGS)
  const flavors = await readFlavors(r)
  const aggregates = await readAggregates(r)
  const instance_groups = await readInstanceGroups(r)
  const out: NovaApiTables = {host_mappings, instance_mappings: [], flavors, aggregates, build_requests: [], instance_groups}
  if (view.instance !== undefined) {
    const one = await readRows(r, REQUEST_SPECS, {where: 'instance_uuid = ?', params: [view.instance]})
    out.request_specs = one.length > 0 ? one : await readRows(r, REQUEST_SPECS)
  }
  return out
}

export async function readPlacementForScheduler(r: Reader, view: SchedulerView, api: Promise<NovaApiTables>): Promise<PlacementTables> {
  const resource_providers = await readRows(r, RESOURCE_PROVIDERS)
  const inventories = await readRows(r, INVENTORIES)
  const usages: ProviderUsage[] = []
  await r.each(
    'allocations (summed)',
    'SELECT resource_provider_id, resource_class_id, SUM(used) AS used FROM allocations GROUP BY resource_provider_id, resource_class_id',
    (x) => usages.push({resource_provider_id: Number(x.resource_provider_id), resource_class_id: Number(x.resource_class_id), used: Number(x.used)}),
  )
  const allocations = view.instance === undefined ? [] : await readRows(r, ALLOCATIONS, {where: 'consumer_id = ?', params: [view.instance]})
  // As the full read (read-placement.ts): the CUSTOM_* classes only, every trait name and aggregate.
  const resource_classes = await readRows(r, RESOURCE_CLASSES, {where: "name LIKE 'CUSTOM\\_%'"})
  const traits = await readRows(r, TRAITS)
  const placement_aggregates = await readRows(r, PLACEMENT_AGGREGATES)
  const resource_provider_aggregates = await readRows(r, RESOURCE_PROVIDER_AGGREGATES)
  // Last, once nova_api has said which traits the question names (by then it has).
  const names = view.providerTraits?.(await api, {traits, resource_classes}) ?? null
  const resource_provider_traits = names === null ? await readRows(r, RESOURCE_PROVIDER_TRAITS) : await readProviderTraits(r, traits, names)
  return {
    resource_providers,
    inventories,
    allocations,
    consumers: [],
    consumer_types: [],
    projects: [],
    users: [],
    resource_classes,
    traits,
    resource_provider_traits,
    placement_aggregates,
    resource_provider_aggregates,
    usages,
  }
}

/**
 * A cell's services and compute nodes (their NUMA topologies only if `hostNuma` says the question
 * can read them), then (once `wanted` is known) the rows of those instances, in id order as the
 * full read has them. Both answers come from nova_api.
 */
export async function readCellForScheduler(
  r: Reader,
  cellUuid: string,
  present: ReadonlySet<string>,
  wanted: Promise<string[]>,
  hostNuma: Promise<boolean>,
): Promise<NovaCellTables> {
  const services = await readRows(r, SERVICES, {cellUuid})
  const compute_nodes = (await hostNuma) ? await readRows(r, COMPUTE_NODES, {cellUuid}) : await readComputeNodesWithoutNuma(r, cellUuid)
  const uuids = await wanted
  const instances: Instance[] = []
  for (let i = 0; i < uuids.length; i += CHUNK) {
    const part = uuids.slice(i, i + CHUNK)
    const list = part.map(() => '?').join(', ')
    const rows = await readRows(r, INSTANCES, {cellUuid, present, where: `uuid IN (${list})`, params: part})
    await readExtras(r, rows, `deleted = 0 AND instance_uuid IN (${list})`, part)
    instances.push(...rows)
  }
  instances.sort((a, b) => a.id - b.id)
  return {services, compute_nodes, instances, migrations: []}
}

/**
 * The compute nodes with numa_topology NULL, not read: two thirds of a real compute's row (two
 * sockets' cpusets, siblings and page pools), which a request without a NUMA topology never looks at.
 */
async function readComputeNodesWithoutNuma(r: Reader, cellUuid: string): Promise<Array<RowOf<typeof COMPUTE_NODES>>> {
  const convert = rowConverter(COMPUTE_NODES)
  const sql = selectSql(COMPUTE_NODES).replace('`numa_topology`', 'NULL AS `numa_topology`')
  const out: Array<RowOf<typeof COMPUTE_NODES>> = []
  await r.eachDecoded('compute_nodes', sql, {names: COMPUTE_NODES.row, decode: (x) => convert(x, cellUuid, []) as RowOf<typeof COMPUTE_NODES>}, (row) =>
    out.push(row),
  )
  return out
}
