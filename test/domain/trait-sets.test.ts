/**
 * The model's trait questions (src/lib/domain/trait-sets.ts), held against the plain Set-of-names
 * grouping they replace on the audit's path.
 */
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {CloudBuilder} from '../support/builders.js'

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
    expect(model.traitsByProvider.get(nfs.id)?.has('CUSTOM_NFS')).toBe(true)
    expect(model.traitsByProvider.get(cmp1.id)?.has('CUSTOM_NFS')).toBe(false)
  })
})
