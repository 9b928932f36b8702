import {describe, expect, it} from 'vitest'

import {flatPlainValue, isFlatPlainObject, jsonTopLevel} from '../../src/lib/domain/json-scan.js'

const KEYS = ['num_instances', 'io_workload', 'failed_builds', 'num_proj_0a1b']

// Texts nova writes, and texts built to catch a pattern matching where JSON.parse would not; `true`
// where the fast path must take them (the others go to the real parser).
const TEXTS: Array<[string, boolean]> = [
  ['{"failed_builds": "0", "num_instances": "21", "io_workload": "3", "num_proj_0a1b": "2"}', true],
  ['{}', true],
  [' {\n\t"num_instances" :"7" ,\r\n "io_workload":"1"}\n', true],
  ['{"num_instances": "1", "num_instances": "4"}', true],
  ['{"x": "num_instances", "io_workload": "num_instances"}', true],
  ['{"num_instances": "x1", "failed_builds": ""}', true],
  ['{"a": "\\"num_instances\\": \\"9\\""}', false],
  ['{"num_\\u0069nstances": "6"}', false],
  ['{"num_instances": "6\u0001"}', false],
  ['{"num_instances": "6\t"}', false],
  ['{"num_instances": 5}', false],
  ['{"num_instances": null}', false],
  ['{"num_instances": "5",}', false],
  ['{"num_instances": "5"} x', false],
  ['[{"num_instances": "1"}]', false],
  ['{"nested": {"num_instances": "1"}}', false],
  ['{"num_instances": "12" "io_workload": "1"}', false],
  ['{"a": "b"}\u00a0', false],
]

function viaParse(text: string): {flat: boolean; values: Array<string | undefined>} {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return {flat: false, values: KEYS.map(() => undefined)}
  }
  const flat = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string')
  return {flat, values: KEYS.map((k) => (flat ? (value as Record<string, string>)[k] : undefined))}
}

describe('flat objects of plain strings (compute_nodes.stats)', () => {
  it.each(TEXTS)('%j: taken by the fast path: %s, with the values JSON.parse gives', (text, fast) => {
    expect(isFlatPlainObject(text)).toBe(fast)
    if (!fast) return
    const expected = viaParse(text)
    expect(expected.flat).toBe(true)
    expect(jsonTopLevel(text)).toBe('object')
    expect(KEYS.map((k) => flatPlainValue(text, k))).toEqual(expected.values)
  })
})
