/**
 * Stage 2: flavor / image / boot options -> the placement query nova sends (ResourceRequest.
 * from_request_spec + resources_from_request_spec, Zed). The same cases run against nova's own code
 * in test/compare-nova/request.test.ts.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {defaultSchedulerConfig, type SchedulerConfig} from '../../src/lib/engine/config.js'
import {toQueryString} from '../../src/lib/engine/placement-query.js'
import {buildRequestSpec, placementRequestFor, runRequestFilters} from '../../src/lib/engine/request.js'
import {type BootRequest} from '../../src/lib/engine/request-spec.js'
import {CloudBuilder, type FlavorSpec} from '../support/builders.js'

function query(flavor: FlavorSpec, boot: Omit<BootRequest, 'flavor'> = {}, cfg: Partial<SchedulerConfig> = {}) {
  const b = new CloudBuilder()
  b.addCell('cell1')
  b.addAggregate({name: 'az1', uuid: 'a99a0000-0000-4000-8000-000000000001', metadata: {availability_zone: 'az1'}})
  b.addHost('cell1', {host: 'h1', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['az1']})
  b.addFlavor(flavor)
  const model = buildModel(b.build())
  const c = {...defaultSchedulerConfig(), ...cfg}
  const spec = buildRequestSpec(model, {flavor: flavor.name, ...boot}, c)
  runRequestFilters(model, spec, c)
  const pr = placementRequestFor(model, spec, c)
  return {q: pr.fatal ?? toQueryString(pr.request), warnings: pr.warnings}
}

const f = (vcpus: number, memory_mb: number, o: Partial<FlavorSpec> = {}): FlavorSpec => ({name: 'f', vcpus, memory_mb, root_gb: 0, ...o})
const TAIL = 'root_required=!COMPUTE_STATUS_DISABLED'

describe('placement query for a boot', () => {
  it.each([
    ['plain', f(2, 2048, {root_gb: 20}), {}, `limit=1000&resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2&${TAIL}`],
    [
      'swap rounded up to GB, plus ephemeral',
      f(1, 512, {root_gb: 10, ephemeral_gb: 5, swap: 1025}),
      {},
      `limit=1000&resources=DISK_GB:17,MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
    [
      'boot from volume drops the root disk',
      f(1, 512, {root_gb: 10, ephemeral_gb: 1}),
      {bootFromVolume: true},
      `limit=1000&resources=DISK_GB:1,MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
    ['no disk: DISK_GB stripped', f(1, 512), {}, `limit=1000&resources=MEMORY_MB:512,VCPU:1&${TAIL}`],
    ['dedicated -> PCPU', f(4, 4096, {extra_specs: {'hw:cpu_policy': 'dedicated'}}), {}, `limit=1000&resources=MEMORY_MB:4096,PCPU:4&${TAIL}`],
    [
      'emulator thread + require',
      f(4, 4096, {extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate', 'hw:cpu_thread_policy': 'require'}}),
      {},
      `limit=1000&required=HW_CPU_HYPERTHREADING&resources=MEMORY_MB:4096,PCPU:5&${TAIL}`,
    ],
    [
      'isolate forbids hyperthreads',
      f(2, 4096, {extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'isolate'}}),
      {},
      `limit=1000&required=!HW_CPU_HYPERTHREADING&resources=MEMORY_MB:4096,PCPU:2&${TAIL}`,
    ],
    [
      'mixed: PCPU from the mask, VCPU the rest',
      f(4, 4096, {extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}}),
      {},
      `limit=1000&resources=MEMORY_MB:4096,PCPU:3,VCPU:1&${TAIL}`,
    ],
    ['dedicated from the image', f(2, 2048), {imageProperties: {hw_cpu_policy: 'dedicated'}}, `limit=1000&resources=MEMORY_MB:2048,PCPU:2&${TAIL}`],
    [
      'mixed with a realtime mask: PCPU from the realtime vCPUs',
      f(6, 4096, {extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0-2'}}),
      {},
      `limit=1000&resources=MEMORY_MB:4096,PCPU:3,VCPU:3&${TAIL}`,
    ],
    [
      'explicit PCPU with the hyperthreading trait',
      f(4, 2048, {extra_specs: {'resources:PCPU': '4', 'trait:HW_CPU_HYPERTHREADING': 'forbidden'}}),
      {},
      `limit=1000&required=!HW_CPU_HYPERTHREADING&resources=MEMORY_MB:2048,PCPU:4&${TAIL}`,
    ],
    [
      'overrides, custom class, zero stripped, traits',
      f(2, 2048, {
        extra_specs: {
          'resources:VCPU': '1',
          'resources:CUSTOM_GPU': '2',
          'resources:DISK_GB': '0',
          'trait:HW_CPU_X86_AVX2': 'required',
          'trait:CUSTOM_SLOW': 'forbidden',
        },
      }),
      {},
      `limit=1000&required=HW_CPU_X86_AVX2,!CUSTOM_SLOW&resources=CUSTOM_GPU:2,MEMORY_MB:2048,VCPU:1&${TAIL}`,
    ],
    [
      'granular groups',
      f(2, 2048, {
        extra_specs: {'resources1:SRIOV_NET_VF': '1', 'trait1:CUSTOM_PHYSNET_A': 'required', 'resources2:SRIOV_NET_VF': '2', group_policy: 'isolate'},
      }),
      {},
      `group_policy=isolate&limit=1000&required1=CUSTOM_PHYSNET_A&resources=MEMORY_MB:2048,VCPU:2&resources1=SRIOV_NET_VF:1&resources2=SRIOV_NET_VF:2&${TAIL}`,
    ],
    [
      'image trait:NAME=required',
      f(1, 512),
      {imageProperties: {'trait:CUSTOM_IMG': 'required'}},
      `limit=1000&required=CUSTOM_IMG&resources=MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
    [
      'a Glance property named traits_required is not read',
      f(1, 512),
      {imageProperties: {traits_required: 'CUSTOM_IMG'}},
      `limit=1000&resources=MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
    [
      'PCI socket affinity trait',
      f(1, 512, {extra_specs: {'hw:pci_numa_affinity_policy': 'socket'}}),
      {},
      `limit=1000&required=COMPUTE_SOCKET_PCI_NUMA_AFFINITY&resources=MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
    [
      'AZ -> member_of; a group/same_host/different_host hint drops the limit',
      f(1, 512),
      {availabilityZone: 'az1', hints: {same_host: ['x']}},
      `member_of=in:a99a0000-0000-4000-8000-000000000001&resources=MEMORY_MB:512,VCPU:1&${TAIL}`,
    ],
  ] as const)('%s', (_name, flavor, boot, expected) => {
    expect(query(flavor, boot as Omit<BootRequest, 'flavor'>).q).toBe(expected)
  })

  it("ignores an invalid resource class with nova's warning", () => {
    const r = query(f(1, 512, {extra_specs: {'resources:NOT_A_CLASS': '1'}}))
    expect(r.q).toBe(`limit=1000&resources=MEMORY_MB:512,VCPU:1&${TAIL}`)
    expect(r.warnings.join()).toMatch(/invalid resource class NOT_A_CLASS/)
  })

  it('two numbered groups from the flavor without group_policy: placement would answer 400', () => {
    expect(query(f(1, 512, {extra_specs: {'resources1:SRIOV_NET_VF': '1', 'resources2:SRIOV_NET_VF': '1'}})).q).toMatch(/no group_policy/)
  })

  it('max_placement_results sets the limit', () => {
    expect(query(f(1, 512), {}, {max_placement_results: 7}).q).toBe(`limit=7&resources=MEMORY_MB:512,VCPU:1&${TAIL}`)
  })
})
