/**
 * One table per host filter. Each row is a host (as nova's HostState would hold it), a request and
 * the outcome nova's filter (nova/scheduler/filters/*.py, Zed) gives; the pre-placement RamFilter /
 * CoreFilter / DiskFilter follow the Stein code that seeds 002/003 walk through.
 */
import {describe, expect, it} from 'vitest'

import type {SchedulerConfig} from '../../src/lib/engine/config.js'
import {extraSpecMatch, FILTERS, resolveFilters} from '../../src/lib/engine/filters.js'
import type {HostState} from '../../src/lib/engine/host-state.js'
import type {RequestSpec, ServerGroupSpec} from '../../src/lib/engine/request-spec.js'
import {aggregate, filterContext, flavor, hostState, numaCell, requestSpec, service, topology} from '../support/builders.js'

interface Row {
  name: string
  host?: Partial<HostState>
  spec?: Partial<RequestSpec>
  cfg?: Partial<SchedulerConfig>
  /** null = passes, else the reason's label */
  expect: string | null
}

function run(filter: string, rows: Row[]): void {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, r) => {
    const f = FILTERS[filter]
    expect(f).toBeDefined()
    const got = f?.hostPasses(hostState(r.host), requestSpec(r.spec), filterContext(r.cfg))
    expect(got === null || got === undefined ? null : got.label).toBe(r.expect)
  })
}

const withSpecs = (extra_specs: Record<string, string>): Partial<RequestSpec> => ({flavor: flavor({extra_specs}), extraSpecs: extra_specs})
const group = (policy: string, members: string[], over: Partial<ServerGroupSpec> = {}): ServerGroupSpec => ({
  uuid: 'g1',
  name: 'grp',
  policy,
  rules: {},
  members: new Set(members),
  hosts: [],
  ...over,
})

describe('ComputeFilter (service enabled and up: |now - (last_seen_up or created_at)| <= service_down_time)', () => {
  run('ComputeFilter', [
    {name: 'enabled, heard from now', expect: null},
    {name: 'disabled', host: {service: service({disabled: true, disabled_reason: 'maint'})}, expect: 'disabled'},
    {name: 'forced down', host: {service: service({forced_down: true})}, expect: 'compute service down'},
    {name: 'last seen exactly service_down_time ago', host: {service: service({last_seen_up: '2024-06-03 05:02:40'})}, expect: null},
    {name: 'last seen 61 s ago', host: {service: service({last_seen_up: '2024-06-03 05:02:39'})}, expect: 'compute service down'},
    {name: 'last seen 61 s in the future (abs)', host: {service: service({last_seen_up: '2024-06-03 05:04:41'})}, expect: 'compute service down'},
    {name: 'longer service_down_time', host: {service: service({last_seen_up: '2024-06-03 05:02:39'})}, cfg: {service_down_time: 120}, expect: null},
    {name: 'never seen up: created_at is the heartbeat', host: {service: service({last_seen_up: null, created_at: '2024-06-03 05:03:30'})}, expect: null},
    {
      name: 'never seen up: updated_at is not consulted',
      host: {service: service({last_seen_up: null, created_at: '2024-01-01 00:00:00', updated_at: '2024-06-03 05:03:40'})},
      expect: 'compute service down',
    },
    {name: 'no nova-compute service row', host: {service: undefined}, expect: 'no compute service'},
  ])
})

describe('extra_specs_ops.match', () => {
  it.each([
    ['4', '= 4', true], // "=" means >=
    ['8', '= 4', true],
    ['2', '= 4', false],
    ['4', '== 4.0', true],
    ['4', '!= 4', false],
    ['4', '>= 5', false],
    ['4', '<= 5', true],
    ['1_000', '>= 999', true], // Python float() accepts underscores
    ['0x10', '>= 1', false], // ... but not hex: ValueError -> no match
    ['avx avx2', '<in> avx2', true],
    ['avx', '<in> avx2', false],
    ['avx avx2 sse', '<all-in> avx2 sse', true],
    ['avx sse', '<all-in> avx2 sse', false],
    ['kvm', '<or> xen <or> kvm', true],
    ['qemu', '<or> xen <or> kvm', false],
    ['abc', 's== abc', true],
    ['abc', 's!= abc', false],
    ['abc', 's< abd', true],
    ['abc', 's>= abd', false],
    ['abc', 'abc', true], // no operator: plain equality of the whole text
    ['abc', ' abc', false],
    ['4', '>=', false], // operator without operand
  ] as const)('match(%j, %j) = %s', (value, req, ok) => {
    expect(extraSpecMatch(value, req)).toBe(ok)
  })
})

