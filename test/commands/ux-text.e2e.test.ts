/**
 * The report's header and what operators read in errors (issue 29, items 10 and 13), through the
 * built CLI (npm run build first).
 */
import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

const DEMO = 'examples/demo-cloud.yaml'

describe('the human audit report', () => {
  it('opens with what was read, when, the release and the size of the cloud', async () => {
    const r = await cloudctl(['audit', 'all', '-s', DEMO])
    const [read, captured] = r.stdout.split('\n')
    expect(read).toBe('Read generated: examples/demo-cloud.yaml (scripts/make-demo.ts)')
    expect(captured).toMatch(/^Captured 2024-05-14T09:30:00\.000Z · release not recorded · 3 cell\(s\) · 11 compute host\(s\)$/)
  })

  it('names the snapshot check only when it finds something', async () => {
    const r = await cloudctl(['audit', 'all', '-s', DEMO])
    expect(r.stdout).not.toContain('snapshot: no findings')
    expect(r.stdout).toContain('✔ aggregates: no findings')
  })
})

describe('errors', () => {
  it('a database URL that is not one: its text not shown, in single parentheses', async () => {
    const r = await cloudctl(['audit', 'all', '--api-db', 'notaurl', '--placement-db', 'notaurl'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('(text not shown)')
    expect(r.stderr).not.toContain('((')
    expect(r.stderr).not.toContain('notaurl')
  })
})
