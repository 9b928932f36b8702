/** The table specs, grouped as a snapshot holds them and as the databases create them. */
import type {TableSpec} from './define.js'
import * as api from './nova-api.js'
import * as cell from './nova-cell.js'
import * as placement from './placement.js'

export * from './nova-api.js'
export * from './nova-cell.js'
export * from './placement.js'

/** Tables that are a list of a snapshot section, in the section's order (child tables fold into their parent's rows). */
export const NOVA_API_SNAPSHOT_TABLES: TableSpec[] = [
  api.HOST_MAPPINGS,
  api.INSTANCE_MAPPINGS,
  api.FLAVORS,
  api.AGGREGATES,
  api.BUILD_REQUESTS,
  api.REQUEST_SPECS,
  api.INSTANCE_GROUPS,
]
export const NOVA_CELL_SNAPSHOT_TABLES: TableSpec[] = [cell.SERVICES, cell.COMPUTE_NODES, cell.INSTANCES, cell.MIGRATIONS]
export const PLACEMENT_SNAPSHOT_TABLES: TableSpec[] = [
  placement.RESOURCE_PROVIDERS,
  placement.INVENTORIES,
  placement.ALLOCATIONS,
  placement.CONSUMERS,
  placement.CONSUMER_TYPES,
  placement.PROJECTS,
  placement.USERS,
  placement.RESOURCE_CLASSES,
  placement.TRAITS,
  placement.RESOURCE_PROVIDER_TRAITS,
  placement.PLACEMENT_AGGREGATES,
  placement.RESOURCE_PROVIDER_AGGREGATES,
]

/** Every table cloudctl reads, per database kind, in creation order (foreign keys point backwards). */
export const NOVA_API_READ_TABLES: TableSpec[] = [
  api.CELL_MAPPINGS,
  api.HOST_MAPPINGS,
  api.INSTANCE_MAPPINGS,
  api.FLAVORS,
  api.FLAVOR_EXTRA_SPECS,
  api.AGGREGATES,
  api.AGGREGATE_HOSTS,
  api.AGGREGATE_METADATA,
  api.REQUEST_SPECS,
  api.BUILD_REQUESTS,
  api.INSTANCE_GROUPS,
  api.INSTANCE_GROUP_MEMBER,
  api.INSTANCE_GROUP_POLICY,
]
export const NOVA_CELL_READ_TABLES: TableSpec[] = [cell.SERVICES, cell.COMPUTE_NODES, cell.INSTANCES, cell.INSTANCE_EXTRA, cell.MIGRATIONS]
export const PLACEMENT_READ_TABLES: TableSpec[] = [
  placement.RESOURCE_PROVIDERS,
  placement.INVENTORIES,
  placement.ALLOCATIONS,
  placement.CONSUMER_TYPES,
  placement.CONSUMERS,
  placement.PROJECTS,
  placement.USERS,
  placement.RESOURCE_CLASSES,
  placement.TRAITS,
  placement.RESOURCE_PROVIDER_TRAITS,
  placement.PLACEMENT_AGGREGATES,
  placement.RESOURCE_PROVIDER_AGGREGATES,
]
