import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// Repair plans as an operator reads them, through the built CLI (npm run build first), on the demo.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

describe('repair plans say what they do', () => {
  it('repair pinning --force shows a pinned_cpus diff per NUMA cell, the whole blobs only in --json', async () => {
    const r = await cloudctl(['repair', 'pinning', ...DEMO, '--force'], {env: {COLUMNS: '120'}})
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toMatch(/NUMA cell 0: 4-7 -> \(none\)/)
    expect(r.stdout).toMatch(/NUMA cell 1: 12-15 -> \(none\)/)
    expect(r.stdout).not.toContain('nova_object')
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120)
    const j = JSON.parse((await cloudctl(['repair', 'pinning', ...DEMO, '--force', '--json'])).stdout) as {plan: {steps: Array<{op: string; set?: {numa_topology?: string}}>}}
    const update = j.plan.steps.find((s) => s.op === 'update')
    expect(update?.set?.numa_topology).toContain('"pinned_cpus": []')
  })

  it('repair leaks names only the databases it writes to and numbers its steps from 1', async () => {
    const r = await cloudctl(['repair', 'leaks', ...DEMO], {env: {COLUMNS: '200'}})
    expect(r.exitCode).toBe(3)
    const j = JSON.parse((await cloudctl(['repair', 'leaks', ...DEMO, '--json'])).stdout) as {plan: {steps: Array<{op: string; db: string}>}}
    const writes = j.plan.steps.filter((s) => s.op !== 'check')
    const dbs = new Set(writes.map((s) => s.db))
    expect(dbs).toEqual(new Set(['placement']))
    expect(r.stdout).toContain(`${writes.length} write(s) in placement;`)
    expect(r.stdout).not.toMatch(/-> cell cell0/)
    const numbers = [...r.stdout.matchAll(/^│ (\d+) +│/gm)].map((m) => Number(m[1]))
    expect(numbers).toEqual(writes.map((_, i) => i + 1))
  })

  it('a repair that leaves findings it may not repair exits 3 and says what would', async () => {
    // repair usage on the demo leaves only an info finding: exit 0 (test/commands/exit-codes.e2e.test.ts).
    for (const kind of ['pinning']) {
      const r = await cloudctl(['repair', kind, ...DEMO])
      expect(r.exitCode).toBe(3)
      expect(r.stdout).toMatch(/Not repaired \(\d+\)/)
      const j = JSON.parse((await cloudctl(['repair', kind, ...DEMO, '--json'])).stdout) as {exit_code: number; plan: {skipped: unknown[]}}
      expect(j.exit_code).toBe(3)
      expect(j.plan.skipped.length).toBeGreaterThan(0)
    }
    expect((await cloudctl(['repair', 'pinning', ...DEMO])).stdout).toContain('--force')
  })

  it('repair leaks --apply on a snapshot refuses before printing any plan', async () => {
    const r = await cloudctl(['repair', 'leaks', ...DEMO, '--apply', '--yes'])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^Error: refusing --apply with a snapshot file/)
  })

  it('--dry-run is accepted as the explicit default; with --apply it is a usage error', async () => {
    const plain = await cloudctl(['repair', 'leaks', ...DEMO])
    const dry = await cloudctl(['repair', 'leaks', ...DEMO, '--dry-run'])
    expect(dry.exitCode).toBe(3)
    expect(dry.stdout).toBe(plain.stdout)
    const both = await cloudctl(['repair', 'leaks', ...DEMO, '--dry-run', '--apply'])
    expect(both.exitCode).toBe(2)
    expect(both.stderr).toMatch(/--apply|--dry-run/)
  })
})