describe('ComputeCapabilitiesFilter', () => {
  const host = {stats: {gpu_model: 'A100'}}
  run('ComputeCapabilitiesFilter', [
    {name: 'no extra specs', expect: null},
    {name: 'capabilities:hypervisor_type s== QEMU', spec: withSpecs({'capabilities:hypervisor_type': 's== QEMU'}), expect: null},
    {
      name: 'capabilities:hypervisor_type s== xen',
      spec: withSpecs({'capabilities:hypervisor_type': 's== xen'}),
      expect: 'extra spec capabilities:hypervisor_type not matched',
    },
    {name: 'nested JSON: capabilities:cpu_info:vendor', spec: withSpecs({'capabilities:cpu_info:vendor': 'Intel'}), expect: null},
    {name: 'nested JSON mismatch', spec: withSpecs({'capabilities:cpu_info:vendor': 'AMD'}), expect: 'extra spec capabilities:cpu_info:vendor not matched'},
    {
      name: 'unscoped key naming a host attribute is checked',
      spec: withSpecs({hypervisor_version: '>= 7000000'}),
      expect: 'extra spec hypervisor_version not matched',
    },
    {name: 'unscoped host attribute that matches', spec: withSpecs({hypervisor_version: '>= 6002000'}), expect: null},
    {name: 'other scopes are ignored', spec: withSpecs({'hw:cpu_policy': 'dedicated', 'aggregate_instance_extra_specs:ssd': 'true'}), expect: null},
    {name: 'unscoped key that is neither attribute nor stat is ignored', spec: withSpecs({foo: 'bar'}), expect: null},
    {name: 'stats as fallback', host, spec: withSpecs({'capabilities:gpu_model': 'A100'}), expect: null},
    {name: 'unscoped stat', host, spec: withSpecs({gpu_model: 'H100'}), expect: 'extra spec gpu_model not matched'},
    {name: 'float attribute is compared as str(float): "16.0"', spec: withSpecs({'capabilities:cpu_allocation_ratio': '16.0'}), expect: null},
    {
      name: 'str(16.0) is not "16"',
      spec: withSpecs({'capabilities:cpu_allocation_ratio': '16'}),
      expect: 'extra spec capabilities:cpu_allocation_ratio not matched',
    },
    {name: 'numeric operator on free_ram_mb', spec: withSpecs({'capabilities:free_ram_mb': '>= 4096'}), expect: null},
    {name: 'missing capability fails', spec: withSpecs({'capabilities:nonexistent': 'x'}), expect: 'capability nonexistent missing'},
    {name: 'path below a scalar fails', spec: withSpecs({'capabilities:hypervisor_type:x': 'y'}), expect: 'capability hypervisor_type:x missing'},
  ])
})

describe('ImagePropertiesFilter', () => {
  const props = (p: Record<string, string>): Partial<RequestSpec> => ({image: {id: null, diskFormat: null, properties: p}})
  run('ImagePropertiesFilter', [
    {name: 'no image properties', expect: null},
    {name: 'matching architecture', spec: props({hw_architecture: 'x86_64'}), expect: null},
    {name: 'amd64 is canonicalised to x86_64', spec: props({hw_architecture: 'AMD64'}), expect: null},
    {name: 'other architecture', spec: props({hw_architecture: 'aarch64'}), expect: 'image properties not supported'},
    {name: 'i386 canonicalises to i686', host: {supportedInstances: [['i686', 'qemu', 'hvm']]}, spec: props({hw_architecture: 'i386'}), expect: null},
    {name: 'hypervisor type', spec: props({img_hv_type: 'kvm'}), expect: null},
    {name: 'hypervisor type mismatch', spec: props({img_hv_type: 'xen'}), expect: 'image properties not supported'},
    {name: 'vm mode hv is hvm', spec: props({hw_vm_mode: 'hv'}), expect: null},
    {
      name: 'all three must be in the same supported_instances entry',
      host: {
        supportedInstances: [
          ['x86_64', 'qemu', 'hvm'],
          ['aarch64', 'kvm', 'hvm'],
        ],
      },
      spec: props({hw_architecture: 'x86_64', img_hv_type: 'kvm'}),
      expect: 'image properties not supported',
    },
    {
      name: 'host without supported_instances',
      host: {supportedInstances: []},
      spec: props({hw_architecture: 'x86_64'}),
      expect: 'image properties not supported',
    },
    {name: 'default architecture from config', cfg: {image_properties_default_architecture: 'aarch64'}, expect: 'image properties not supported'},
    {name: 'requested hypervisor version satisfied (6002000 = 6.2.0)', spec: props({img_hv_type: 'kvm', img_hv_requested_version: '>=6.0'}), expect: null},
    {
      name: 'requested hypervisor version not satisfied',
      spec: props({img_hv_type: 'kvm', img_hv_requested_version: '>=7.0'}),
      expect: 'image properties not supported',
    },
    {name: 'version range', spec: props({img_hv_type: 'kvm', img_hv_requested_version: '>=6.0, <6.3'}), expect: null},
  ])
})

