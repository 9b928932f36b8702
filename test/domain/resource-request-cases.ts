/**
 * Flavors and what nova's ResourceRequest.from_request_spec makes of them: our own table, on the
 * themes of nova's unit tests for scheduler utils (granular suffixes, overrides to 0, malformed and
 * negative amounts, bad resource classes, pinning). test/domain/resource-request.test.ts holds
 * cloudctl's one rule to it; test/compare-nova/resource-request.test.ts holds nova to the same table,
 * so an expectation here that nova does not share fails there.
 */
import type {FlavorAmounts} from '../../src/lib/domain/resource-request.js'

export interface ExpectedGroup {
  resources: Record<string, number>
  required?: string[]
  forbidden?: string[]
}

export interface ResourceCase {
  name: string
  flavor: FlavorAmounts & {root_gb: number; ephemeral_gb: number}
  isBfv?: boolean
  /** resources_from_flavor: every group's amounts added up per class */
  merged: Record<string, number>
  /** suffix ('' unsuffixed) -> group, after strip_zeros */
  groups: Record<string, ExpectedGroup>
  policy?: 'none' | 'isolate'
}

const flavor = (extra_specs: Record<string, string> = {}, f: Partial<FlavorAmounts> = {}): ResourceCase['flavor'] => ({
  vcpus: 2,
  memory_mb: 1024,
  swap: 0,
  ...f,
  root_gb: f.root_gb ?? 15,
  ephemeral_gb: f.ephemeral_gb ?? 0,
  extra_specs,
})
const base = {VCPU: 2, MEMORY_MB: 1024, DISK_GB: 15}
const LONG = 'x'.repeat(64)

