/**
 * Provider traits as sorted integer sets (src/lib/domain/trait-sets.ts) and the model's trait
 * questions, held against the plain Set-of-names grouping they replace on the audit's path.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {TraitSets, traitSetsOf} from '../../src/lib/domain/trait-sets.js'
import {CloudBuilder} from '../support/builders.js'

const traits = [
  {id: 7, name: 'HW_CPU_X86_AVX2'},
  {id: 3, name: 'COMPUTE_STATUS_DISABLED'},
  {id: 12, name: 'MISC_SHARES_VIA_AGGREGATE'},
  {id: 5, name: 'CUSTOM_GOLD'},
]
const row = (resource_provider_id: number, trait_id: number) => ({resource_provider_id, trait_id})

describe('TraitSets', () => {
  // Out of order, a duplicate row, a row naming no trait (99), a provider met twice apart.
  const rows = [row(1, 7), row(1, 3), row(2, 12), row(1, 7), row(1, 99), row(3, 99), row(2, 5), row(1, 12)]
  const sets = new TraitSets(traits, rows)

  it('holds each provider its known trait ids, ascending, each once', () => {
    expect([...sets.idsOf(1)]).toEqual([3, 7, 12])
    expect([...sets.idsOf(2)]).toEqual([5, 12])
    expect([...sets.idsOf(3)]).toEqual([])
    expect([...sets.idsOf(4)]).toEqual([])
  })

  it('answers membership by id and by name as a Set of names would', () => {
    const names = new Map(traits.map((t) => [t.id, t.name]))
    const byName = new Map<number, Set<string>>()
    for (const r of rows) {
      const n = names.get(r.trait_id)
      if (n !== undefined) byName.set(r.resource_provider_id, (byName.get(r.resource_provider_id) ?? new Set()).add(n))
    }
    for (const rp of [1, 2, 3, 4]) {
      for (const t of [...traits, {id: 99, name: 'NOT_A_TRAIT'}]) {
        expect(sets.hasNamed(rp, t.name)).toBe(byName.get(rp)?.has(t.name) ?? false)
        expect(sets.has(rp, sets.idOf(t.name))).toBe(byName.get(rp)?.has(t.name) ?? false)
      }
    }
    expect(sets.idOf('CUSTOM_GOLD')).toBe(5)
    expect(sets.idOf('NOT_A_TRAIT')).toBeUndefined()
    expect(sets.providersWith('MISC_SHARES_VIA_AGGREGATE').sort()).toEqual([1, 2])
    expect(sets.providersWith('NOT_A_TRAIT')).toEqual([])
  })
})

describe('CloudModel trait questions', () => {
  function cloud() {
    const b = new CloudBuilder({requestSpecs: false})
    b.addCell('cell1')
    b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
    b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 32768, local_gb: 500})
    b.addHost('cell1', {host: 'cmp2', vcpus: 16, memory_mb: 32768, local_gb: 500})
    b.addRootProvider({name: 'nfs', traits: ['MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_NFS'], inventories: {DISK_GB: {total: 1000}}})
    return b.build()
  }

  it('providersWithTrait is the providers whose traitsByProvider set has the name', () => {
    const s = cloud()
    const nfs = s.placement.resource_providers.find((p) => p.name === 'nfs')!
    // A second trait row of the same name under another id (hand-made), and a row naming no trait.
    const other = Math.max(...s.placement.traits.map((t) => t.id)) + 1
    s.placement.traits.push({...s.placement.traits[0], id: other, name: 'MISC_SHARES_VIA_AGGREGATE'})
    const cmp1 = s.placement.resource_providers.find((p) => p.name === 'cmp1')!
    s.placement.resource_provider_traits.push({...s.placement.resource_provider_traits[0], resource_provider_id: cmp1.id, trait_id: other})
    s.placement.resource_provider_traits.push({...s.placement.resource_provider_traits[0], resource_provider_id: cmp1.id, trait_id: other + 1})
    const model = buildModel(s)
    const expected = [...model.traitsByProvider].filter(([, names]) => names.has('MISC_SHARES_VIA_AGGREGATE')).map(([id]) => id)
    expect([...model.providersWithTrait('MISC_SHARES_VIA_AGGREGATE')].sort()).toEqual(expected.sort())
    expect(expected.sort()).toEqual([nfs.id, cmp1.id].sort())
    expect([...model.providersWithTrait('CUSTOM_NOT_THERE')]).toEqual([])
    expect(traitSetsOf(s.placement).hasNamed(nfs.id, 'CUSTOM_NFS')).toBe(true)
    expect(traitSetsOf(s.placement).hasNamed(cmp1.id, 'CUSTOM_NFS')).toBe(false)
  })
})
