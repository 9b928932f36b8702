/**
 * nova_api tables the snapshot reads (Zed, nova 26.2.2 on MariaDB 10.11), in creation order.
 * Columns and keys are the real schema (/work/shared/reference/schema.md, test/db/schema.test.ts);
 * see define.ts for what is derived from them.
 */
import {defineTable, extra, TIMESTAMPS} from './define.js'

export const CELL_MAPPINGS = defineTable({
  name: 'cell_mappings',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    uuid: 'varchar(36) NOT NULL',
    name: 'varchar(255) DEFAULT NULL',
    transport_url: 'text DEFAULT NULL',
    database_connection: 'text DEFAULT NULL',
    disabled: 'tinyint(1) DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_cell_mappings0uuid` (`uuid`)', 'KEY `uuid_idx` (`uuid`)'],
  row: ['id', 'uuid', 'name', 'transport_url', 'database_connection', 'disabled'],
})

export const HOST_MAPPINGS = defineTable({
  name: 'host_mappings',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    cell_id: 'int(11) NOT NULL',
    host: 'varchar(255) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_host_mappings0host` (`host`)',
    'KEY `cell_id` (`cell_id`)',
    'KEY `host_idx` (`host`)',
    'CONSTRAINT `host_mappings_ibfk_1` FOREIGN KEY (`cell_id`) REFERENCES `cell_mappings` (`id`)',
  ],
  row: ['id', 'cell_id', 'host'],
})

export const INSTANCE_MAPPINGS = defineTable({
  name: 'instance_mappings',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    instance_uuid: 'varchar(36) NOT NULL',
    cell_id: 'int(11) DEFAULT NULL',
    project_id: 'varchar(255) NOT NULL',
    queued_for_delete: 'tinyint(1) DEFAULT NULL',
    user_id: 'varchar(255) DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_instance_mappings0instance_uuid` (`instance_uuid`)',
    'KEY `cell_id` (`cell_id`)',
    'KEY `instance_mappings_user_id_project_id_idx` (`user_id`,`project_id`)',
    'KEY `instance_uuid_idx` (`instance_uuid`)',
    'KEY `project_id_idx` (`project_id`)',
    'CONSTRAINT `instance_mappings_ibfk_1` FOREIGN KEY (`cell_id`) REFERENCES `cell_mappings` (`id`)',
  ],
  row: ['id', 'instance_uuid', 'cell_id', 'project_id', 'user_id', 'queued_for_delete', 'created_at'],
  repeats: ['project_id', 'user_id'],
})

export const FLAVORS = defineTable({
  name: 'flavors',
  columns: {
    ...TIMESTAMPS,
    name: 'varchar(255) NOT NULL',
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    memory_mb: 'int(11) NOT NULL',
    vcpus: 'int(11) NOT NULL',
    swap: 'int(11) NOT NULL',
    vcpu_weight: 'int(11) DEFAULT NULL',
    flavorid: 'varchar(255) NOT NULL',
    rxtx_factor: 'float DEFAULT NULL',
    root_gb: 'int(11) DEFAULT NULL',
    ephemeral_gb: 'int(11) DEFAULT NULL',
    disabled: 'tinyint(1) DEFAULT NULL',
    is_public: 'tinyint(1) DEFAULT NULL',
    description: 'text DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_flavors0flavorid` (`flavorid`)', 'UNIQUE KEY `uniq_flavors0name` (`name`)'],
  row: [
    'id',
    'flavorid',
    'name',
    'memory_mb',
    'vcpus',
    'swap',
    'root_gb',
    'ephemeral_gb',
    'rxtx_factor',
    'vcpu_weight',
    'disabled',
    'is_public',
    'description',
  ],
  extras: {extra_specs: extra<Record<string, string>>('o')},
})

export const FLAVOR_EXTRA_SPECS = defineTable({
  name: 'flavor_extra_specs',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    flavor_id: 'int(11) NOT NULL',
    key: 'varchar(255) NOT NULL',
    value: 'varchar(255) DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_flavor_extra_specs0flavor_id0key` (`flavor_id`,`key`)',
    'KEY `flavor_extra_specs_flavor_id_key_idx` (`flavor_id`,`key`)',
    'CONSTRAINT `flavor_extra_specs_ibfk_1` FOREIGN KEY (`flavor_id`) REFERENCES `flavors` (`id`)',
  ],
  row: ['flavor_id', 'key', 'value'],
})

