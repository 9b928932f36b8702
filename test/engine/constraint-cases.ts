/**
 * Flavor / image cases for numa_get_constraints, each with nova's own answer (Zed): the guest
 * topology, or the exception nova-api refuses the request with. test/engine/constraints.test.ts
 * holds the engine to these answers; test/compare-nova/constraints.test.ts checks every answer
 * against the real nova, so none of them is cloudctl's guess.
 */
export interface ConstraintCase {
  name: string
  vcpus: number
  memoryMb: number
  extraSpecs: Record<string, string>
  image?: Record<string, string>
  /** CPU sets nova itself would materialise (hundreds of millions of ints): not run against nova */
  novaTooLarge?: boolean
  expect:
    | {error: string; message: string}
    | {
        cells: Array<{cpuset: number[]; pcpuset: number[]; memory: number; pagesize: number | null; policy: string | null; thread: string | null}> | null
        emulatorThreadsPolicy: string | null
      }
}

export const CONSTRAINT_CASES: ConstraintCase[] = [
  {
    name: 'pcpu implies dedicated',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '4'},
    expect: {cells: [{cpuset: [], pcpuset: [0, 1, 2, 3], memory: 2048, pagesize: null, policy: 'dedicated', thread: null}], emulatorThreadsPolicy: null},
  },
  {
    name: 'pcpu + HT forbidden implies isolate',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '4', 'trait:HW_CPU_HYPERTHREADING': 'forbidden'},
    expect: {cells: [{cpuset: [], pcpuset: [0, 1, 2, 3], memory: 2048, pagesize: null, policy: 'dedicated', thread: 'isolate'}], emulatorThreadsPolicy: null},
  },
  {
    name: 'pmem',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'hw:pmem': '2GB'},
    expect: {cells: [{cpuset: [0, 1, 2, 3], pcpuset: [], memory: 2048, pagesize: null, policy: null, thread: null}], emulatorThreadsPolicy: null},
  },
  {
    name: 'realtime mixed',
    vcpus: 6,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0-2'},
    expect: {cells: [{cpuset: [0, 1, 2], pcpuset: [3, 4, 5], memory: 2048, pagesize: null, policy: 'mixed', thread: null}], emulatorThreadsPolicy: null},
  },
  {
    name: 'shared flavor dedicated image',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'shared'},
    image: {hw_cpu_policy: 'dedicated'},
    expect: {
      error: 'ImageCPUPinningForbidden',
      message: "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor",
    },
  },
  {
    name: 'mixed flavor dedicated image',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0'},
    image: {hw_cpu_policy: 'dedicated'},
    expect: {
      error: 'ImageCPUPinningForbidden',
      message: "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor",
    },
  },
  {
    name: 'unknown cpu policy',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'foo'},
    expect: {
      error: 'InvalidCPUAllocationPolicy',
      message: "CPU policy requested from 'flavor extra specs' is invalid, given: 'foo', available: '('dedicated', 'shared', 'mixed')'.",
    },
  },
  {
    name: 'unknown thread policy',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'foo'},
    expect: {
      error: 'InvalidCPUThreadAllocationPolicy',
      message: "CPU thread policy requested from 'flavor extra specs' is invalid, given: 'foo', available: '('prefer', 'isolate', 'require')'.",
    },
  },
  {
    name: 'unknown emulator policy',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'foo'},
    expect: {
      error: 'InvalidEmulatorThreadsPolicy',
      message: "CPU emulator threads option requested is invalid, given: 'foo', available: '('share', 'isolate')'.",
    },
  },
  {
    name: 'image thread policy overrides flavor',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'isolate'},
    image: {hw_cpu_thread_policy: 'require'},
    expect: {
      error: 'ImageCPUThreadPolicyForbidden',
      message: "Image property 'hw_cpu_thread_policy' is not permitted to override CPU thread pinning policy set against the flavor",
    },
  },
  {
    name: 'image numa nodes overrides flavor',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '1'},
    image: {hw_numa_nodes: '2'},
    expect: {
      error: 'ImageNUMATopologyForbidden',
      message: "Image property 'hw_numa_nodes' is not permitted to override NUMA configuration set against the flavor",
    },
  },
  {
    name: 'image numa cpus overrides flavor',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-1', 'hw:numa_mem.0': '2048'},
    image: {'hw_numa_cpus.0': '0-1', 'hw_numa_mem.0': '2048'},
    expect: {
      error: 'ImageNUMATopologyForbidden',
      message: "Image property 'hw_numa_cpus' is not permitted to override NUMA configuration set against the flavor",
    },
  },
  {
    name: 'numa cpus out of range',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-2', 'hw:numa_mem.0': '2048'},
    expect: {error: 'ImageNUMATopologyCPUOutOfRange', message: 'CPU number 2 is larger than max 1'},
  },
  {
    name: 'numa cpus duplicates',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0-1', 'hw:numa_mem.0': '1024', 'hw:numa_cpus.1': '1', 'hw:numa_mem.1': '1024'},
    expect: {error: 'ImageNUMATopologyCPUDuplicates', message: 'CPU number 1 is assigned to two nodes'},
  },
  {
    name: 'numa cpus unassigned',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0', 'hw:numa_mem.0': '1024', 'hw:numa_cpus.1': '1', 'hw:numa_mem.1': '1024'},
    expect: {error: 'ImageNUMATopologyCPUsUnassigned', message: 'CPU number {2, 3} is not assigned to any node'},
  },
  {
    name: 'numa mem wrong total',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0', 'hw:numa_mem.0': '1024', 'hw:numa_cpus.1': '1', 'hw:numa_mem.1': '512'},
    expect: {error: 'ImageNUMATopologyMemoryOutOfRange', message: '1536 MB of memory assigned, but expected 2048 MB'},
  },
  {
    name: 'numa incomplete',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '2', 'hw:numa_cpus.0': '0', 'hw:numa_mem.0': '1024'},
    expect: {error: 'ImageNUMATopologyIncomplete', message: 'CPU and memory allocation must be provided for all NUMA nodes'},
  },
  {
    name: 'numa cpus without mem',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-1'},
    expect: {error: 'ImageNUMATopologyIncomplete', message: 'CPU and memory allocation must be provided for all NUMA nodes'},
  },
  {
    name: 'numa nodes not int',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': 'two'},
    expect: {error: 'InvalidNUMANodesNumber', message: "The property 'numa_nodes' cannot be 'two'. It must be a number greater than 0"},
  },
  {
    name: 'asymmetric',
    vcpus: 3,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '2'},
    expect: {
      error: 'ImageNUMATopologyAsymmetric',
      message:
        'Instance CPUs and/or memory cannot be evenly distributed across instance NUMA nodes. Explicit assignment of CPUs and memory to nodes is required',
    },
  },
  {
    name: 'realtime shared',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0'},
    expect: {error: 'RealtimeConfigurationInvalid', message: 'Cannot set realtime policy in a non dedicated cpu pinning policy'},
  },
  {
    name: 'realtime all cpus',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_realtime': 'yes'},
    expect: {
      error: 'RealtimeMaskNotFoundOrInvalid',
      message: 'Use of realtime CPUs requires either one or more non-realtime CPU(s) or offloaded emulator threads.',
    },
  },
  {
    name: 'realtime mask outside',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '1-5'},
    expect: {
      error: 'RealtimeMaskNotFoundOrInvalid',
      message:
        'Realtime policy vCPU(s) mask is configured with RT vCPUs that are not a subset of the vCPUs in the flavor. See hw:cpu_realtime_mask or hw_cpu_realtime_mask',
    },
  },
  {
    name: 'mixed both masks',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0', 'hw:cpu_dedicated_mask': '1'},
    expect: {
      error: 'RequiredMixedOrRealtimeCPUMask',
      message:
        "Dedicated CPU set can be specified from either 'hw:cpu_dedicated_mask' or 'hw:cpu_realtime_mask' when using 'mixed' CPU policy. 'hw:cpu_dedicated_mask' and 'hw:cpu_realtime_mask' can not be specified at the same time, or be specified with none of them.",
    },
  },
  {
    name: 'vcpu and pcpu',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:VCPU': '1', 'resources:PCPU': '1'},
    expect: {error: 'InvalidRequest', message: "It is not possible to specify both 'resources:VCPU' and 'resources:PCPU' extra specs; use one or the other"},
  },
  {
    name: 'pcpu with cpu policy',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '2', 'hw:cpu_policy': 'dedicated'},
    expect: {
      error: 'InvalidRequest',
      message:
        "It is not possible to use the 'resources:VCPU' or 'resources:PCPU' extra specs in combination with the 'hw:cpu_policy' extra spec or 'hw_cpu_policy' image metadata property; use one or the other",
    },
  },
  {
    name: 'pcpu count mismatch',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '3'},
    expect: {
      error: 'InvalidRequest',
      message: "There is a mismatch between the number of PCPUs requested via 'resourcesNN:PCPU' and the flavor); you must allocate exactly flavor.vcpus PCPUs",
    },
  },
  {
    name: 'pcpu emulator isolate mismatch',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '2', 'hw:emulator_threads_policy': 'isolate'},
    expect: {
      error: 'InvalidRequest',
      message:
        "You have requested 'hw:emulator_threads_policy=isolate' but have not requested sufficient PCPUs to handle this policy; you must allocate exactly flavor.vcpus + 1 PCPUs.",
    },
  },
  {
    name: 'pcpu emulator isolate ok',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:PCPU': '3', 'hw:emulator_threads_policy': 'isolate'},
    expect: {cells: [{cpuset: [], pcpuset: [0, 1], memory: 2048, pagesize: null, policy: 'dedicated', thread: null}], emulatorThreadsPolicy: 'isolate'},
  },
  {
    name: 'HT trait with thread policy',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'prefer', 'trait:HW_CPU_HYPERTHREADING': 'required'},
    expect: {
      error: 'InvalidRequest',
      message:
        "It is not possible to use the 'trait:HW_CPU_HYPERTHREADING' extra spec in combination with the 'hw:cpu_thread_policy' extra spec or 'hw_cpu_thread_policy' image metadata property; use one or the other",
    },
  },
  {
    name: 'HT trait on shared',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'trait:HW_CPU_HYPERTHREADING': 'forbidden'},
    expect: {error: 'CPUThreadPolicyConfigurationInvalid', message: 'Cannot set cpu thread pinning policy in a non dedicated cpu pinning policy'},
  },
  {
    name: 'image page size without flavor',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {},
    image: {hw_mem_page_size: 'large'},
    expect: {error: 'MemoryPageSizeForbidden', message: "Page size large forbidden against '<empty>'"},
  },
  {
    name: 'invalid page size',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:mem_page_size': 'Large'},
    expect: {error: 'MemoryPageSizeInvalid', message: "Invalid memory page size 'Large'"},
  },
  {
    name: 'page size 2MB',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:mem_page_size': '2MB'},
    expect: {cells: [{cpuset: [0, 1], pcpuset: [], memory: 2048, pagesize: 2048, policy: null, thread: null}], emulatorThreadsPolicy: null},
  },
  {
    name: 'locked memory without page size',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:locked_memory': 'true'},
    expect: {error: 'LockMemoryForbidden', message: 'locked_memory value in image or flavor is forbidden when mem_page_size is not set.'},
  },
  {
    name: 'huge dedicated mask',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '0-99999999'},
    novaTooLarge: true,
    expect: {
      error: 'InvalidMixedInstanceDedicatedMask',
      message: "Mixed instance must have at least 1 pinned vCPU and 1 unpinned vCPU. See 'hw:cpu_dedicated_mask'.",
    },
  },
  {
    name: 'huge dedicated mask with exclusions',
    vcpus: 4,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '1,5-99999999,^5-99999990'},
    novaTooLarge: true,
    expect: {
      error: 'InvalidMixedInstanceDedicatedMask',
      message: 'Mixed instance dedicated vCPU(s) mask is not a subset of vCPUs in the flavor. See "hw:cpu_dedicated_mask"',
    },
  },
  {
    name: 'huge numa cpus',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:numa_nodes': '1', 'hw:numa_cpus.0': '0-99999999', 'hw:numa_mem.0': '2048'},
    novaTooLarge: true,
    expect: {error: 'ImageNUMATopologyCPUOutOfRange', message: 'CPU number 2 is larger than max 1'},
  },
  {
    name: 'bad range',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '3-1'},
    expect: {error: 'Invalid', message: "Invalid range expression '3-1'"},
  },
  {
    name: 'vcpu resources makes shared',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'resources:VCPU': '2', 'hw:numa_nodes': '1'},
    expect: {cells: [{cpuset: [0, 1], pcpuset: [], memory: 2048, pagesize: null, policy: 'shared', thread: null}], emulatorThreadsPolicy: null},
  },
  {
    name: 'mixed dedicated mask + image numa nodes',
    vcpus: 4,
    memoryMb: 4096,
    extraSpecs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0,^2'},
    image: {hw_numa_nodes: '2'},
    expect: {
      cells: [
        {cpuset: [0], pcpuset: [1], memory: 2048, pagesize: null, policy: 'mixed', thread: null},
        {cpuset: [2], pcpuset: [3], memory: 2048, pagesize: null, policy: 'mixed', thread: null},
      ],
      emulatorThreadsPolicy: null,
    },
  },
  {
    name: 'dedicated with emulator isolate',
    vcpus: 2,
    memoryMb: 2048,
    extraSpecs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate', 'hw:cpu_thread_policy': 'isolate'},
    expect: {cells: [{cpuset: [], pcpuset: [0, 1], memory: 2048, pagesize: null, policy: 'dedicated', thread: 'isolate'}], emulatorThreadsPolicy: 'isolate'},
  },
]