describe('ServerGroupAntiAffinityFilter', () => {
  run('ServerGroupAntiAffinityFilter', [
    {name: 'no group', expect: null},
    {name: 'no member on the host', host: {instances: new Set(['x'])}, spec: {group: group('anti-affinity', ['m1'])}, expect: null},
    {
      name: 'a member on the host (max_server_per_host 1)',
      host: {instances: new Set(['m1'])},
      spec: {group: group('anti-affinity', ['m1'])},
      expect: 'anti-affinity group grp',
    },
    {
      name: 'max_server_per_host 2, one there',
      host: {instances: new Set(['m1'])},
      spec: {group: group('anti-affinity', ['m1', 'm2'], {rules: {max_server_per_host: 2}})},
      expect: null,
    },
    {
      name: 'max_server_per_host 2, two there',
      host: {instances: new Set(['m1', 'm2'])},
      spec: {group: group('anti-affinity', ['m1', 'm2'], {rules: {max_server_per_host: 2}})},
      expect: 'anti-affinity group grp',
    },
    {name: 'other policy is not this filter', host: {instances: new Set(['m1'])}, spec: {group: group('affinity', ['m1'])}, expect: null},
    {
      name: 'soft-anti-affinity is a weigher, not a filter',
      host: {instances: new Set(['m1'])},
      spec: {group: group('soft-anti-affinity', ['m1'])},
      expect: null,
    },
  ])
})

describe('ServerGroupAffinityFilter', () => {
  run('ServerGroupAffinityFilter', [
    {name: 'no group', expect: null},
    {name: 'first member: no group host yet', spec: {group: group('affinity', ['m1'])}, expect: null},
    {name: 'group lives on this host', spec: {group: group('affinity', ['m1'], {hosts: ['h1']})}, expect: null},
    {name: 'group lives elsewhere', spec: {group: group('affinity', ['m1'], {hosts: ['h2']})}, expect: 'affinity group grp on other hosts'},
    {name: 'anti-affinity group is not this filter', spec: {group: group('anti-affinity', ['m1'], {hosts: ['h2']})}, expect: null},
  ])
})

describe('AvailabilityZoneFilter', () => {
  const az1 = aggregate({availability_zone: 'az1'})
  const az1b = aggregate({availability_zone: 'az1,az3'})
  const other = aggregate({ssd: 'true'})
  run('AvailabilityZoneFilter', [
    {name: 'no AZ requested', host: {aggregates: [az1]}, expect: null},
    {name: 'host in the AZ', host: {aggregates: [az1]}, spec: {availabilityZone: 'az1'}, expect: null},
    {name: 'host in another AZ', host: {aggregates: [az1]}, spec: {availabilityZone: 'az2'}, expect: 'not in AZ az2'},
    {name: 'comma-separated metadata values are split', host: {aggregates: [az1b]}, spec: {availabilityZone: 'az3'}, expect: null},
    {name: 'host in no AZ aggregate is in default_availability_zone', host: {aggregates: [other]}, spec: {availabilityZone: 'nova'}, expect: null},
    {name: 'host in no AZ aggregate, other AZ asked', host: {aggregates: [other]}, spec: {availabilityZone: 'az1'}, expect: 'not in AZ az1'},
    {name: 'configured default AZ', cfg: {default_availability_zone: 'az9'}, spec: {availabilityZone: 'az9'}, expect: null},
  ])
})

