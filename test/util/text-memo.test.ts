import {describe, expect, it} from 'vitest'

import {TextMemo} from '../../src/lib/util/text-memo.js'

describe('TextMemo', () => {
  it('makes each distinct text once, equal texts built apart included', () => {
    const made: string[] = []
    const memo = new TextMemo<string>()
    const texts = Array.from({length: 200}, (_, i) => `host-${String(i % 40).padStart(2, '0')}`)
    // Built at run time, as the driver's strings are: equal values, distinct copies.
    const got = texts.map((t) => memo.get([...t].join(''), (x) => (made.push(x), x)))
    expect(got).toEqual(texts)
    expect(made).toHaveLength(40)
  })

  it('keeps sharing past the probe when texts repeat (one flavor blob, many instances)', () => {
    const memo = new TextMemo<{n: number}>()
    let n = 0
    const blob = (i: number) => JSON.stringify({cur: {name: `m${i}`, pad: 'x'.repeat(500)}})
    // The probe's distinct texts, each met twice: half the lookups hit.
    for (let i = 0; i < TextMemo.PROBE; i++) for (let k = 0; k < 2; k++) memo.get(blob(i), () => ({n: n++}))
    expect(n).toBe(TextMemo.PROBE)
    const first = memo.get(blob(0), () => ({n: -1}))
    expect(memo.get(blob(0), () => ({n: -2}))).toBe(first)
    expect(memo.get(blob(TextMemo.PROBE + 1), () => ({n: 7}))).toEqual({n: 7})
    expect(memo.get(blob(TextMemo.PROBE + 1), () => ({n: 8}))).toEqual({n: 7})
  })

  it('stops looking once the probe found too few texts again (every loaded host its own topology)', () => {
    const memo = new TextMemo<number>()
    let n = 0
    const hits = TextMemo.PROBE / TextMemo.PROBE_HITS - 1
    for (let i = 0; i < hits; i++) memo.get('again', () => n++)
    for (let i = 0; n < TextMemo.PROBE; i++) memo.get(`host ${i}`, () => n++)
    expect(n).toBe(TextMemo.PROBE)
    // Past the probe: made afresh each time, the same value for the same text.
    expect(memo.get('host 0', (t) => t.length)).toBe(6)
    expect(memo.get('again', () => -1)).toBe(-1)
  })

  it('keeps looking at exactly PROBE / PROBE_HITS texts found again', () => {
    const memo = new TextMemo<number>()
    let n = 0
    memo.get('again', () => n++)
    for (let i = 0; i < TextMemo.PROBE / TextMemo.PROBE_HITS; i++) memo.get('again', () => -1)
    for (let i = 0; n < TextMemo.PROBE; i++) memo.get(`host ${i}`, () => n++)
    expect(memo.get('again', () => -1)).toBe(0)
  })
})
