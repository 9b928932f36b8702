/**
 * The audit view (Snapshot.scope 'audit', db/read-cell.ts AUDIT_VIEW): a live audit reads every row
 * but not the cell columns no audit reads. Held here to what matters: on generated clouds with every
 * fault planted (the generator's own shapes and the realistic ones made from what nova wrote), the
 * audits find exactly what they find on a full capture of the same databases, and the view holds the
 * full capture's rows with null in the left-out columns only, and of resource_provider_traits the
 * rows of the traits the audits ask about (AUDIT_TRAITS) only.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {captureLive} from '../../src/lib/db/capture.js'
import {AUDIT_VIEW} from '../../src/lib/db/read-cell.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {SHARING_TRAIT} from '../../src/lib/domain/placement-capacity.js'
import {AUDIT_TRAITS} from '../../src/lib/domain/trait-sets.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {FAULT_CODES, type GenerateOptions, generateCloud} from '../support/generator.js'

const nowSql = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ')
const everyFault = Object.fromEntries(FAULT_CODES.map((c) => [c, 1]))
// The realistic shapes' hosts are pinned full by the generator: it cannot plant usage.negative-free on them.
const realFaults = Object.fromEntries(FAULT_CODES.filter((c) => c !== 'usage.negative-free').map((c) => [c, 1]))

// distinctHosts: every host's NUMA topology its own text (a loaded cloud), read in the scan, not by digest.
const CLOUDS: Array<{name: string; opts: GenerateOptions; distinctHosts?: boolean}> = [
  {name: 'generator shapes', opts: {seed: 7, cells: 2, hostsPerCell: 24, migrationsInProgress: 2, completedMigrations: 2, faults: everyFault}},
  {
    name: 'distinct host topologies',
    opts: {seed: 5, cells: 2, hostsPerCell: 24, migrationsInProgress: 2, completedMigrations: 2, faults: everyFault},
    distinctHosts: true,
  },
  {
    name: 'real shapes',
    opts: {seed: 11, cells: 2, hostsPerCell: 24, shapes: 'real', deletedInstances: 20, migrationsInProgress: 2, completedMigrations: 2, faults: realFaults},
  },
]

describe.each(CLOUDS)('audit view of a live cloud ($name)', ({name, opts, distinctHosts}) => {
  let cloud: TestCloud | undefined
  let full: Snapshot
  let view: Snapshot
  beforeAll(async () => {
    const generated = generateCloud({...opts, now: nowSql()})
    addSharingProvider(generated.snapshot)
    // A node that reports no NUMA topology (a baremetal node does not).
    const last = generated.snapshot.nova.compute_nodes.at(-1)
    if (last) last.numa_topology = null
    // Trailing blanks keep each text the JSON it was.
    if (distinctHosts) generated.snapshot.nova.compute_nodes.forEach((cn, i) => cn.numa_topology !== null && (cn.numa_topology += ' '.repeat(i + 1)))
    cloud = await createTestCloud(`auditview_${name.split(' ')[0]}`, {cells: ['cell1', 'cell2']})
    await seedSnapshot(generated.snapshot, cloud)
    const source = {apiDb: cloud.apiUrl, placementDb: cloud.placementUrl}
    full = await captureLive(source)
    view = await captureLive({...source, auditView: true})
  })
  afterAll(async () => {
    await cloud?.drop()
  })

  it('says what it holds: scope audit, a full capture none', () => {
    expect(view.scope).toBe('audit')
    expect(full.scope).toBeUndefined()
  })

  it('refuses a trait question its rows cannot answer', () => {
    const model = buildModel(view)
    expect(model.providersWithTrait(SHARING_TRAIT).size).toBe(1)
    expect(() => model.providersWithTrait('HW_CPU_X86_AVX2')).toThrow(/AUDIT_TRAITS/)
    expect(() => model.traitsOf(1)).toThrow(/AUDIT_TRAITS/)
    expect(
      buildModel(full)
        .traitsOf(view.placement.resource_provider_traits[0]?.resource_provider_id ?? -1)
        .has(SHARING_TRAIT),
    ).toBe(true)
  })

  it('finds exactly what a full capture finds', () => {
    const findings = (s: Snapshot) => runChecks(buildModel(s), {}).findings
    const expected = findings(full)
    // Every planted fault is there to be found: an empty report would prove nothing.
    expect(new Set(expected.map((f) => f.check)).size).toBeGreaterThanOrEqual(6)
    expect(findings(view)).toEqual(expected)
  })

  it('holds the full rows, null in the left-out columns only', () => {
    const leftOut = (table: keyof typeof AUDIT_VIEW, row: object): object => ({...row, ...Object.fromEntries(AUDIT_VIEW[table].map((c) => [c, null]))})
    expect(view.nova.compute_nodes).toEqual(full.nova.compute_nodes.map((r) => leftOut('compute_nodes', r)))
    expect(view.nova.instances).toEqual(
      full.nova.instances.map((r) => ({...leftOut('instances', r), extra: r.extra === null ? null : leftOut('instance_extra', r.extra)})),
    )
    // The left-out columns held values in the full capture: the view did leave something out.
    expect(full.nova.compute_nodes.some((r) => r.cpu_info !== null && r.cpu_info !== '')).toBe(true)
    expect(full.nova.instances.some((r) => r.display_name !== null && r.extra?.pci_requests !== null)).toBe(true)
    // Host NUMA topologies are read by digest where hosts share texts, in the scan where each is its own; a NULL in both.
    const topologies = full.nova.compute_nodes.map((cn) => cn.numa_topology)
    if (distinctHosts) expect(new Set(topologies).size).toBe(topologies.length)
    else expect(new Set(topologies).size).toBeLessThan(topologies.length)
    expect(topologies).toContain(null)
    const auditTraitIds = new Set(full.placement.traits.filter((t) => AUDIT_TRAITS.has(t.name)).map((t) => t.id))
    expect(view.placement.resource_provider_traits).toEqual(full.placement.resource_provider_traits.filter((t) => auditTraitIds.has(t.trait_id)))
    expect(view.placement.resource_provider_traits.length).toBeGreaterThan(0)
    expect(full.placement.resource_provider_traits.length).toBeGreaterThan(view.placement.resource_provider_traits.length)
    const placementRest = (s: Snapshot) => ({...s.placement, resource_provider_traits: null})
    expect(placementRest(view)).toEqual(placementRest(full))
    expect({...view, nova: null, placement: null, scope: undefined, captured_at: null}).toEqual({...full, nova: null, placement: null, captured_at: null})
    expect(view.nova.services).toEqual(full.nova.services)
    expect(view.nova.migrations).toEqual(full.nova.migrations)
  })
})

/**
 * A shared-storage provider as placement holds one: a root provider with DISK_GB, the sharing trait
 * and a host aggregate's placement aggregate. Without its trait rows the audits would take it for a
 * stale root provider: the view must keep them.
 */
