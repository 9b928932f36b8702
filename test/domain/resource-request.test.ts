/**
 * The one flavor -> placement resources rule (domain/resource-request.ts) against nova's extra-spec
 * cases (resource-request-cases.ts, which test/compare-nova/resource-request.test.ts holds nova to),
 * and proof that its users ask it: the scheduler engine, the leak checks and the heal repair agree
 * on a flavor whose keys and amounts only nova's grammar reads (a suffix without an underscore, an
 * amount with a digit separator), and each of them calls it.
 */
import {beforeEach, describe, expect, it, vi} from 'vitest'

import {resourcesFromFlavor as checksResources, storedPinning} from '../../src/lib/checks/flavor-resources.js'
import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import * as domain from '../../src/lib/domain/resource-request.js'
import {buildResourceRequest, parseResourceAmount, XS_KEYPAT} from '../../src/lib/domain/resource-request.js'
import {defaultSchedulerConfig} from '../../src/lib/engine/config.js'
import {buildRequestSpec, placementRequestFor} from '../../src/lib/engine/request.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {writeSteps} from '../../src/lib/repairs/plan.js'
import {CloudBuilder, flavorResources} from '../support/builders.js'
import {RESOURCE_CASES, type ExpectedGroup} from './resource-request-cases.js'

// Call-through spies: the users below must reach the one rule, not a copy of it.
vi.mock('../../src/lib/domain/resource-request.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/lib/domain/resource-request.js')>()
  return {...m, buildResourceRequest: vi.fn(m.buildResourceRequest), resourcesFromFlavor: vi.fn(m.resourcesFromFlavor)}
})

const groupsOf = (
  groups: Iterable<{suffix: string; resources: Map<string, number>; required: Set<string>; forbidden: Set<string>}>,
): Record<string, ExpectedGroup> =>
  Object.fromEntries(
    [...groups].map((g) => [g.suffix, {resources: Object.fromEntries(g.resources), required: [...g.required].sort(), forbidden: [...g.forbidden].sort()}]),
  )
const normalised = (groups: Record<string, ExpectedGroup>): Record<string, ExpectedGroup> =>
  Object.fromEntries(
    Object.entries(groups).map(([s, g]) => [s, {resources: g.resources, required: [...(g.required ?? [])].sort(), forbidden: [...(g.forbidden ?? [])].sort()}]),
  )

describe('the flavor -> resources rule, on nova’s cases', () => {
  for (const c of RESOURCE_CASES)
    it(c.name, () => {
      const bootFromVolume = Boolean(c.isBfv)
      const req = buildResourceRequest(c.flavor, {bootFromVolume, pinning: storedPinning(c.flavor)})
      expect(groupsOf(req.groups.values())).toEqual(normalised(c.groups))
      expect(req.merged()).toEqual(c.merged)
      expect(req.policy ?? undefined).toEqual(c.policy)
      // the audit's reading of a stored flavor
      expect(checksResources(c.flavor, {bootFromVolume}).resources).toEqual(c.merged)
      // the test builders allocate what nova would
      expect(
        flavorResources(
          {
            id: 1,
            flavorid: 'f',
            name: 'f',
            is_public: true,
            disabled: false,
            rxtx_factor: 1,
            ...c.flavor,
            root_gb: c.flavor.root_gb ?? 0,
            ephemeral_gb: c.flavor.ephemeral_gb ?? 0,
          } as never,
          bootFromVolume,
        ).resources,
      ).toEqual(c.merged)
    })

  it('the engine builds the same groups for every case', () => {
    const cfg = defaultSchedulerConfig()
    for (const c of RESOURCE_CASES) {
      const b = new CloudBuilder()
      b.addCell('cell1')
      b.addHost('cell1', {host: 'h1', vcpus: 16, memory_mb: 65536, local_gb: 1000})
      b.addFlavor({
        name: 'f',
        vcpus: c.flavor.vcpus,
        memory_mb: c.flavor.memory_mb,
        root_gb: c.flavor.root_gb ?? 0,
        ephemeral_gb: c.flavor.ephemeral_gb ?? 0,
        swap: c.flavor.swap,
        extra_specs: c.flavor.extra_specs,
      })
      const model = buildModel(b.build())
      const spec = buildRequestSpec(model, {flavor: 'f', bootFromVolume: Boolean(c.isBfv)}, cfg)
      const {request} = placementRequestFor(model, spec, cfg)
      expect(groupsOf(request.groups), c.name).toEqual(normalised(c.groups))
    }
  })

  it('reads keys by nova’s XS_KEYPAT and amounts by Python’s int()', () => {
    expect(XS_KEYPAT.exec('resourcesFOO:VCPU')?.slice(1)).toEqual(['resources', 'FOO', 'VCPU'])
    expect(XS_KEYPAT.exec('trait:')?.slice(1)).toEqual(['trait', undefined, ''])
    expect(XS_KEYPAT.exec('resource:VCPU')).toBeNull()
    expect(['7', ' 7\t', '+7', '7_0', '-0', '007'].map(parseResourceAmount)).toEqual([7, 7, 7, 70, 0, 7])
    expect(['-7', '7.0', '7_', '_7', '7__0', '', ' ', '0b1', '1e2', '٣'].map(parseResourceAmount)).toEqual(Array(10).fill(null))
  })
})

