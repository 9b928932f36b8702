import {describe, expect, it} from 'vitest'

import {newMemo, same} from '../../src/lib/util/intern.js'

describe('same (the reader memo of repeating column values)', () => {
  it('answers every value as given, across the switch from its short list to a Map', () => {
    const m = newMemo()
    const values = Array.from({length: 200}, (_, i) => `host-${i % 40}`)
    // Strings built at run time, as the driver's are: equal values, distinct copies.
    const got = values.map((v) => same(m, [...v].join('')))
    expect(got).toEqual(values)
    expect(m.map?.size).toBe(40)
    expect(m.list).toHaveLength(16)
  })

  it('keeps few long values in the list (no Map)', () => {
    const m = newMemo()
    const blobs = Array.from({length: 8}, (_, i) => JSON.stringify({cur: {name: `m${i}`, pad: 'x'.repeat(500)}}))
    for (let i = 0; i < 1000; i++) expect(same(m, blobs[(i * 7) % 8].slice(0))).toBe(blobs[(i * 7) % 8])
    expect(m.map).toBeNull()
    expect(m.list).toHaveLength(8)
  })
})
