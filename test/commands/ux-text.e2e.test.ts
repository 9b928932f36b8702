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

describe('did you mean, and --why per host', () => {
  it('a mistyped flavor suggests the nearest one', async () => {
    const r = await cloudctl(['simulate', 'boot', '--flavor', 'm1.smal', '-s', DEMO])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Hint: Did you mean m1.small?')
  })

  it('--why answers each host: a deleted compute node with its stale provider, a typo, a live host', async () => {
    const r = await cloudctl([
      'simulate',
      'boot',
      '--flavor',
      'm1.small',
      '--why',
      'cmp-r1-04',
      '--why',
      'cmp-r1-0',
      '--why',
      'cmp-r1-01',
      '-s',
      DEMO,
      '--max-width',
      '0',
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/--why cmp-r1-04: compute node deleted; its resource provider [0-9a-f-]{36} is stale: see `cloudctl audit providers`/)
    expect(r.stdout).toContain('--why cmp-r1-0: not a compute node of this snapshot; did you mean cmp-r1-01?')
    expect(r.stdout).toMatch(/^ {2}cmp-r1-01: \[\w+\]/m)
  })
})

describe('bad input says what was meant, never echoes the bytes', () => {
  it('`audit all FILE` suggests --snapshot FILE', async () => {
    const r = await cloudctl(['audit', 'all', DEMO])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(`Hint: Did you mean \`cloudctl audit all --snapshot ${DEMO}\`?`)
  })

  it('a binary file given as a snapshot: one line, none of its bytes', async () => {
    const {mkdtempSync, writeFileSync, rmSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-bin-'))
    try {
      const file = join(dir, 'snap.json')
      writeFileSync(file, Buffer.from([0x7b, 0x80, 0x81, 0xff, 0x55, 0x11, 0x7d]))
      const r = await cloudctl(['audit', 'all', '-s', file])
      expect(r.exitCode).toBe(2)
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(2)
      expect(r.stderr).not.toMatch(/[\u0080-\uffff]|\\x11|Unexpected token/)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