describe('AggregateInstanceExtraSpecsFilter', () => {
  const ssd = aggregate({ssd: 'true', cpu_gen: '3'})
  const gold = aggregate({tier: 'gold, silver'})
  run('AggregateInstanceExtraSpecsFilter', [
    {name: 'no extra specs', host: {aggregates: [ssd]}, expect: null},
    {name: 'scoped key matches', host: {aggregates: [ssd]}, spec: withSpecs({'aggregate_instance_extra_specs:ssd': 'true'}), expect: null},
    {
      name: 'scoped key, other value',
      host: {aggregates: [ssd]},
      spec: withSpecs({'aggregate_instance_extra_specs:ssd': 'false'}),
      expect: 'aggregate metadata ssd not matched',
    },
    {name: 'unscoped key is checked too', host: {aggregates: [ssd]}, spec: withSpecs({ssd: 'true'}), expect: null},
    {
      name: 'unscoped key missing from the aggregates fails',
      host: {aggregates: [ssd]},
      spec: withSpecs({group_policy: 'none'}),
      expect: 'aggregate metadata group_policy missing',
    },
    {name: 'other scopes are ignored', host: {aggregates: []}, spec: withSpecs({'hw:cpu_policy': 'dedicated', 'resources:VGPU': '1'}), expect: null},
    {name: 'operator on metadata', host: {aggregates: [ssd]}, spec: withSpecs({'aggregate_instance_extra_specs:cpu_gen': '>= 2'}), expect: null},
    {
      name: 'host in no aggregate',
      host: {aggregates: []},
      spec: withSpecs({'aggregate_instance_extra_specs:ssd': 'true'}),
      expect: 'aggregate metadata ssd missing',
    },
    {
      name: 'any of the comma-split values may match',
      host: {aggregates: [gold]},
      spec: withSpecs({'aggregate_instance_extra_specs:tier': 'silver'}),
      expect: null,
    },
  ])
})

describe('AggregateMultiTenancyIsolation', () => {
  const t = aggregate({filter_tenant_id: 'p1,p2'})
  const empty = aggregate({filter_tenant_id: ''})
  run('AggregateMultiTenancyIsolation', [
    {name: 'host in no tenant aggregate', host: {aggregates: [aggregate({ssd: 'true'})]}, expect: null},
    {name: 'project listed', host: {aggregates: [t]}, spec: {projectId: 'p2'}, expect: null},
    {name: 'project not listed', host: {aggregates: [t]}, spec: {projectId: 'p3'}, expect: 'aggregate reserved for other projects'},
    // ''.split(',') is {''}: a non-empty set, so every project is refused
    {name: 'empty filter_tenant_id refuses everyone', host: {aggregates: [empty]}, spec: {projectId: 'p3'}, expect: 'aggregate reserved for other projects'},
  ])
})

describe('IsolatedHostsFilter', () => {
  const img = (id: string | null): Partial<RequestSpec> => ({image: {id, diskFormat: null, properties: {}}})
  const cfg = (restrict: boolean, images: string[] = ['iso-img']): Partial<SchedulerConfig> => ({
    isolated_hosts: ['h1'],
    isolated_images: images,
    restrict_isolated_hosts_to_isolated_images: restrict,
  })
  run('IsolatedHostsFilter', [
    {name: 'nothing configured', expect: null},
    {name: 'no isolated images, restrict: isolated host refused', cfg: cfg(true, []), expect: 'isolated host'},
    {name: 'no isolated images, not restricted: isolated host ok', cfg: cfg(false, []), expect: null},
    {name: 'restrict: isolated image on isolated host', cfg: cfg(true), spec: img('iso-img'), expect: null},
    {name: 'restrict: other image on isolated host', cfg: cfg(true), spec: img('other'), expect: 'isolated host/image mismatch'},
    {name: 'restrict: isolated image on other host', cfg: cfg(true), host: {host: 'h2'}, spec: img('iso-img'), expect: 'isolated host/image mismatch'},
    {name: 'not restricted: other image on isolated host', cfg: cfg(false), spec: img('other'), expect: null},
    {name: 'not restricted: isolated image on other host', cfg: cfg(false), host: {host: 'h2'}, spec: img('iso-img'), expect: 'isolated host/image mismatch'},
  ])
})

