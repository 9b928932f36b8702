import {describe, expect, it} from 'vitest'

import {itself, TextMemo} from '../../src/lib/util/text-memo.js'

describe('TextMemo', () => {
  it('makes each distinct text once, across the move of a crowded length to the hashed map', () => {
    const made: string[] = []
    const memo = new TextMemo<string>()
    // 40 distinct texts of one length: the bucket holds 8, then the length moves to the map.
    const texts = Array.from({length: 200}, (_, i) => `host-${String(i % 40).padStart(2, '0')}`)
    // Built at run time, as the driver's strings are: equal values, distinct copies.
    const got = texts.map((t) => memo.get([...t].join(''), (x) => (made.push(x), x)))
    expect(got).toEqual(texts)
    expect(made).toHaveLength(40)
  })

  it('keeps few long texts apart by length and content', () => {
    const memo = new TextMemo<number>()
    const blobs = Array.from({length: 8}, (_, i) => JSON.stringify({cur: {name: `m${i}`, pad: 'x'.repeat(500 + (i % 2))}}))
    let n = 0
    for (let i = 0; i < 1000; i++) expect(memo.get(blobs[(i * 7) % 8].slice(0), () => (n++, (i * 7) % 8))).toBe((i * 7) % 8)
    expect(n).toBe(8)
    expect(new TextMemo<string>().get('a', itself)).toBe('a')
  })
})
