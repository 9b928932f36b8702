/**
 * The real Zed schemas (nova 26.2.2 / placement 8.0.0 on MariaDB 10.11), written from
 * /work/shared/reference/schema.md: every column with its type, nullability and default, every
 * unique key, index and foreign key listed there. Only the tables cloudctl reads or repairs.
 *
 * The tables a snapshot reads come from their specs (src/lib/domain/tables); the ones only repairs
 * touch are written out here. Tables are created in dependency order so that the foreign keys can be
 * declared inline.
 */
import {createTableDdl} from '../../src/lib/domain/tables/define.js'
import {NOVA_API_READ_TABLES, NOVA_CELL_READ_TABLES, PLACEMENT_READ_TABLES} from '../../src/lib/domain/tables/index.js'

const TS = '`created_at` datetime DEFAULT NULL,\n  `updated_at` datetime DEFAULT NULL'
const SOFT = `${TS},\n  \`deleted_at\` datetime DEFAULT NULL`
const TAIL = 'ENGINE=InnoDB DEFAULT CHARSET=utf8'

function table(name: string, body: string): string {
  return `CREATE TABLE \`${name}\` (\n  ${body.trim()}\n) ${TAIL}`
}

/** nova_api: cell and host/instance mappings, flavors, aggregates, build requests, request specs, groups. */
export function novaApiSchema(): string[] {
  return NOVA_API_READ_TABLES.map(createTableDdl)
}

