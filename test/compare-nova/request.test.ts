/**
 * The placement query cloudctl builds for a flavor / image (stage 2, after the request filters)
 * against nova's own ResourceRequest.from_request_spec + resources_from_request_spec +
 * to_querystring() (python3-nova, Zed). Skipped when /usr/bin/python3 cannot import nova (driver.ts).
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {defaultSchedulerConfig} from '../../src/lib/engine/config.js'
import {toQueryString} from '../../src/lib/engine/placement-query.js'
import {buildRequestSpec, placementRequestFor, runRequestFilters} from '../../src/lib/engine/request.js'
import {type BootRequest} from '../../src/lib/engine/request-spec.js'
import {CloudBuilder, type FlavorSpec} from '../support/builders.js'
import {COMPARE, runNova} from './driver.js'

interface Case {
  name: string
  flavor: FlavorSpec
  boot?: Omit<BootRequest, 'flavor'>
  /** image properties as nova's ImageMetaProps takes them (lists stay lists) */
  novaImage?: Record<string, unknown>
}

const CASES: Case[] = [
  {name: 'plain', flavor: {name: 'f', vcpus: 2, memory_mb: 2048, root_gb: 20}},
  {name: 'ephemeral and swap rounded up to GB', flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10, ephemeral_gb: 5, swap: 1025}},
  {name: 'boot from volume drops the root disk', flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10, ephemeral_gb: 1}, boot: {bootFromVolume: true}},
  {name: 'no disk at all', flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 0}},
  {name: 'dedicated', flavor: {name: 'f', vcpus: 4, memory_mb: 4096, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}}},
  {
    name: 'dedicated + emulator threads + require',
    flavor: {
      name: 'f',
      vcpus: 4,
      memory_mb: 4096,
      root_gb: 10,
      extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:emulator_threads_policy': 'isolate', 'hw:cpu_thread_policy': 'require'},
    },
  },
  {
    name: 'dedicated + isolate',
    flavor: {name: 'f', vcpus: 2, memory_mb: 4096, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated', 'hw:cpu_thread_policy': 'isolate'}},
  },
  {name: 'mixed', flavor: {name: 'f', vcpus: 4, memory_mb: 4096, root_gb: 10, extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_dedicated_mask': '^0'}}},
  {
    name: 'mixed with a realtime mask',
    flavor: {
      name: 'f',
      vcpus: 6,
      memory_mb: 4096,
      root_gb: 10,
      extra_specs: {'hw:cpu_policy': 'mixed', 'hw:cpu_realtime': 'yes', 'hw:cpu_realtime_mask': '^0-2'},
    },
  },
  {
    name: 'explicit PCPU with the hyperthreading trait',
    flavor: {name: 'f', vcpus: 4, memory_mb: 2048, root_gb: 10, extra_specs: {'resources:PCPU': '4', 'trait:HW_CPU_HYPERTHREADING': 'forbidden'}},
  },
  {
    name: 'dedicated from the image',
    flavor: {name: 'f', vcpus: 2, memory_mb: 2048, root_gb: 10},
    boot: {imageProperties: {hw_cpu_policy: 'dedicated'}},
    novaImage: {hw_cpu_policy: 'dedicated'},
  },
  {
    name: 'resource overrides, custom class, traits',
    flavor: {
      name: 'f',
      vcpus: 2,
      memory_mb: 2048,
      root_gb: 10,
      extra_specs: {
        'resources:VCPU': '1',
        'resources:CUSTOM_GPU': '2',
        'resources:DISK_GB': '0',
        'trait:HW_CPU_X86_AVX2': 'required',
        'trait:CUSTOM_SLOW': 'forbidden',
      },
    },
  },
  {
    name: 'granular groups with isolate',
    flavor: {
      name: 'f',
      vcpus: 2,
      memory_mb: 2048,
      root_gb: 10,
      extra_specs: {'resources1:SRIOV_NET_VF': '1', 'trait1:CUSTOM_PHYSNET_A': 'required', 'resources2:SRIOV_NET_VF': '2', group_policy: 'isolate'},
    },
  },
  {
    name: 'named suffixes',
    flavor: {
      name: 'f',
      vcpus: 2,
      memory_mb: 2048,
      root_gb: 10,
      extra_specs: {'resources_gpu:VGPU': '1', 'resources_nic:SRIOV_NET_VF': '1', group_policy: 'none'},
    },
  },
  {
    name: 'image trait:X=required properties',
    flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10},
    boot: {imageProperties: {'trait:CUSTOM_IMG_A': 'required', 'trait:CUSTOM_IMG_B': 'required'}},
    novaImage: {'trait:CUSTOM_IMG_A': 'required', 'trait:CUSTOM_IMG_B': 'required'},
  },
  {
    name: 'a Glance property named traits_required is not read',
    flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10},
    boot: {imageProperties: {traits_required: 'CUSTOM_IMG_A'}},
    novaImage: {traits_required: ['CUSTOM_IMG_A']},
  },
  {name: 'invalid resource class is ignored', flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10, extra_specs: {'resources:NOT_A_CLASS': '1'}}},
  {name: 'PCI NUMA affinity socket', flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10, extra_specs: {'hw:pci_numa_affinity_policy': 'socket'}}},
  {
    name: 'availability zone (member_of) and hints (no limit)',
    flavor: {name: 'f', vcpus: 1, memory_mb: 512, root_gb: 10},
    boot: {availabilityZone: 'az1', hints: {same_host: ['x']}},
  },
]

describe.skipIf(!COMPARE)('compare with nova: the placement query', () => {
  it('the engine builds the query string nova sends', () => {
    const cfg = defaultSchedulerConfig()
    const engine: Array<{query?: string; error?: string}> = []
    const novaCases = CASES.map((c) => {
      const b = new CloudBuilder()
      b.addCell('cell1')
      b.addAggregate({name: 'az1', metadata: {availability_zone: 'az1'}})
      b.addHost('cell1', {host: 'h1', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['az1']})
      b.addFlavor(c.flavor)
      const s = b.build()
      const model = buildModel(s)
      let rootForbidden: string[] = []
      let aggregates: string[][] = []
      try {
        const spec = buildRequestSpec(model, {flavor: 'f', ...c.boot}, cfg)
        runRequestFilters(model, spec, cfg)
        rootForbidden = [...spec.rootForbidden]
        aggregates = spec.requiredAggregates
        const pr = placementRequestFor(model, spec, cfg)
        engine.push(pr.fatal ? {error: pr.fatal} : {query: toQueryString(pr.request, {encoded: true})})
      } catch (error) {
        engine.push({error: String(error)})
      }
      const f = s.nova_api.flavors[0]
      return {
        flavor: {vcpus: f?.vcpus, memory_mb: f?.memory_mb, root_gb: f?.root_gb, ephemeral_gb: f?.ephemeral_gb, swap: f?.swap, extra_specs: f?.extra_specs},
        image_properties: c.novaImage ?? {},
        is_bfv: Boolean(c.boot?.bootFromVolume),
        hints: c.boot?.hints ?? {},
        root_forbidden: rootForbidden,
        aggregates,
      }
    })
    const nova = runNova<Array<{query?: string; error?: string}>>({mode: 'request', cases: novaCases})
    CASES.forEach((c, i) => {
      const n = nova[i]
      const e = engine[i]
      expect({name: c.name, query: e?.query, failed: e?.error !== undefined}).toEqual({name: c.name, query: n?.query, failed: n?.error !== undefined})
    })
  }, 60_000)
})
