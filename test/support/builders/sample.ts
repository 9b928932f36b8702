/**
 * The builder family for capture round trips: one small snapshot covering every table with the edge
 * values a consistent CloudBuilder cloud never produces (soft-deleted rows, NULL in nullable
 * columns, FLOAT ratios, non-ASCII text, nested providers, a custom resource class), so that every
 * column's conversion is exercised. Rows are in capture order (cells by id, rows by primary key) so
 * that a round trip compares with toEqual. Written row by row on purpose: the values are the test.
 */
import {readFileSync} from 'node:fs'

import {CELL0_UUID, emptySnapshot, type Snapshot} from '../../../src/lib/domain/snapshot.js'

const blob = (name: string): string => JSON.stringify(JSON.parse(readFileSync(new URL(`../../fixtures/blobs/${name}`, import.meta.url), 'utf8')))

export const CELL1_UUID = '11111111-1111-4111-8111-111111111111'
export const CELL2_UUID = '22222222-2222-4222-8222-222222222222'
/** FLOAT 0.9 as MySQL stores it, widened to double. */
export const F09 = 0.8999999761581421
/** FLOAT 1.1 as stored. */
export const F11 = 1.100000023841858

const uuid = (n: number): string => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, '0')}`

export function sampleSnapshot(): Snapshot {
  const s = emptySnapshot({kind: 'generated', description: 'hand-built sample'}, '2024-05-01T00:00:00.000Z')
  const hostNuma = blob('host-numa-topology.json')
  const instNuma = blob('instance-numa-dedicated.json')
  const instNumaShared = blob('instance-numa-shared.json')
  const flavorBlob = blob('instance-flavor.json')
  const spec = blob('request-spec.json')

  s.cells = [
    {id: 1, uuid: CELL0_UUID, name: 'cell0', database_connection: null, transport_url: 'none:///', disabled: false, is_cell0: true, status: 'available'},
    {
      id: 2,
      uuid: CELL1_UUID,
      name: 'cell1',
      database_connection: null,
      transport_url: 'rabbit://nova:***@mq1:5672/',
      disabled: false,
      is_cell0: false,
      status: 'available',
    },
    {id: 3, uuid: CELL2_UUID, name: 'cell2', database_connection: null, transport_url: null, disabled: true, is_cell0: false, status: 'available'},
  ]

  // ---------------------------------------------------------------- nova_api
  s.nova_api.host_mappings = [
    {id: 1, cell_id: 2, host: 'cmp1'},
    {id: 2, cell_id: 2, host: 'cmp2'},
    {id: 5, cell_id: 3, host: 'cmp3'},
  ]
  s.nova_api.instance_mappings = [
    {id: 1, instance_uuid: uuid(1), cell_id: 2, project_id: 'p1', user_id: 'u1', queued_for_delete: false, created_at: '2024-01-01 10:00:00'},
    {id: 2, instance_uuid: uuid(2), cell_id: 2, project_id: 'p1', user_id: null, queued_for_delete: true, created_at: '2024-01-02 10:00:00'},
    {id: 3, instance_uuid: uuid(3), cell_id: 3, project_id: 'p2', user_id: 'u2', queued_for_delete: null, created_at: null},
    {id: 4, instance_uuid: uuid(4), cell_id: 1, project_id: 'p2', user_id: 'u2', queued_for_delete: false, created_at: '2024-01-03 00:00:01'},
    {id: 5, instance_uuid: uuid(5), cell_id: null, project_id: 'p3', user_id: 'u3', queued_for_delete: false, created_at: '2024-01-04 00:00:00'},
    {
      id: 6,
      instance_uuid: '00000000-0000-0000-0000-000000000000',
      cell_id: null,
      project_id: 'INSTANCE_MIGRATION_MARKER',
      user_id: null,
      queued_for_delete: false,
      created_at: null,
    },
  ]
  s.nova_api.flavors = [
    {
      id: 1,
      flavorid: '1',
      name: 'm1.small',
      memory_mb: 2048,
      vcpus: 1,
      swap: 0,
      root_gb: 20,
      ephemeral_gb: 0,
      rxtx_factor: 1,
      vcpu_weight: null,
      disabled: false,
      is_public: true,
      description: null,
      extra_specs: {},
    },
    {
      id: 5,
      flavorid: 'm1.pinned',
      name: 'm1.pinned',
      memory_mb: 2048,
      vcpus: 2,
      swap: 512,
      root_gb: 20,
      ephemeral_gb: null,
      rxtx_factor: F11,
      vcpu_weight: 0,
      disabled: null,
      is_public: false,
      description: 'pinned — dédié',
      extra_specs: {
        'hw:cpu_policy': 'dedicated',
        'resources:CUSTOM_GOLD': '1',
        'trait:HW_CPU_X86_AVX2': 'required',
        'aggregate_instance_extra_specs:ssd': 'true',
      },
    },
  ]
  s.nova_api.aggregates = [
    {id: 1, uuid: uuid(901), name: 'ssd', hosts: ['cmp1', 'cmp2'], metadata: {ssd: 'true', availability_zone: 'az1'}},
    {id: 2, uuid: null, name: null, hosts: [], metadata: {}},
    {id: 3, uuid: uuid(903), name: 'gpu', hosts: ['cmp3'], metadata: {}},
  ]
  s.nova_api.build_requests = [
    {id: 1, instance_uuid: uuid(5), project_id: 'p3', created_at: '2024-01-04 00:00:00'},
    {id: 2, instance_uuid: null, project_id: 'p3', created_at: null},
  ]
  s.nova_api.request_specs = [
    {instance_uuid: uuid(1), spec},
    {instance_uuid: uuid(5), spec: '{"nova_object.name": "RequestSpec"}'},
  ]
  s.nova_api.instance_groups = [
    {
      id: 1,
      uuid: uuid(801),
      name: 'anti',
      project_id: 'p1',
      user_id: 'u1',
      policies: [{policy: 'anti-affinity', rules: '{"max_server_per_host": 1}'}],
      members: [uuid(1), uuid(2)],
    },
    {
      id: 2,
      uuid: uuid(802),
      name: null,
      project_id: null,
      user_id: null,
      policies: [
        {policy: 'soft-affinity', rules: null},
        {policy: null, rules: null},
      ],
      members: [],
    },
  ]

  // ---------------------------------------------------------------- cells
  const svc = (
    cell: string,
    id: number,
    host: string | null,
    binary: string,
    extra: Partial<Snapshot['nova']['services'][number]> = {},
  ): Snapshot['nova']['services'][number] => ({
    cell_uuid: cell,
    id,
    uuid: uuid(100 + id + (cell === CELL2_UUID ? 50 : cell === CELL0_UUID ? 80 : 0)),
    host,
    binary,
    topic: binary === 'nova-compute' ? 'compute' : null,
    report_count: 42,
    disabled: false,
    disabled_reason: null,
    forced_down: false,
    last_seen_up: '2024-05-01 11:59:50',
    version: 61,
    deleted: 0,
    deleted_at: null,
    created_at: '2024-01-01 00:00:00',
    updated_at: '2024-05-01 11:59:50',
    ...extra,
  })
  s.nova.services = [
    svc(CELL0_UUID, 1, 'ctl1', 'nova-conductor', {uuid: null, version: null, last_seen_up: null, updated_at: null}),
    svc(CELL1_UUID, 1, 'cmp1', 'nova-compute'),
    svc(CELL1_UUID, 2, 'cmp2', 'nova-compute', {disabled: true, disabled_reason: 'maintenance', forced_down: null}),
    svc(CELL1_UUID, 3, 'cmp-old', 'nova-compute', {deleted: 3, deleted_at: '2024-02-01 08:00:00'}),
    svc(CELL2_UUID, 1, 'cmp3', 'nova-compute', {report_count: 0, disabled: null}),
  ]
  const cn = (
    cell: string,
    id: number,
    host: string,
    extra: Partial<Snapshot['nova']['compute_nodes'][number]> = {},
  ): Snapshot['nova']['compute_nodes'][number] => ({
    cell_uuid: cell,
    id,
    uuid: uuid(200 + id + (cell === CELL2_UUID ? 50 : 0)),
    service_id: id,
    host,
    hypervisor_hostname: `${host}.example.org`,
    hypervisor_type: 'QEMU',
    hypervisor_version: 7002000,
    host_ip: '10.0.0.1',
    vcpus: 8,
    memory_mb: 32768,
    local_gb: 100,
    vcpus_used: 2,
    memory_mb_used: 4096,
    local_gb_used: 40,
    free_ram_mb: 28672,
    free_disk_gb: 60,
    disk_available_least: 55,
    current_workload: 0,
    running_vms: 1,
    cpu_allocation_ratio: 16,
    ram_allocation_ratio: 1.5,
    disk_allocation_ratio: F09,
    cpu_info:
      '{"arch": "x86_64", "model": "Cascadelake-Server", "vendor": "Intel", "topology": {"cells": 2, "sockets": 1, "cores": 4, "threads": 1}, "features": ["avx2"]}',
    supported_instances: '[["x86_64", "kvm", "hvm"]]',
    pci_stats:
      '{"nova_object.name": "PciDevicePoolList", "nova_object.namespace": "nova", "nova_object.version": "1.1", "nova_object.data": {"objects": []}, "nova_object.changes": ["objects"]}',
    stats: '{"failed_builds": "0", "num_instances": "1", "num_vm_active": "1"}',
    numa_topology: hostNuma,
    mapped: 1,
    deleted: 0,
    deleted_at: null,
    created_at: '2024-01-01 00:00:00',
    updated_at: '2024-05-01 11:59:00',
    ...extra,
  })
  s.nova.compute_nodes = [
    cn(CELL1_UUID, 1, 'cmp1'),
    cn(CELL1_UUID, 2, 'cmp2', {
      cpu_allocation_ratio: null,
      ram_allocation_ratio: null,
      disk_allocation_ratio: null,
      numa_topology: null,
      pci_stats: null,
      stats: null,
      supported_instances: null,
      mapped: 0,
      host_ip: null,
      free_ram_mb: null,
      free_disk_gb: null,
      disk_available_least: null,
      current_workload: null,
      running_vms: null,
    }),
    cn(CELL1_UUID, 3, 'cmp-old', {deleted: 3, deleted_at: '2024-02-01 08:00:00', uuid: null, service_id: null, mapped: null}),
    cn(CELL2_UUID, 1, 'cmp3', {hypervisor_type: 'ironic', cpu_allocation_ratio: 0.5}),
  ]
  const inst = (cell: string, id: number, n: number, extra: Partial<Snapshot['nova']['instances'][number]> = {}): Snapshot['nova']['instances'][number] => ({
    cell_uuid: cell,
    id,
    uuid: uuid(n),
    host: 'cmp1',
    node: 'cmp1.example.org',
    vm_state: 'active',
    task_state: null,
    power_state: 1,
    project_id: 'p1',
    user_id: 'u1',
    instance_type_id: 5,
    vcpus: 2,
    memory_mb: 2048,
    root_gb: 20,
    ephemeral_gb: 0,
    availability_zone: 'az1',
    display_name: `vm-${n}`,
    image_ref: uuid(700),
    os_type: null,
    architecture: 'x86_64',
    launched_at: '2024-01-01 10:01:00',
    terminated_at: null,
    created_at: '2024-01-01 10:00:00',
    updated_at: '2024-01-01 10:01:00',
    deleted: 0,
    deleted_at: null,
    hidden: false,
    extra: {numa_topology: instNuma, pci_requests: '[]', flavor: flavorBlob},
    ...extra,
  })
  s.nova.instances = [
    inst(CELL0_UUID, 1, 4, {
      host: null,
      node: null,
      vm_state: 'error',
      power_state: 0,
      launched_at: null,
      extra: {numa_topology: null, pci_requests: null, flavor: flavorBlob},
    }),
    inst(CELL1_UUID, 1, 1),
    inst(CELL1_UUID, 2, 2, {
      host: 'cmp2',
      node: 'cmp2.example.org',
      task_state: 'deleting',
      display_name: 'café ünïcode',
      hidden: null,
      extra: {numa_topology: instNumaShared, pci_requests: null, flavor: null},
    }),
    inst(CELL1_UUID, 7, 6, {deleted: 7, deleted_at: '2024-03-01 00:00:00', terminated_at: '2024-03-01 00:00:00', vm_state: 'deleted', extra: null}),
    inst(CELL1_UUID, 8, 7, {deleted: 8, deleted_at: '2024-03-02 00:00:00', vm_state: 'deleted', host: 'cmp-old', node: 'cmp-old.example.org'}),
    inst(CELL1_UUID, 9, 8, {
      host: null,
      node: null,
      vcpus: null,
      memory_mb: null,
      root_gb: null,
      ephemeral_gb: null,
      instance_type_id: null,
      project_id: null,
      user_id: null,
      availability_zone: null,
      display_name: null,
      image_ref: null,
      architecture: null,
      power_state: null,
      vm_state: null,
      created_at: null,
      updated_at: null,
      hidden: true,
      extra: null,
    }),
    inst(CELL2_UUID, 1, 3, {host: 'cmp3', node: 'cmp3.example.org', project_id: 'p2', user_id: 'u2', instance_type_id: 1, vcpus: 1}),
  ]
  s.nova.migrations = [
    {
      cell_uuid: CELL1_UUID,
      id: 1,
      uuid: uuid(601),
      instance_uuid: uuid(2),
      source_compute: 'cmp1',
      dest_compute: 'cmp2',
      dest_host: '10.0.0.2',
      source_node: 'cmp1.example.org',
      dest_node: 'cmp2.example.org',
      status: 'finished',
      migration_type: 'resize',
      old_instance_type_id: 1,
      new_instance_type_id: 5,
      hidden: false,
      cross_cell_move: false,
      deleted: 0,
      created_at: '2024-04-01 00:00:00',
      updated_at: '2024-04-01 00:05:00',
    },
    {
      cell_uuid: CELL1_UUID,
      id: 3,
      uuid: null,
      instance_uuid: null,
      source_compute: null,
      dest_compute: null,
      dest_host: null,
      source_node: null,
      dest_node: null,
      status: null,
      migration_type: null,
      old_instance_type_id: null,
      new_instance_type_id: null,
      hidden: null,
      cross_cell_move: null,
      deleted: 0,
      created_at: null,
      updated_at: null,
    },
    {
      cell_uuid: CELL2_UUID,
      id: 1,
      uuid: uuid(611),
      instance_uuid: uuid(3),
      source_compute: 'cmp4',
      dest_compute: 'cmp3',
      dest_host: null,
      source_node: 'cmp4.example.org',
      dest_node: 'cmp3.example.org',
      status: 'running',
      migration_type: 'live-migration',
      old_instance_type_id: 1,
      new_instance_type_id: 1,
      hidden: false,
      cross_cell_move: true,
      deleted: 0,
      created_at: '2024-04-02 00:00:00',
      updated_at: null,
    },
  ]

  // ---------------------------------------------------------------- placement
  const p = s.placement
  p.resource_providers = [
    {id: 1, uuid: uuid(201), name: 'cmp1.example.org', generation: 7, root_provider_id: 1, parent_provider_id: null},
    // nested: a NUMA child listed before its own child, and a grandchild
    {id: 2, uuid: uuid(202), name: 'cmp2.example.org', generation: 3, root_provider_id: 2, parent_provider_id: null},
    {id: 3, uuid: uuid(301), name: 'cmp2.example.org_NUMA0', generation: 1, root_provider_id: 2, parent_provider_id: 2},
    {id: 4, uuid: uuid(302), name: 'cmp2.example.org_NUMA0_VF', generation: null, root_provider_id: 2, parent_provider_id: 3},
    {id: 5, uuid: uuid(251), name: 'cmp3.example.org', generation: 0, root_provider_id: 5, parent_provider_id: null},
    {id: 6, uuid: uuid(399), name: null, generation: 1, root_provider_id: null, parent_provider_id: null},
  ]
  const inv = (
    id: number,
    rp: number,
    rc: number,
    total: number,
    ratio: number,
    extra: Partial<Snapshot['placement']['inventories'][number]> = {},
  ): Snapshot['placement']['inventories'][number] => ({
    id,
    resource_provider_id: rp,
    resource_class_id: rc,
    total,
    reserved: 0,
    min_unit: 1,
    max_unit: total,
    step_size: 1,
    allocation_ratio: ratio,
    ...extra,
  })
  p.inventories = [
    inv(1, 1, 0, 8, 16),
    inv(2, 1, 1, 32768, 1.5, {reserved: 512}),
    inv(3, 1, 2, 100, F09),
    inv(4, 2, 0, 8, 4),
    inv(5, 3, 14, 4, 1),
    inv(6, 4, 4, 8, 1, {max_unit: 1}),
    inv(7, 5, 10001, 1, 1),
    inv(8, 5, 2, 1000, F11, {step_size: 10, min_unit: 10}),
  ]
  p.allocations = [
    {id: 1, resource_provider_id: 1, consumer_id: uuid(1), resource_class_id: 0, used: 2},
    {id: 2, resource_provider_id: 1, consumer_id: uuid(1), resource_class_id: 1, used: 2048},
    {id: 3, resource_provider_id: 1, consumer_id: uuid(1), resource_class_id: 2, used: 20},
    {id: 5, resource_provider_id: 3, consumer_id: uuid(2), resource_class_id: 14, used: 2},
    {id: 6, resource_provider_id: 4, consumer_id: uuid(2), resource_class_id: 4, used: 1},
    {id: 7, resource_provider_id: 5, consumer_id: uuid(3), resource_class_id: 10001, used: 1},
    // a migration record holding the source allocation
    {id: 8, resource_provider_id: 5, consumer_id: uuid(611), resource_class_id: 2, used: 20},
    // leaked: consumer of a deleted instance
    {id: 9, resource_provider_id: 1, consumer_id: uuid(7), resource_class_id: 0, used: 1},
  ]
  p.consumer_types = [
    {id: 1, name: 'INSTANCE'},
    {id: 2, name: 'MIGRATION'},
  ]
  p.projects = [
    {id: 1, external_id: 'p1'},
    {id: 2, external_id: 'p2'},
  ]
  p.users = [
    {id: 1, external_id: 'u1'},
    {id: 2, external_id: 'u2'},
  ]
  p.consumers = [
    {id: 1, uuid: uuid(1), project_id: 1, user_id: 1, generation: 1, consumer_type_id: 1},
    {id: 2, uuid: uuid(2), project_id: 1, user_id: 1, generation: 4, consumer_type_id: 1},
    {id: 3, uuid: uuid(3), project_id: 2, user_id: 2, generation: 0, consumer_type_id: null},
    {id: 4, uuid: uuid(611), project_id: 2, user_id: 2, generation: 1, consumer_type_id: 2},
    {id: 5, uuid: uuid(7), project_id: 1, user_id: 1, generation: 2, consumer_type_id: 1},
  ]
  p.resource_classes = [
    {id: 10000, name: 'CUSTOM_BAREMETAL_SMALL'},
    {id: 10001, name: 'CUSTOM_GOLD'},
  ]
  p.traits = [
    {id: 1, name: 'HW_CPU_X86_AVX2'},
    {id: 2, name: 'COMPUTE_STATUS_DISABLED'},
    {id: 3, name: 'CUSTOM_RACK_A'},
  ]
  // primary-key order: (trait_id, resource_provider_id)
  p.resource_provider_traits = [
    {resource_provider_id: 1, trait_id: 1},
    {resource_provider_id: 2, trait_id: 1},
    {resource_provider_id: 2, trait_id: 2},
    {resource_provider_id: 1, trait_id: 3},
    {resource_provider_id: 5, trait_id: 3},
  ]
  p.placement_aggregates = [
    {id: 1, uuid: uuid(901)},
    {id: 2, uuid: uuid(903)},
    {id: 3, uuid: null},
  ]
  // primary-key order: (resource_provider_id, aggregate_id)
  p.resource_provider_aggregates = [
    {resource_provider_id: 1, aggregate_id: 1},
    {resource_provider_id: 2, aggregate_id: 1},
    {resource_provider_id: 5, aggregate_id: 2},
    {resource_provider_id: 5, aggregate_id: 3},
  ]
  return s
}