function addSharingProvider(s: Snapshot): void {
  const p = s.placement
  const id = Math.max(...p.resource_providers.map((rp) => rp.id)) + 1
  p.resource_providers.push({
    id,
    uuid: '5ba2ed00-0000-4000-8000-00000000d15c',
    name: 'shared-storage-1',
    generation: 2,
    root_provider_id: id,
    parent_provider_id: null,
  })
  const inventoryId = Math.max(...p.inventories.map((i) => i.id)) + 1
  p.inventories.push({
    id: inventoryId,
    resource_provider_id: id,
    resource_class_id: 2,
    total: 100000,
    reserved: 0,
    min_unit: 1,
    max_unit: 100000,
    step_size: 1,
    allocation_ratio: 1,
  })
  let trait = p.traits.find((t) => t.name === SHARING_TRAIT)
  if (!trait) p.traits.push((trait = {id: Math.max(0, ...p.traits.map((t) => t.id)) + 1, name: SHARING_TRAIT}))
  p.resource_provider_traits.push({resource_provider_id: id, trait_id: trait.id})
  const agg = p.resource_provider_aggregates[0]
  if (!agg) throw new Error('the generated cloud has no provider aggregate to share through')
  p.resource_provider_aggregates.push({resource_provider_id: id, aggregate_id: agg.aggregate_id})
}