export const AGGREGATES = defineTable({
  name: 'aggregates',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    uuid: 'varchar(36) DEFAULT NULL',
    name: 'varchar(255) DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_aggregate0name` (`name`)', 'KEY `aggregate_uuid_idx` (`uuid`)'],
  row: ['id', 'uuid', 'name'],
  extras: {hosts: extra<string[]>('a'), metadata: extra<Record<string, string>>('o')},
})

export const AGGREGATE_HOSTS = defineTable({
  name: 'aggregate_hosts',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    host: 'varchar(255) DEFAULT NULL',
    aggregate_id: 'int(11) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_aggregate_hosts0host0aggregate_id` (`host`,`aggregate_id`)',
    'KEY `aggregate_id` (`aggregate_id`)',
    'CONSTRAINT `aggregate_hosts_ibfk_1` FOREIGN KEY (`aggregate_id`) REFERENCES `aggregates` (`id`)',
  ],
  row: ['aggregate_id', 'host'],
})

export const AGGREGATE_METADATA = defineTable({
  name: 'aggregate_metadata',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    aggregate_id: 'int(11) NOT NULL',
    key: 'varchar(255) NOT NULL',
    value: 'varchar(255) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_aggregate_metadata0aggregate_id0key` (`aggregate_id`,`key`)',
    'KEY `aggregate_metadata_key_idx` (`key`)',
    'CONSTRAINT `aggregate_metadata_ibfk_1` FOREIGN KEY (`aggregate_id`) REFERENCES `aggregates` (`id`)',
  ],
  row: ['aggregate_id', 'key', 'value'],
})

export const REQUEST_SPECS = defineTable({
  name: 'request_specs',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    instance_uuid: 'varchar(36) NOT NULL',
    spec: 'mediumtext NOT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_request_specs0instance_uuid` (`instance_uuid`)', 'KEY `request_spec_instance_uuid_idx` (`instance_uuid`)'],
  row: ['instance_uuid', 'spec'],
})

export const BUILD_REQUESTS = defineTable({
  name: 'build_requests',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    project_id: 'varchar(255) NOT NULL',
    instance_uuid: 'varchar(36) DEFAULT NULL',
    instance: 'mediumtext DEFAULT NULL',
    block_device_mappings: 'mediumtext DEFAULT NULL',
    tags: 'text DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'UNIQUE KEY `uniq_build_requests0instance_uuid` (`instance_uuid`)',
    'KEY `build_requests_instance_uuid_idx` (`instance_uuid`)',
    'KEY `build_requests_project_id_idx` (`project_id`)',
  ],
  row: ['id', 'instance_uuid', 'project_id', 'created_at'],
})

export const INSTANCE_GROUPS = defineTable({
  name: 'instance_groups',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    user_id: 'varchar(255) DEFAULT NULL',
    project_id: 'varchar(255) DEFAULT NULL',
    uuid: 'varchar(36) NOT NULL',
    name: 'varchar(255) DEFAULT NULL',
  },
  keys: ['PRIMARY KEY (`id`)', 'UNIQUE KEY `uniq_instance_groups0uuid` (`uuid`)'],
  row: ['id', 'uuid', 'name', 'project_id', 'user_id'],
  extras: {policies: extra<Array<{policy: string | null; rules: string | null}>>('a'), members: extra<string[]>('a')},
})

export const INSTANCE_GROUP_MEMBER = defineTable({
  name: 'instance_group_member',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    instance_uuid: 'varchar(255) DEFAULT NULL',
    group_id: 'int(11) NOT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'KEY `group_id` (`group_id`)',
    'KEY `instance_group_member_instance_idx` (`instance_uuid`)',
    'CONSTRAINT `instance_group_member_ibfk_1` FOREIGN KEY (`group_id`) REFERENCES `instance_groups` (`id`)',
  ],
  row: ['group_id', 'instance_uuid'],
})

export const INSTANCE_GROUP_POLICY = defineTable({
  name: 'instance_group_policy',
  columns: {
    ...TIMESTAMPS,
    id: 'int(11) NOT NULL AUTO_INCREMENT',
    policy: 'varchar(255) DEFAULT NULL',
    group_id: 'int(11) NOT NULL',
    rules: 'text DEFAULT NULL',
  },
  keys: [
    'PRIMARY KEY (`id`)',
    'KEY `group_id` (`group_id`)',
    'KEY `instance_group_policy_policy_idx` (`policy`)',
    'CONSTRAINT `instance_group_policy_ibfk_1` FOREIGN KEY (`group_id`) REFERENCES `instance_groups` (`id`)',
  ],
  row: ['group_id', 'policy', 'rules'],
})
