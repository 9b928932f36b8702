/**
 * placement tables (placement 8.0.0, Zed), in creation order. Before Stein they live in nova_api.
 * Columns and keys are the real schema (/work/shared/reference/schema.md, test/db/schema.test.ts);
 * see define.ts for what is derived from them.
 */
import {defineTable, TIMESTAMPS} from './define.js'

export const RESOURCE_PROVIDERS = defineTable({
  name: 'resource_providers',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    uuid: 'varchar(36) NOT NULL',
    name: 'varchar(200) DEFAULT NULL',
    generation: 'int(11) DEFAULT NULL',
    root_provider_id: 'int(11) DEFAULT NULL',
    parent_provider_id: 'int(11) DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_resource_providers0name` (`name`)',
    'UNIQUE KEY `uniq_resource_providers0uuid` (`uuid`)',
    'KEY `resource_providers_name_idx` (`name`)',
    'KEY `resource_providers_parent_provider_id_idx` (`parent_provider_id`)',
    'KEY `resource_providers_root_provider_id_idx` (`root_provider_id`)',
    'KEY `resource_providers_uuid_idx` (`uuid`)',
    'CONSTRAINT `resource_providers_ibfk_1` FOREIGN KEY (`parent_provider_id`) REFERENCES `resource_providers` (`id`)',
    'CONSTRAINT `resource_providers_ibfk_2` FOREIGN KEY (`root_provider_id`) REFERENCES `resource_providers` (`id`)',
  ],
  row: ['id', 'uuid', 'name', 'generation', 'root_provider_id', 'parent_provider_id'],
})

export const INVENTORIES = defineTable({
  name: 'inventories',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    resource_provider_id: 'int(11) NOT NULL',
    resource_class_id: 'int(11) NOT NULL',
    total: 'int(11) NOT NULL',
    reserved: 'int(11) NOT NULL',
    min_unit: 'int(11) NOT NULL',
    max_unit: 'int(11) NOT NULL',
    step_size: 'int(11) NOT NULL',
    allocation_ratio: 'float NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_inventories0resource_provider_resource_class` (`resource_provider_id`,`resource_class_id`)',
    'KEY `inventories_resource_class_id_idx` (`resource_class_id`)',
    'KEY `inventories_resource_provider_id_idx` (`resource_provider_id`)',
    'KEY `inventories_resource_provider_resource_class_idx` (`resource_provider_id`,`resource_class_id`)',
  ],
  row: ['id', 'resource_provider_id', 'resource_class_id', 'total', 'reserved', 'min_unit', 'max_unit', 'step_size', 'allocation_ratio'],
})

export const ALLOCATIONS = defineTable({
  name: 'allocations',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    resource_provider_id: 'int(11) NOT NULL',
    consumer_id: 'varchar(36) NOT NULL',
    resource_class_id: 'int(11) NOT NULL',
    used: 'int(11) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'KEY `allocations_consumer_id_idx` (`consumer_id`)',
    'KEY `allocations_resource_class_id_idx` (`resource_class_id`)',
    'KEY `allocations_resource_provider_class_used_idx` (`resource_provider_id`,`resource_class_id`,`used`)',
  ],
  row: ['id', 'resource_provider_id', 'consumer_id', 'resource_class_id', 'used'],
  // placement writes a consumer's allocations (a row per provider and class) in one transaction.
  runs: ['consumer_id'],
})

export const CONSUMER_TYPES = defineTable({
  name: 'consumer_types',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    name: 'varchar(255) NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_consumer_types0name` (`name`)'],
  row: ['id', 'name'],
})

export const CONSUMERS = defineTable({
  name: 'consumers',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    uuid: 'varchar(36) NOT NULL',
    project_id: 'int(11) NOT NULL',
    user_id: 'int(11) NOT NULL',
    generation: 'int(11) NOT NULL DEFAULT 0',
    consumer_type_id: 'int(11) DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_consumers0uuid` (`uuid`)',
    'KEY `consumers_consumer_type_id_idx` (`consumer_type_id`)',
    'KEY `consumers_project_id_user_id_uuid_idx` (`project_id`,`user_id`,`uuid`)',
    'KEY `consumers_project_id_uuid_idx` (`project_id`,`uuid`)',
    'CONSTRAINT `consumers_ibfk_1` FOREIGN KEY (`consumer_type_id`) REFERENCES `consumer_types` (`id`)',
  ],
  row: ['id', 'uuid', 'project_id', 'user_id', 'generation', 'consumer_type_id'],
})

export const PROJECTS = defineTable({
  name: 'projects',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    external_id: 'varchar(255) NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_projects0external_id` (`external_id`)'],
  row: ['id', 'external_id'],
})

export const USERS = defineTable({
  name: 'users',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    external_id: 'varchar(255) NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_users0external_id` (`external_id`)'],
  row: ['id', 'external_id'],
})

export const RESOURCE_CLASSES = defineTable({
  name: 'resource_classes',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    name: 'varchar(255) NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_resource_classes0name` (`name`)'],
  row: ['id', 'name'],
})

export const TRAITS = defineTable({
  name: 'traits',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    name: 'varchar(255) NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_traits0name` (`name`)'],
  row: ['id', 'name'],
})

export const RESOURCE_PROVIDER_TRAITS = defineTable({
  name: 'resource_provider_traits',
  columns: {
    ...TIMESTAMPS,
    trait_id: 'int(11) NOT NULL',
    resource_provider_id: 'int(11) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`trait_id`,`resource_provider_id`)',
    'KEY `resource_provider_traits_resource_provider_trait_idx` (`resource_provider_id`,`trait_id`)',
    'CONSTRAINT `resource_provider_traits_ibfk_1` FOREIGN KEY (`resource_provider_id`) REFERENCES `resource_providers` (`id`)',
    'CONSTRAINT `resource_provider_traits_ibfk_2` FOREIGN KEY (`trait_id`) REFERENCES `traits` (`id`)',
  ],
  row: ['resource_provider_id', 'trait_id'],
})

export const PLACEMENT_AGGREGATES = defineTable({
  name: 'placement_aggregates',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    uuid: 'varchar(36) DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_placement_aggregates0uuid` (`uuid`)', 'KEY `ix_placement_aggregates_uuid` (`uuid`)'],
  row: ['id', 'uuid'],
})

export const RESOURCE_PROVIDER_AGGREGATES = defineTable({
  name: 'resource_provider_aggregates',
  columns: {
    ...TIMESTAMPS,
    resource_provider_id: 'int(11) NOT NULL',
    aggregate_id: 'int(11) NOT NULL',
  },
  keys: ['PRIMARY KEY (`resource_provider_id`,`aggregate_id`)', 'KEY `resource_provider_aggregates_aggregate_id_idx` (`aggregate_id`)'],
  row: ['resource_provider_id', 'aggregate_id'],
})
