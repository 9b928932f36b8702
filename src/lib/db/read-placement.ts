/** The placement database into the snapshot. */
import type {PlacementTables} from '../domain/snapshot.js'
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

export async function readPlacement(r: Reader): Promise<PlacementTables> {
  const resource_providers = await readRows(r, RESOURCE_PROVIDERS)
  const inventories = await readRows(r, INVENTORIES)
  const allocations = await readRows(r, ALLOCATIONS)
  const consumers = await readRows(r, CONSUMERS)
  const consumer_types = await readRows(r, CONSUMER_TYPES)
  const projects = await readRows(r, PROJECTS)
  const users = await readRows(r, USERS)
  return {resource_providers, inventories, allocations, consumers, consumer_types, projects, users, ...(await readClassesTraitsAggregates(r))}
}

/** What the full read and the scheduler view both take whole: classes, traits and aggregates of providers. */
export async function readClassesTraitsAggregates(
  r: Reader,
): Promise<Pick<PlacementTables, 'resource_classes' | 'traits' | 'resource_provider_traits' | 'placement_aggregates' | 'resource_provider_aggregates'>> {
  // Placement syncs the standard classes into this table with their fixed ids; the snapshot keeps
  // only the CUSTOM_* rows (resource-classes.ts knows the standard ones).
  const resource_classes = await readRows(r, RESOURCE_CLASSES, {where: "name LIKE 'CUSTOM\\_%'"})
  const traits = await readRows(r, TRAITS)
  const resource_provider_traits = await readRows(r, RESOURCE_PROVIDER_TRAITS)
  const placement_aggregates = await readRows(r, PLACEMENT_AGGREGATES)
  const resource_provider_aggregates = await readRows(r, RESOURCE_PROVIDER_AGGREGATES)
  return {resource_classes, traits, resource_provider_traits, placement_aggregates, resource_provider_aggregates}
}
