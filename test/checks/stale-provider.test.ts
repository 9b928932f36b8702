/**
 * An instance still running on a host whose nova-compute service (and compute node row) was deleted
 * while its provider was kept: the allocation sits on the provider of the instance's own node, so
 * it is no leak; provider.stale reports the provider. The counter-cases keep allocation.wrong-provider
 * for allocations that really are elsewhere.
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CloudBuilder} from '../support/builders.js'

function busyCloud() {
  const b = new CloudBuilder({seed: 5, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'compute1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  b.addHost('cell1', {host: 'busy1', vcpus: 16, memory_mb: 32768, local_gb: 500})
  const stuck = b.addInstance('busy1', 'm1.small').row.uuid
  const elsewhere = b.addInstance('compute1', 'm1.small').row.uuid
  return {b, stuck, elsewhere}
}

const codes = (s: ReturnType<CloudBuilder['build']>) =>
  runChecks(buildModel(s), {checks: ['leaks', 'providers']}).findings.map((f) =>
    `${f.code} ${f.subject.node ?? f.subject.host} ${f.subject.consumer_uuid ?? ''}`.trim(),
  )

describe('leaks: a provider whose compute node or service is deleted', () => {
  it('an instance still on that node is not a leak; provider.stale tells the story', () => {
    const {b, stuck} = busyCloud()
    b.deleteComputeService('busy1', {keepProvider: true})
    const report = runChecks(buildModel(b.build()), {checks: ['leaks', 'providers']})
    expect(report.findings.map((f) => f.code)).toEqual(['provider.stale'])
    const [stale] = report.findings
    expect(stale.subject.node).toBe('busy1')
    expect(stale.evidence.cause).toBe('compute-node-deleted')
    expect(stale.message).toMatch(/1 consumer\(s\) still hold allocations on it/)
    expect((stale.evidence.blocking_allocations as Array<{consumer_uuid: string}>).map((a) => a.consumer_uuid)).toEqual([stuck, stuck, stuck])
  })

  it('the same holds when only the service is deleted (the node row stays live)', () => {
    const {b} = busyCloud()
    const s = b.build()
    const svc = s.nova.services.find((x) => x.host === 'busy1' && x.binary === 'nova-compute')!
    svc.deleted = svc.id
    expect(codes(s)).toEqual(['provider.stale busy1'])
  })

  it('without any compute node row (archived), the provider stands for the node it is named after', () => {
    const {b} = busyCloud()
    b.deleteComputeService('busy1', {keepProvider: true})
    const s = b.build()
    s.nova.compute_nodes = s.nova.compute_nodes.filter((cn) => cn.host !== 'busy1')
    const report = runChecks(buildModel(s), {checks: ['leaks', 'providers']})
    expect(report.findings.map((f) => [f.code, f.evidence.cause])).toEqual([['provider.stale', 'no-compute-node']])
  })

  it('an instance of another node holding allocations on the stale provider is still wrong-provider', () => {
    const {b, elsewhere} = busyCloud()
    b.addAllocations(elsewhere, 'busy1', {VCPU: 1})
    b.deleteComputeService('busy1', {keepProvider: true})
    expect(codes(b.build()).sort()).toEqual([`allocation.wrong-provider busy1 ${elsewhere}`, 'provider.stale busy1'])
  })

  it('an instance on the deleted node holding allocations on another live node is still wrong-provider', () => {
    const {b, stuck} = busyCloud()
    b.addAllocations(stuck, 'compute1', {VCPU: 1})
    b.deleteComputeService('busy1', {keepProvider: true})
    expect(codes(b.build()).sort()).toEqual([`allocation.wrong-provider compute1 ${stuck}`, 'provider.stale busy1'])
  })
})

describe('providers: a compute node finds its service by host, as nova does', () => {
  it('service_id NULL (every node a modern nova-compute creates) is a healthy node, not a stale provider', () => {
    const {b} = busyCloud()
    const s = b.build()
    expect(s.nova.compute_nodes.every((cn) => cn.service_id === null)).toBe(true)
    expect(codes(s)).toEqual([])
  })

  it('an old row whose service_id names a deleted service, with a live service on the host, is healthy', () => {
    const {b} = busyCloud()
    const s = b.build()
    const live = s.nova.services.find((x) => x.host === 'busy1' && x.binary === 'nova-compute')!
    s.nova.services.push({...live, id: 999, uuid: 'old-service', deleted: 999})
    s.nova.compute_nodes.find((cn) => cn.host === 'busy1')!.service_id = 999
    expect(codes(s)).toEqual([])
  })

  it('a live service of another binary on the host does not keep the node alive', () => {
    const {b} = busyCloud()
    const s = b.build()
    const svc = s.nova.services.find((x) => x.host === 'busy1' && x.binary === 'nova-compute')!
    svc.deleted = svc.id
    s.nova.services.push({...svc, id: 998, uuid: 'conductor', binary: 'nova-conductor', deleted: 0})
    expect(codes(s)).toEqual(['provider.stale busy1'])
  })
})