/** A nova cell database (nova_cell0 and every cell have the same tables). */
export function novaCellSchema(): string[] {
  return [
    ...NOVA_CELL_READ_TABLES.map(createTableDdl),
    table(
      'instance_system_metadata',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`instance_uuid\` varchar(36) NOT NULL,
  \`key\` varchar(255) NOT NULL,
  \`value\` varchar(255) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  KEY \`instance_uuid\` (\`instance_uuid\`),
  CONSTRAINT \`instance_system_metadata_ibfk_1\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'pci_devices',
      `${SOFT},
  \`deleted\` int(11) DEFAULT NULL,
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`compute_node_id\` int(11) NOT NULL,
  \`address\` varchar(12) NOT NULL,
  \`product_id\` varchar(4) NOT NULL,
  \`vendor_id\` varchar(4) NOT NULL,
  \`dev_type\` varchar(8) NOT NULL,
  \`dev_id\` varchar(255) DEFAULT NULL,
  \`label\` varchar(255) NOT NULL,
  \`status\` varchar(36) NOT NULL,
  \`extra_info\` text DEFAULT NULL,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`request_id\` varchar(36) DEFAULT NULL,
  \`numa_node\` int(11) DEFAULT NULL,
  \`parent_addr\` varchar(12) DEFAULT NULL,
  \`uuid\` varchar(36) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_pci_devices0compute_node_id0address0deleted\` (\`compute_node_id\`,\`address\`,\`deleted\`),
  KEY \`ix_pci_devices_compute_node_id_deleted\` (\`compute_node_id\`,\`deleted\`),
  KEY \`ix_pci_devices_compute_node_id_parent_addr_deleted\` (\`compute_node_id\`,\`parent_addr\`,\`deleted\`),
  KEY \`ix_pci_devices_instance_uuid_deleted\` (\`instance_uuid\`,\`deleted\`),
  CONSTRAINT \`pci_devices_compute_node_id_fk\` FOREIGN KEY (\`compute_node_id\`) REFERENCES \`compute_nodes\` (\`id\`)`,
    ),
    table(
      'instance_faults',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`code\` int(11) NOT NULL,
  \`message\` varchar(255) DEFAULT NULL,
  \`details\` mediumtext DEFAULT NULL,
  \`host\` varchar(255) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  KEY \`instance_faults_host_idx\` (\`host\`),
  KEY \`instance_faults_instance_uuid_deleted_created_at_idx\` (\`instance_uuid\`,\`deleted\`,\`created_at\`),
  CONSTRAINT \`fk_instance_faults_instance_uuid\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    // What nova's instance_destroy soft-deletes (or deletes) with an instance: cells map-instances
    // does the same to the losing copy of a duplicate.
    table(
      'security_groups',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`name\` varchar(255) DEFAULT NULL,
  \`description\` varchar(255) DEFAULT NULL,
  \`user_id\` varchar(255) DEFAULT NULL,
  \`project_id\` varchar(255) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_security_groups0project_id0name0deleted\` (\`project_id\`,\`name\`,\`deleted\`)`,
    ),
    table(
      'security_group_instance_association',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`security_group_id\` int(11) DEFAULT NULL,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  KEY \`security_group_instance_association_instance_uuid_idx\` (\`instance_uuid\`),
  KEY \`security_group_id\` (\`security_group_id\`),
  CONSTRAINT \`security_group_instance_association_ibfk_1\` FOREIGN KEY (\`security_group_id\`) REFERENCES \`security_groups\` (\`id\`),
  CONSTRAINT \`security_group_instance_association_instance_uuid_fkey\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'instance_info_caches',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`network_info\` mediumtext DEFAULT NULL,
  \`instance_uuid\` varchar(36) NOT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_instance_info_caches0instance_uuid\` (\`instance_uuid\`),
  CONSTRAINT \`instance_info_caches_instance_uuid_fkey\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'instance_metadata',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`key\` varchar(255) DEFAULT NULL,
  \`value\` varchar(255) DEFAULT NULL,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  KEY \`instance_metadata_instance_uuid_idx\` (\`instance_uuid\`),
  CONSTRAINT \`instance_metadata_instance_uuid_fkey\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'block_device_mapping',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`device_name\` varchar(255) DEFAULT NULL,
  \`delete_on_termination\` tinyint(1) DEFAULT NULL,
  \`snapshot_id\` varchar(36) DEFAULT NULL,
  \`volume_id\` varchar(36) DEFAULT NULL,
  \`volume_size\` int(11) DEFAULT NULL,
  \`no_device\` tinyint(1) DEFAULT NULL,
  \`connection_info\` mediumtext DEFAULT NULL,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  \`source_type\` varchar(255) DEFAULT NULL,
  \`destination_type\` varchar(255) DEFAULT NULL,
  \`guest_format\` varchar(255) DEFAULT NULL,
  \`device_type\` varchar(255) DEFAULT NULL,
  \`disk_bus\` varchar(255) DEFAULT NULL,
  \`boot_index\` int(11) DEFAULT NULL,
  \`image_id\` varchar(36) DEFAULT NULL,
  \`tag\` varchar(255) DEFAULT NULL,
  \`attachment_id\` varchar(36) DEFAULT NULL,
  \`uuid\` varchar(36) DEFAULT NULL,
  \`volume_type\` varchar(255) DEFAULT NULL,
  \`encrypted\` tinyint(1) DEFAULT NULL,
  \`encryption_secret_uuid\` varchar(36) DEFAULT NULL,
  \`encryption_format\` varchar(128) DEFAULT NULL,
  \`encryption_options\` varchar(4096) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_block_device_mapping0uuid\` (\`uuid\`),
  KEY \`snapshot_id\` (\`snapshot_id\`),
  KEY \`block_device_mapping_instance_uuid_idx\` (\`instance_uuid\`),
  KEY \`volume_id\` (\`volume_id\`),
  KEY \`block_device_mapping_instance_uuid_device_name_idx\` (\`instance_uuid\`,\`device_name\`),
  KEY \`block_device_mapping_instance_uuid_volume_id_idx\` (\`instance_uuid\`,\`volume_id\`),
  CONSTRAINT \`block_device_mapping_instance_uuid_fkey\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'virtual_interfaces',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`address\` varchar(255) DEFAULT NULL,
  \`network_id\` int(11) DEFAULT NULL,
  \`uuid\` varchar(36) DEFAULT NULL,
  \`instance_uuid\` varchar(36) DEFAULT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  \`tag\` varchar(255) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_virtual_interfaces0address0deleted\` (\`address\`,\`deleted\`),
  KEY \`virtual_interfaces_network_id_idx\` (\`network_id\`),
  KEY \`virtual_interfaces_instance_uuid_fkey\` (\`instance_uuid\`),
  KEY \`virtual_interfaces_uuid_idx\` (\`uuid\`),
  CONSTRAINT \`virtual_interfaces_instance_uuid_fkey\` FOREIGN KEY (\`instance_uuid\`) REFERENCES \`instances\` (\`uuid\`)`,
    ),
    table(
      'instance_id_mappings',
      `${SOFT},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`uuid\` varchar(36) NOT NULL,
  \`deleted\` int(11) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  KEY \`ix_instance_id_mappings_uuid\` (\`uuid\`)`,
    ),
    table(
      'tags',
      `\`resource_id\` varchar(36) NOT NULL,
  \`tag\` varchar(80) NOT NULL,
  PRIMARY KEY (\`resource_id\`,\`tag\`),
  KEY \`tags_tag_idx\` (\`tag\`)`,
    ),
    table(
      'console_auth_tokens',
      `${TS},
  \`id\` int(11) NOT NULL AUTO_INCREMENT,
  \`token_hash\` varchar(255) NOT NULL,
  \`console_type\` varchar(255) NOT NULL,
  \`host\` varchar(255) NOT NULL,
  \`port\` int(11) NOT NULL,
  \`internal_access_path\` varchar(255) DEFAULT NULL,
  \`instance_uuid\` varchar(36) NOT NULL,
  \`expires\` int(11) NOT NULL,
  \`access_url_base\` varchar(255) DEFAULT NULL,
  PRIMARY KEY (\`id\`),
  UNIQUE KEY \`uniq_console_auth_tokens0token_hash\` (\`token_hash\`),
  KEY \`console_auth_tokens_token_hash_instance_uuid_idx\` (\`token_hash\`,\`instance_uuid\`),
  KEY \`console_auth_tokens_token_hash_idx\` (\`token_hash\`),
  KEY \`console_auth_tokens_host_expires_idx\` (\`host\`,\`expires\`),
  KEY \`console_auth_tokens_instance_uuid_idx\` (\`instance_uuid\`)`,
    ),
  ]
}

/** The placement database (or, on clouds older than Stein, the placement tables inside nova_api). */
export function placementSchema(): string[] {
  return PLACEMENT_READ_TABLES.map(createTableDdl)
}

/** Table names per database kind, in creation order (drop in reverse). */
export const NOVA_API_SCHEMA_TABLES = tableNames(novaApiSchema())
export const NOVA_CELL_SCHEMA_TABLES = tableNames(novaCellSchema())
export const PLACEMENT_SCHEMA_TABLES = tableNames(placementSchema())

function tableNames(statements: string[]): string[] {
  return statements.map((s) => /CREATE TABLE `([^`]+)`/.exec(s)?.[1] ?? '')
}
