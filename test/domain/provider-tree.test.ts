import {describe, expect, it} from 'vitest'

import {brokenProviderTrees} from '../../src/lib/domain/provider-tree.js'
import type {ResourceProvider} from '../../src/lib/domain/snapshot.js'

/** Providers from [id, parent, root] triples. */
function rows(spec: Array<[number, number | null, number | null]>): ResourceProvider[] {
  return spec.map(([id, parent, root]) => ({id, uuid: `rp-${id}`, name: `rp${id}`, generation: 1, parent_provider_id: parent, root_provider_id: root}))
}

function broken(spec: Array<[number, number | null, number | null]>): Record<number, readonly number[]> {
  const rps = rows(spec)
  return Object.fromEntries(brokenProviderTrees(rps, new Map(rps.map((p) => [p.id, p]))))
}

describe('brokenProviderTrees', () => {
  it('a well-formed forest has no broken tree', () => {
    expect(
      broken([
        [1, null, 1],
        [2, 1, 1],
        [3, 2, 1],
        [4, null, 4],
        [5, 4, null],
      ]),
    ).toEqual({})
  })

  it('a self-parent', () => {
    expect(
      broken([
        [1, null, 1],
        [2, 2, 2],
      ]),
    ).toEqual({2: [2]})
  })

  it("two providers that are each other's parent, and a child under them", () => {
    expect(
      broken([
        [1, null, 1],
        [3, 4, 3],
        [4, 3, 4],
        [5, 4, 3],
      ]),
    ).toEqual({3: [3, 4], 4: [3, 4], 5: [3, 4]})
  })

  it('a longer cycle, whichever member the walk starts at, given from its smallest id in parent order', () => {
    expect(
      broken([
        [7, 5, null],
        [5, 6, null],
        [6, 7, null],
      ]),
    ).toEqual({5: [5, 6, 7], 6: [5, 6, 7], 7: [5, 6, 7]})
  })

  it('a root whose root_provider_id names a member of a loop, and its child, in either row order', () => {
    const spec: Array<[number, number | null, number | null]> = [
      [1, null, 3],
      [2, 1, 1],
      [3, 4, 3],
      [4, 3, 3],
      [9, null, 9],
    ]
    const want = {1: [3, 4], 2: [3, 4], 3: [3, 4], 4: [3, 4]}
    expect(broken(spec)).toEqual(want)
    expect(broken([...spec].reverse())).toEqual(want)
  })

  it('10 000 providers in one cycle are judged in linear time, without recursion', () => {
    const spec: Array<[number, number | null, number | null]> = Array.from({length: 10_000}, (_, i) => [i + 1, ((i + 1) % 10_000) + 1, null])
    const out = broken(spec)
    expect(Object.keys(out)).toHaveLength(10_000)
    expect(out[1]).toHaveLength(10_000)
  })
})
