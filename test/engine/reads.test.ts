/**
 * What a live scheduler-view read may leave out (engine/reads.ts): the trait rows of traits the
 * query does not name, the hosts' NUMA topologies of a request without one. The end-to-end check
 * (the same answers as the full read, on MariaDB) is test/db/scheduler-view.test.ts.
 */
import {describe, expect, it} from 'vitest'

import {defaultSchedulerConfig} from '../../src/lib/engine/config.js'
import {requestReadsHostNuma, requestTraitNames} from '../../src/lib/engine/reads.js'
import type {BootRequest} from '../../src/lib/engine/request-spec.js'
import {CloudBuilder} from '../support/builders.js'

function cloud() {
  const b = new CloudBuilder()
  b.addCell('cell1')
  b.addAggregate({name: 'gold', uuid: 'a99a0000-0000-4000-8000-000000000001', metadata: {'trait:CUSTOM_GOLD': 'required'}})
  b.addHost('cell1', {host: 'h1', vcpus: 16, memory_mb: 65536, local_gb: 1000, aggregates: ['gold']})
  b.addFlavor({name: 'plain', vcpus: 2, memory_mb: 2048, root_gb: 10})
  b.addFlavor({name: 'numa', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:numa_nodes': '1'}})
  b.addFlavor({name: 'avx', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'trait:HW_CPU_X86_AVX2': 'required', 'trait:HW_NIC_SRIOV': 'forbidden'}})
  return b.build()
}

const names = (request: BootRequest, cfg = defaultSchedulerConfig()) => {
  const s = cloud()
  const got = requestTraitNames(s.nova_api, s.placement, request, [cfg])
  return got === null ? null : [...got].sort()
}

describe('requestTraitNames: the traits the placement query names', () => {
  it('a plain boot: the compute status trait and the sharing trait', () => {
    expect(names({flavor: 'plain'})).toEqual(['COMPUTE_STATUS_DISABLED', 'MISC_SHARES_VIA_AGGREGATE'])
  })

  it("the flavor's required and forbidden traits, the image's, the request filters'", () => {
    const cfg = {...defaultSchedulerConfig(), query_placement_for_image_type_support: true, image_metadata_prefilter: true}
    const got = names({flavor: 'avx', imageProperties: {'trait:STORAGE_DISK_SSD': 'required', hw_vif_model: 'virtio'}, imageDiskFormat: 'qcow2'}, cfg)
    expect(got).toEqual([
      'COMPUTE_IMAGE_TYPE_QCOW2',
      'COMPUTE_NET_VIF_MODEL_VIRTIO',
      'COMPUTE_STATUS_DISABLED',
      'HW_CPU_X86_AVX2',
      'HW_NIC_SRIOV',
      'MISC_SHARES_VIA_AGGREGATE',
      'STORAGE_DISK_SSD',
    ])
  })

  it('what the stand-in cannot tell (a host it has no compute node of, an unknown flavor): every trait', () => {
    expect(names({flavor: 'plain', host: 'h1'})).toBeNull()
    expect(names({flavor: 'nope'})).toBeNull()
  })
})

describe('requestReadsHostNuma', () => {
  const flavors = cloud().nova_api.flavors
  it('only a request with a NUMA topology, from the flavor or the flags', () => {
    expect(requestReadsHostNuma(flavors, {flavor: 'plain'})).toBe(false)
    expect(requestReadsHostNuma(flavors, {flavor: 'numa'})).toBe(true)
    expect(requestReadsHostNuma(flavors, {flavor: 'plain', extraSpecs: {'hw:cpu_policy': 'dedicated'}})).toBe(true)
    expect(requestReadsHostNuma(flavors, {flavor: 'plain', imageProperties: {hw_mem_page_size: 'large'}})).toBe(true)
  })

  it('a flavor found nowhere, or constraints nova-api refuses: read them', () => {
    expect(requestReadsHostNuma(flavors, {flavor: 'nope'})).toBe(true)
    expect(requestReadsHostNuma(flavors, {flavor: 'plain', extraSpecs: {'hw:numa_nodes': 'x'}})).toBe(true)
  })
})