describe('SameHostFilter / DifferentHostFilter', () => {
  const on = {instances: new Set(['a', 'b'])}
  run('SameHostFilter', [
    {name: 'no hint', host: on, expect: null},
    {name: 'a hinted instance runs here', host: on, spec: {hints: {same_host: ['x', 'b']}}, expect: null},
    {name: 'none of the hinted instances runs here', host: on, spec: {hints: {same_host: ['x']}}, expect: 'not the same host as hinted instances'},
  ])
  run('DifferentHostFilter', [
    {name: 'no hint', host: on, expect: null},
    {name: 'a hinted instance runs here', host: on, spec: {hints: {different_host: ['x', 'a']}}, expect: 'runs a different_host instance'},
    {name: 'no hinted instance here', host: on, spec: {hints: {different_host: ['x']}}, expect: null},
  ])
})

describe('IoOpsFilter / NumInstancesFilter and their per-aggregate variants (num < max)', () => {
  run('IoOpsFilter', [
    {name: '7 < 8', host: {numIoOps: 7}, expect: null},
    {name: '8 is not < 8', host: {numIoOps: 8}, expect: 'too many I/O operations'},
    {name: 'configured max', host: {numIoOps: 8}, cfg: {max_io_ops_per_host: 9}, expect: null},
    {
      name: 'aggregate metadata is ignored by the plain filter',
      host: {numIoOps: 8, aggregates: [aggregate({max_io_ops_per_host: '20'})]},
      expect: 'too many I/O operations',
    },
  ])
  run('AggregateIoOpsFilter', [
    {name: 'aggregate raises the limit', host: {numIoOps: 8, aggregates: [aggregate({max_io_ops_per_host: '20'})]}, expect: null},
    {
      name: 'lowest aggregate value wins',
      host: {numIoOps: 8, aggregates: [aggregate({max_io_ops_per_host: '20'}), aggregate({max_io_ops_per_host: '5'})]},
      expect: 'too many I/O operations',
    },
    {
      name: 'a value int() cannot read -> config value',
      host: {numIoOps: 8, aggregates: [aggregate({max_io_ops_per_host: '20.5'})]},
      expect: 'too many I/O operations',
    },
    {name: 'no aggregate value -> config value', host: {numIoOps: 7}, expect: null},
  ])
  run('NumInstancesFilter', [
    {name: '49 < 50', host: {numInstances: 49}, expect: null},
    {name: '50 is not < 50', host: {numInstances: 50}, expect: 'too many instances'},
  ])
  run('AggregateNumInstancesFilter', [
    {name: 'aggregate lowers the limit', host: {numInstances: 10, aggregates: [aggregate({max_instances_per_host: '10'})]}, expect: 'too many instances'},
    {
      name: 'metadata values are not comma-split: "10,20" is no int -> config value',
      host: {numInstances: 10, aggregates: [aggregate({max_instances_per_host: '10,20'})]},
      expect: null,
    },
  ])
})

