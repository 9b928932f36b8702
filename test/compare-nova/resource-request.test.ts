/**
 * nova's own ResourceRequest.from_request_spec (python3-nova, Zed) on the table the one
 * flavor -> resources rule is tested against (test/domain/resource-request-cases.ts): the merged
 * amounts (resources_from_flavor) and every group, read back from nova's to_querystring().
 */
import {describe, expect, it} from 'vitest'

import {RESOURCE_CASES, type ExpectedGroup} from '../domain/resource-request-cases.js'
import {COMPARE, runNova} from './driver.js'

/** Groups and group_policy from a GET /allocation_candidates query string as nova renders it. */
function groupsOfQuery(query: string): {groups: Record<string, ExpectedGroup>; policy?: string} {
  const groups: Record<string, ExpectedGroup> = {}
  const group = (s: string): ExpectedGroup => (groups[s] ??= {resources: {}, required: [], forbidden: []})
  let policy: string | undefined
  for (const [key, value] of new URLSearchParams(query)) {
    if (key === 'group_policy') policy = value
    let m = /^resources(.*)$/.exec(key)
    if (m) {
      const g = group(m[1] as string)
      for (const part of value.split(',').filter(Boolean)) {
        const [rc, n] = part.split(':')
        g.resources[rc as string] = Number(n)
      }
      continue
    }
    m = /^required(.*)$/.exec(key)
    if (m) {
      const g = group(m[1] as string)
      for (const t of value.split(',').filter(Boolean)) (t.startsWith('!') ? (g.forbidden as string[]) : (g.required as string[])).push(t.replace(/^!/, ''))
    }
  }
  for (const g of Object.values(groups)) {
    g.required?.sort()
    g.forbidden?.sort()
  }
  return {groups, policy}
}

describe.skipIf(!COMPARE)('compare with nova: flavor -> resources', () => {
  it('nova reads every case of the table as the table says', () => {
    const out = runNova<Array<{merged: Record<string, number>; query: string}>>({
      mode: 'resources',
      cases: RESOURCE_CASES.map((c) => ({flavor: c.flavor, is_bfv: Boolean(c.isBfv)})),
    })
    RESOURCE_CASES.forEach((c, i) => {
      const nova = out[i] as {merged: Record<string, number>; query: string}
      expect(nova.merged, c.name).toEqual(c.merged)
      const {groups, policy} = groupsOfQuery(nova.query)
      const want = Object.fromEntries(
        Object.entries(c.groups).map(([s, g]) => [
          s,
          {resources: g.resources, required: [...(g.required ?? [])].sort(), forbidden: [...(g.forbidden ?? [])].sort()},
        ]),
      )
      expect(groups, c.name).toEqual(want)
      expect(policy, c.name).toEqual(c.policy)
    })
  })
})
