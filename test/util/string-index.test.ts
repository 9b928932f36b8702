import {describe, expect, it} from 'vitest'

import {StringIndex} from '../../src/lib/util/string-index.js'

describe('StringIndex', () => {
  it('gives each distinct string its insertion position, as a Map to positions would', () => {
    const index = new StringIndex()
    const reference = new Map<string, number>()
    // Through several growths; uuid-like, sequential, empty and non-ASCII keys, each added twice.
    const keys = Array.from({length: 20_000}, (_, i) =>
      i % 4 === 0 ? `${i.toString(16).padStart(8, '0')}-0000-4000-8000-000000000000` : i % 4 === 1 ? `c${i}` : i % 4 === 2 ? 'é'.repeat(i % 7) : String(i % 50),
    )
    for (const k of [...keys, ...keys]) {
      if (!reference.has(k)) reference.set(k, reference.size)
      expect(index.add(k)).toBe(reference.get(k))
    }
    expect(index.size).toBe(reference.size)
    expect(index.keys).toEqual([...reference.keys()])
    for (const [k, v] of reference) expect(index.get(k)).toBe(v)
    for (const k of ['absent', 'c0', 'é'.repeat(8), '00000001-0000-4000-8000-000000000000']) expect(index.get(k)).toBe(reference.get(k))
  })
  it('near() answers as get() whatever the hint', () => {
    const index = new StringIndex()
    const keys = Array.from({length: 100}, (_, i) => `k${i}`)
    for (const k of keys) index.add(k)
    for (const [i, k] of keys.entries()) for (const hint of [i, i - 1, i + 1, 0, 99, 100, -1]) expect(index.near(k, hint)).toBe(i)
    expect(index.near('absent', 0)).toBeUndefined()
    expect(index.near('absent', 100)).toBeUndefined()
  })
})