describe('PciPassthroughFilter', () => {
  const pools = [
    {vendor_id: '10de', product_id: '1eb8', numa_node: 0, count: 1, tags: {dev_type: 'type-PCI'}},
    {vendor_id: '10de', product_id: '1eb8', numa_node: 1, count: 2, tags: {dev_type: 'type-PCI'}},
    {vendor_id: '8086', product_id: '154d', numa_node: 0, count: 4, tags: {dev_type: 'type-VF'}},
  ]
  const want = (count: number, spec: {vendor_id?: string; product_id?: string; device_type?: string}, alias = 'a'): Partial<RequestSpec> => ({
    pciRequests: [{alias, count, spec: {name: alias, ...spec}}],
  })
  run('PciPassthroughFilter', [
    {name: 'no PCI request', expect: null},
    {name: 'no PCI request on a PCI host', host: {pciPools: pools}, expect: null},
    {name: '3 GPUs over two pools', host: {pciPools: pools}, spec: want(3, {vendor_id: '10de', product_id: '1eb8'}, 'gpu'), expect: null},
    {name: '4 GPUs: only 3', host: {pciPools: pools}, spec: want(4, {vendor_id: '10de', product_id: '1eb8'}, 'gpu'), expect: 'insufficient PCI devices (gpu)'},
    {
      name: 'device_type must match',
      host: {pciPools: pools},
      spec: want(1, {vendor_id: '8086', device_type: 'type-PF'}, 'pf'),
      expect: 'insufficient PCI devices (pf)',
    },
    // _filter_pools_for_unrequested_pfs / _vdpa_devices / _remote_managed_devices
    {
      name: 'PFs only for a request that asks for type-PF',
      host: {pciPools: [{vendor_id: '8086', product_id: '1572', numa_node: 0, count: 2, tags: {dev_type: 'type-PF'}}]},
      spec: want(1, {vendor_id: '8086'}, 'nic'),
      expect: 'insufficient PCI devices (nic)',
    },
    {
      name: 'a type-PF request gets PFs',
      host: {pciPools: [{vendor_id: '8086', product_id: '1572', numa_node: 0, count: 2, tags: {dev_type: 'type-PF'}}]},
      spec: want(1, {vendor_id: '8086', device_type: 'type-PF'}, 'pf'),
      expect: null,
    },
    {
      name: 'vDPA devices only when asked',
      host: {pciPools: [{vendor_id: '15b3', product_id: '101e', numa_node: 0, count: 2, tags: {dev_type: 'vdpa'}}]},
      spec: want(1, {vendor_id: '15b3'}, 'nic'),
      expect: 'insufficient PCI devices (nic)',
    },
    {
      name: 'remote-managed devices are not for aliases',
      host: {pciPools: [{vendor_id: '15b3', product_id: '101e', numa_node: 0, count: 2, tags: {dev_type: 'type-VF', remote_managed: 'true'}}]},
      spec: want(1, {vendor_id: '15b3'}, 'nic'),
      expect: 'insufficient PCI devices (nic)',
    },
    {name: 'VFs', host: {pciPools: pools}, spec: want(4, {vendor_id: '8086', device_type: 'type-VF'}, 'vf'), expect: null},
    {name: 'host without PCI devices', spec: want(1, {vendor_id: '10de'}, 'gpu'), expect: 'insufficient PCI devices (gpu)'},
    {
      name: 'two requests consume from the same pools',
      host: {pciPools: pools},
      spec: {
        pciRequests: [
          {alias: 'g1', count: 2, spec: {name: 'g1', vendor_id: '10de'}},
          {alias: 'g2', count: 2, spec: {name: 'g2', vendor_id: '10de'}},
        ],
      },
      expect: 'insufficient PCI devices (g2)',
    },
  ])
})

describe('NUMATopologyFilter (fitting itself: numa.test.ts)', () => {
  const ht = topology(
    numaCell({
      id: 0,
      pcpuset: [0, 1, 2, 3],
      siblings: [
        [0, 1],
        [2, 3],
      ],
    }),
  )
  const noHt = topology(numaCell({id: 0, pcpuset: [0, 1, 2, 3], siblings: [[0], [1], [2], [3]]}))
  const pinned = (n: number, extra: Record<string, string> = {}): Partial<RequestSpec> => ({
    ...withSpecs({'hw:cpu_policy': 'dedicated', ...extra}),
    numaTopology: {
      cells: [
        {
          id: 0,
          cpuset: [],
          pcpuset: Array.from({length: n}, (_, i) => i),
          memory: 1024,
          pagesize: null,
          cpuPolicy: 'dedicated',
          threadPolicy: (extra['hw:cpu_thread_policy'] as 'require' | undefined) ?? null,
        },
      ],
      emulatorThreadsIsolated: false,
    },
  })
  run('NUMATopologyFilter', [
    {name: 'no NUMA request', expect: null},
    {name: 'NUMA request, host without topology', spec: pinned(2), expect: 'no host NUMA topology'},
    {name: 'fits', host: {numa: ht}, spec: pinned(2), expect: null},
    {name: 'too many pCPUs', host: {numa: ht}, spec: pinned(5), expect: 'insufficient free pCPUs in a NUMA cell'},
    {
      name: 'thread policy require on a host without hyperthreads',
      host: {numa: noHt},
      spec: pinned(2, {'hw:cpu_thread_policy': 'require'}),
      expect: 'no hyperthreads for cpu_thread_policy=require',
    },
    {name: 'thread policy require with hyperthreads', host: {numa: ht}, spec: pinned(2, {'hw:cpu_thread_policy': 'require'}), expect: null},
  ])

  it('keeps the fitted cells for the claim', () => {
    const ctx = filterContext()
    const hs = hostState({numa: ht})
    expect(FILTERS.NUMATopologyFilter?.hostPasses(hs, requestSpec(pinned(2)), ctx)).toBeNull()
    expect(ctx.numaFits.get(hs.key)?.[0]?.pinning).toEqual([
      [0, 0],
      [1, 1],
    ])
  })
})