describe('engine, leak checks and heal all ask the one rule', () => {
  // Old copies disagreed on both: 'resourcesX' (no underscore) is a group to nova, and
  // ' 1_024 ' is 1024 to Python's int() where parseInt read 1.
  const specs = {'resourcesX:VCPU': '3', 'resources:MEMORY_MB': ' 1_024 '}
  const cloud = () => {
    const b = new CloudBuilder()
    b.addCell('cell1')
    b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500})
    b.addFlavor({name: 'odd', vcpus: 2, memory_mb: 2048, root_gb: 20, extra_specs: specs})
    const inst = b.addInstance('cmp1', 'odd').row
    return {s: b.build(), uuid: inst.uuid}
  }
  beforeEach(() => {
    vi.mocked(domain.buildResourceRequest).mockClear()
    vi.mocked(domain.resourcesFromFlavor).mockClear()
  })

  it('simulate: the placement request', () => {
    const {s} = cloud()
    const model = buildModel(s)
    const cfg = defaultSchedulerConfig()
    const {request} = placementRequestFor(model, buildRequestSpec(model, {flavor: 'odd'}, cfg), cfg)
    expect(groupsOf(request.groups)).toEqual(normalised({'': {resources: {MEMORY_MB: 1024, DISK_GB: 20}}, X: {resources: {VCPU: 3}}}))
    expect(domain.buildResourceRequest).toHaveBeenCalled()
  })

  it('audit: an instance holding what nova allocated is clean; one VCPU short is found', () => {
    const {s, uuid} = cloud()
    const mine = (f: {subject: {consumer_uuid?: string; instance_uuid?: string}}) => f.subject.consumer_uuid === uuid || f.subject.instance_uuid === uuid
    expect(runChecks(buildModel(s), {checks: ['leaks']}).findings.filter(mine)).toEqual([])
    expect(domain.resourcesFromFlavor).toHaveBeenCalled()
    const vcpu = s.placement.allocations.find((a) => a.consumer_id === uuid && a.resource_class_id === 0)
    if (!vcpu) throw new Error('no VCPU allocation')
    vcpu.used = 2
    const found = runChecks(buildModel(s), {checks: ['leaks']}).findings.filter(mine)
    expect(found.map((f) => f.code)).toEqual(['allocation.amount-mismatch'])
    expect(found[0]?.evidence).toMatchObject({expected: {VCPU: 3, MEMORY_MB: 1024, DISK_GB: 20}, differences: {VCPU: {expected: 3, allocated: 2}}})
  })

  it('heal: corrects the amount to what the rule says', () => {
    const {s, uuid} = cloud()
    const vcpu = s.placement.allocations.find((a) => a.consumer_id === uuid && a.resource_class_id === 0)
    if (!vcpu) throw new Error('no VCPU allocation')
    vcpu.used = 2
    vi.mocked(domain.resourcesFromFlavor).mockClear()
    const steps = writeSteps(planLeaks(buildModel(s), {heal: true}))
    const rows = steps.filter((st) => st.table === 'allocations')
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({op: 'update', expect: {resource_class_id: 0, used: 2}, set: {used: 3}})
    expect(domain.resourcesFromFlavor).toHaveBeenCalled()
  })
})
