/** The placement database into the snapshot. */
import type {PlacementTables} from '../domain/snapshot.js'
import type {RowOf} from '../domain/tables/define.js'
import {
  ALLOCATIONS,
  CONSUMER_TYPES,
  CONSUMERS,
  INVENTORIES,
  PLACEMENT_AGGREGATES,
  PROJECTS,
  RESOURCE_CLASSES,
  RESOURCE_PROVIDER_AGGREGATES,
  RESOURCE_PROVIDER_TRAITS,
  RESOURCE_PROVIDERS,
  TRAITS,
  USERS,
} from '../domain/tables/placement.js'
import {type Reader, readRows} from './table-reader.js'

/**
 * `traits`: read the resource_provider_traits rows of these trait names only (the audit view,
 * AUDIT_TRAITS); every row when absent.
 */
export async function readPlacement(r: Reader, opts: {traits?: ReadonlySet<string>} = {}): Promise<PlacementTables> {
  const resource_providers = await readRows(r, RESOURCE_PROVIDERS)
  const inventories = await readRows(r, INVENTORIES)
  const allocations = await readRows(r, ALLOCATIONS)
  const consumers = await readRows(r, CONSUMERS)
  const consumer_types = await readRows(r, CONSUMER_TYPES)
  const projects = await readRows(r, PROJECTS)
  const users = await readRows(r, USERS)
  return {resource_providers, inventories, allocations, consumers, consumer_types, projects, users, ...(await readClassesTraitsAggregates(r, opts.traits))}
}

/**
 * Classes, traits and aggregates of providers (resource_provider_traits only of the trait names
 * `traitRows` holds, when given).
 */
export async function readClassesTraitsAggregates(
  r: Reader,
  traitRows?: ReadonlySet<string>,
): Promise<Pick<PlacementTables, 'resource_classes' | 'traits' | 'resource_provider_traits' | 'placement_aggregates' | 'resource_provider_aggregates'>> {
  // Placement syncs the standard classes into this table with their fixed ids; the snapshot keeps
  // only the CUSTOM_* rows (resource-classes.ts knows the standard ones).
  const resource_classes = await readRows(r, RESOURCE_CLASSES, {where: "name LIKE 'CUSTOM\\_%'"})
  const traits = await readRows(r, TRAITS)
  const resource_provider_traits = traitRows === undefined ? await readRows(r, RESOURCE_PROVIDER_TRAITS) : await readProviderTraits(r, traits, traitRows)
  const placement_aggregates = await readRows(r, PLACEMENT_AGGREGATES)
  const resource_provider_aggregates = await readRows(r, RESOURCE_PROVIDER_AGGREGATES)
  return {resource_classes, traits, resource_provider_traits, placement_aggregates, resource_provider_aggregates}
}

/**
 * The resource_provider_traits rows of the traits named, in primary-key order as the full read has
 * them: real computes carry 60-100 traits each (146k rows at 2,000 hosts), while a boot's query
 * names a handful and the audits one.
 */
export async function readProviderTraits(
  r: Reader,
  traits: ReadonlyArray<{id: number; name: string}>,
  names: ReadonlySet<string>,
): Promise<Array<RowOf<typeof RESOURCE_PROVIDER_TRAITS>>> {
  const ids = traits.filter((t) => names.has(t.name)).map((t) => t.id)
  if (ids.length === 0) return []
  return readRows(r, RESOURCE_PROVIDER_TRAITS, {where: `trait_id IN (${ids.map(() => '?').join(', ')})`, params: ids})
}