describe('RamFilter / CoreFilter / DiskFilter (pre-placement, Stein)', () => {
  // RamFilter: usable = total x ratio - (total - free) >= requested
  run('RamFilter', [
    {name: '65536 x 1.5 - (65536 - 1024) = 33792 >= 2048', host: {totalUsableRamMb: 65536, freeRamMb: 1024}, expect: null},
    {name: 'ratio 1.0: 1024 free < 2048', host: {totalUsableRamMb: 65536, freeRamMb: 1024, ramAllocationRatio: 1}, expect: 'insufficient RAM'},
    {name: 'exact fit passes', host: {totalUsableRamMb: 65536, freeRamMb: 2048, ramAllocationRatio: 1}, expect: null},
    {
      name: 'negative free RAM (overcommitted) with ratio 1.5',
      host: {totalUsableRamMb: 4096, freeRamMb: -1000, ramAllocationRatio: 1.5},
      expect: 'insufficient RAM',
    },
  ])
  // CoreFilter: vcpus <= total and total x ratio - used >= vcpus
  run('CoreFilter', [
    {name: '16 x 16 - 254 = 2 >= 2', host: {vcpusTotal: 16, vcpusUsed: 254}, expect: null},
    {name: '16 x 16 - 255 = 1 < 2', host: {vcpusTotal: 16, vcpusUsed: 255}, expect: 'insufficient vCPUs'},
    {name: 'more vCPUs than the host has cannot overcommit', host: {vcpusTotal: 1, vcpusUsed: 0}, expect: 'insufficient vCPUs'},
    {name: 'vcpus_total 0 (not reported) passes', host: {vcpusTotal: 0}, expect: null},
  ])
  // DiskFilter: requested MB = 1024 x (root + ephemeral) + swap; usable = total x ratio - (total - free)
  run('DiskFilter', [
    {name: '20 GB root on 500 GB free', expect: null},
    {
      name: 'root + ephemeral + swap MB',
      host: {totalUsableDiskGb: 100, freeDiskMb: 30 * 1024},
      spec: {rootGb: 20, ephemeralGb: 10, swap: 1},
      expect: 'insufficient disk',
    },
    {name: 'exact fit', host: {totalUsableDiskGb: 100, freeDiskMb: 30 * 1024}, spec: {rootGb: 20, ephemeralGb: 10, swap: 0}, expect: null},
    {
      name: 'boot from volume needs no root disk',
      host: {totalUsableDiskGb: 100, freeDiskMb: 10 * 1024},
      spec: {rootGb: 20, ephemeralGb: 10, isBfv: true},
      expect: null,
    },
    {name: 'disk_allocation_ratio 2', host: {totalUsableDiskGb: 100, freeDiskMb: 0, diskAllocationRatio: 2}, spec: {rootGb: 100}, expect: null},
  ])
})

describe('filter resolution', () => {
  it('accepts short and dotted names, reports unknown ones', () => {
    const r = resolveFilters(['nova.scheduler.filters.compute_filter.ComputeFilter', 'RamFilter', 'NoSuchFilter'])
    expect(r.filters.map((f) => f.name)).toEqual(['ComputeFilter', 'RamFilter'])
    expect(r.unknown).toEqual(['NoSuchFilter'])
  })

  it.each([
    ['ComputeFilter', true],
    ['ComputeCapabilitiesFilter', true],
    ['ImagePropertiesFilter', true],
    ['AvailabilityZoneFilter', true],
    ['AggregateInstanceExtraSpecsFilter', true],
    ['AggregateMultiTenancyIsolation', true],
    ['IsolatedHostsFilter', true],
    ['SameHostFilter', true],
    ['DifferentHostFilter', true],
    ['ServerGroupAntiAffinityFilter', false],
    ['ServerGroupAffinityFilter', false],
    ['NUMATopologyFilter', false],
    ['IoOpsFilter', false],
    ['NumInstancesFilter', false],
    ['PciPassthroughFilter', false],
  ] as const)('%s run_filter_once_per_request = %s', (name, once) => {
    expect(FILTERS[name]?.runOncePerRequest).toBe(once)
  })
})