export const RESOURCE_CASES: ResourceCase[] = [
  {name: 'the flavor alone', flavor: flavor(), merged: base, groups: {'': {resources: base}}},
  {
    name: 'ephemeral and swap (MB, rounded up to GB) join the root disk',
    flavor: flavor({}, {ephemeral_gb: 5, swap: 1025}),
    merged: {...base, DISK_GB: 22},
    groups: {'': {resources: {...base, DISK_GB: 22}}},
  },
  {
    name: 'boot from volume leaves the root disk out',
    flavor: flavor({}, {ephemeral_gb: 5}),
    isBfv: true,
    merged: {...base, DISK_GB: 5},
    groups: {'': {resources: {...base, DISK_GB: 5}}},
  },
  {
    name: 'boot from volume with no other disk asks for no DISK_GB',
    flavor: flavor(),
    isBfv: true,
    merged: {VCPU: 2, MEMORY_MB: 1024},
    groups: {'': {resources: {VCPU: 2, MEMORY_MB: 1024}}},
  },
  {
    name: 'a custom resource class is added',
    flavor: flavor({'resources:CUSTOM_TEST_CLASS': '1'}),
    merged: {...base, CUSTOM_TEST_CLASS: 1},
    groups: {'': {resources: {...base, CUSTOM_TEST_CLASS: 1}}},
  },
  {
    name: 'extra specs override the flavor amounts',
    flavor: flavor({'resources:VCPU': '99', 'resources:MEMORY_MB': '99', 'resources:DISK_GB': '99'}),
    merged: {VCPU: 99, MEMORY_MB: 99, DISK_GB: 99},
    groups: {'': {resources: {VCPU: 99, MEMORY_MB: 99, DISK_GB: 99}}},
  },
  {
    name: 'resources:VCPU=0 and resources:DISK_GB=0 remove them',
    flavor: flavor({'resources:VCPU': '0', 'resources:DISK_GB': '0'}),
    merged: {MEMORY_MB: 1024},
    groups: {'': {resources: {MEMORY_MB: 1024}}},
  },
  {
    name: 'VGPU and its display heads',
    flavor: flavor({'resources:VGPU': '1', 'resources:VGPU_DISPLAY_HEAD': '1'}),
    merged: {...base, VGPU: 1, VGPU_DISPLAY_HEAD: 1},
    groups: {'': {resources: {...base, VGPU: 1, VGPU_DISPLAY_HEAD: 1}}},
  },
  {
    name: 'an unknown standard class is ignored, lower-case custom too',
    flavor: flavor({'resources:DOESNT_EXIST': '0', 'resources:custom_foo': '1', 'resources:': '1'}),
    merged: base,
    groups: {'': {resources: base}},
  },
  {
    name: 'granular groups: numbered suffixes, traits, malformed and negative amounts dropped',
    flavor: flavor({
      'resources1:SRIOV_NET_VF': '1',
      'resources1:NET_BW_EGR_KILOBIT_PER_SEC': '1024',
      'trait1:CUSTOM_PHYSNET_NET1': 'required',
      'resources2:SRIOV_NET_VF': '1',
      'trait2:CUSTOM_PHYSNET_NET2': 'required',
      'trait2:HW_NIC_ACCEL_SSL': 'forbidden',
      'resources1:MEMORY_MB': 'bogus',
      'resources3:CUSTOM_MAGIC': '-5',
      'trait3:CUSTOM_MAGIC': 'bogus',
      'some:bogus': 'value',
      group_policy: 'isolate',
    }),
    merged: {...base, SRIOV_NET_VF: 2, NET_BW_EGR_KILOBIT_PER_SEC: 1024},
    groups: {
      '': {resources: base},
      '1': {resources: {SRIOV_NET_VF: 1, NET_BW_EGR_KILOBIT_PER_SEC: 1024}, required: ['CUSTOM_PHYSNET_NET1']},
      '2': {resources: {SRIOV_NET_VF: 1}, required: ['CUSTOM_PHYSNET_NET2'], forbidden: ['HW_NIC_ACCEL_SSL']},
    },
    policy: 'isolate',
  },
  {
    name: 'string suffixes: with and without an underscore, a dash, a zero, 64 characters',
    flavor: flavor({
      'resources_gpu:VGPU': '1',
      'resourcesNIC:SRIOV_NET_VF': '1',
      'resources-a:CUSTOM_A': '1',
      'resources0:CUSTOM_B': '1',
      [`resources${LONG}:CUSTOM_C`]: '1',
      group_policy: 'none',
    }),
    merged: {...base, VGPU: 1, SRIOV_NET_VF: 1, CUSTOM_A: 1, CUSTOM_B: 1, CUSTOM_C: 1},
    groups: {
      '': {resources: base},
      _gpu: {resources: {VGPU: 1}},
      NIC: {resources: {SRIOV_NET_VF: 1}},
      '-a': {resources: {CUSTOM_A: 1}},
      '0': {resources: {CUSTOM_B: 1}},
      [LONG]: {resources: {CUSTOM_C: 1}},
    },
    policy: 'none',
  },
  {name: 'a 65-character suffix is not a resources key', flavor: flavor({[`resources${LONG}x:CUSTOM_C`]: '1'}), merged: base, groups: {'': {resources: base}}},
  {
    name: '"traits:" is the trait prefix with suffix "s"',
    flavor: flavor({'traits:CUSTOM_FOO': 'required'}),
    merged: base,
    groups: {'': {resources: base}, s: {resources: {}, required: ['CUSTOM_FOO']}},
  },
  {
    name: 'a granular VCPU replaces the flavor vCPUs',
    flavor: flavor({'resources1:VCPU': '3'}),
    merged: {VCPU: 3, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {MEMORY_MB: 1024, DISK_GB: 15}}, '1': {resources: {VCPU: 3}}},
  },
  {
    name: 'one class in two groups adds up',
    flavor: flavor({'resources:CUSTOM_X': '1', 'resources1:CUSTOM_X': '2'}),
    merged: {...base, CUSTOM_X: 3},
    groups: {'': {resources: {...base, CUSTOM_X: 1}}, '1': {resources: {CUSTOM_X: 2}}},
  },
  {
    name: "amounts Python's int() reads: spaces, a sign, digit separators, minus zero",
    flavor: flavor({'resources:CUSTOM_A': ' 2 ', 'resources:CUSTOM_B': '+3', 'resources:CUSTOM_C': '1_0', 'resources:VCPU': '-0'}),
    merged: {MEMORY_MB: 1024, DISK_GB: 15, CUSTOM_A: 2, CUSTOM_B: 3, CUSTOM_C: 10},
    groups: {'': {resources: {MEMORY_MB: 1024, DISK_GB: 15, CUSTOM_A: 2, CUSTOM_B: 3, CUSTOM_C: 10}}},
  },
  {
    name: 'amounts nova drops: fractions, hex, exponents, doubled or edge separators, empty, negative',
    flavor: flavor({
      'resources:CUSTOM_A': '1.5',
      'resources:CUSTOM_B': '0x10',
      'resources:CUSTOM_C': '1e3',
      'resources:CUSTOM_D': '1__0',
      'resources:CUSTOM_E': '_1',
      'resources:CUSTOM_F': '',
      'resources:VCPU': '-1',
      'resources:MEMORY_MB': '2 048',
    }),
    merged: base,
    groups: {'': {resources: base}},
  },
  {
    name: 'explicit PCPU replaces VCPU',
    flavor: flavor({'resources:PCPU': '2'}),
    merged: {PCPU: 2, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {PCPU: 2, MEMORY_MB: 1024, DISK_GB: 15}}},
  },
  {
    name: 'hw:cpu_policy=dedicated asks for PCPU',
    flavor: flavor({'hw:cpu_policy': 'dedicated'}, {vcpus: 4}),
    merged: {PCPU: 4, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {PCPU: 4, MEMORY_MB: 1024, DISK_GB: 15}}},
  },
  {
    name: 'dedicated, isolated emulator threads and no hyperthreading',
    flavor: flavor({'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate', 'hw:cpu_thread_policy': 'isolate'}, {vcpus: 4}),
    merged: {PCPU: 5, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {PCPU: 5, MEMORY_MB: 1024, DISK_GB: 15}, forbidden: ['HW_CPU_HYPERTHREADING']}},
  },
  {
    name: 'mixed: the dedicated mask is PCPU, the rest VCPU',
    flavor: flavor({'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}, {vcpus: 4}),
    merged: {VCPU: 1, PCPU: 3, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {VCPU: 1, PCPU: 3, MEMORY_MB: 1024, DISK_GB: 15}}},
  },
  {
    name: 'mixed by a realtime mask, with an isolated emulator thread',
    flavor: flavor({'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0-1', 'hw:emulator_threads_policy': 'isolate'}, {vcpus: 4}),
    merged: {VCPU: 2, PCPU: 3, MEMORY_MB: 1024, DISK_GB: 15},
    groups: {'': {resources: {VCPU: 2, PCPU: 3, MEMORY_MB: 1024, DISK_GB: 15}}},
  },
]
