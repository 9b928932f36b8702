import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// Repair plans as an operator reads them, through the built CLI (npm run build first), on the demo.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

describe('repair plans say what they do', () => {
  it('repair pinning --force shows a pinned_cpus diff per NUMA cell, the whole blobs only in --json', async () => {
    const plain = await cloudctl(['repair', 'pinning', ...DEMO, '--force'], {env: {COLUMNS: '120'}})
    expect(plain.stdout).toMatch(
      /^ {2}compute node pin-r1-02 \(cell cell1\):\n {4}- update 1 compute_nodes row: pinned_cpus NUMA cell 0: 4-7 -> none; NUMA cell 1: 12-15 -> none$/m,
    )
    const r = await cloudctl(['repair', 'pinning', ...DEMO, '--force', '-v'], {env: {COLUMNS: '120'}})
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toMatch(/NUMA cell 0: 4-7 -> \(none\)/)
    expect(r.stdout).toMatch(/NUMA cell 1: 12-15 -> \(none\)/)
    expect(r.stdout).not.toContain('nova_object')
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120)
    const j = JSON.parse((await cloudctl(['repair', 'pinning', ...DEMO, '--force', '--json'])).stdout) as {
      plan: {steps: Array<{op: string; set?: {numa_topology?: string}}>}
    }
    const update = j.plan.steps.find((s) => s.op === 'update')
    expect(update?.set?.numa_topology).toContain('"pinned_cpus": []')
  })

  it('repair leaks says in plain words what it deletes, of whom, where and why; the SQL only under -v', async () => {
    const r = await cloudctl(['repair', 'leaks', ...DEMO], {env: {COLUMNS: '200'}})
    expect(r.exitCode).toBe(3)
    const j = JSON.parse((await cloudctl(['repair', 'leaks', ...DEMO, '--json'])).stdout) as {
      plan: {steps: Array<{op: string; db: string; table: string; about?: {subject: string; detail?: string}}>}
    }
    const writes = j.plan.steps.filter((s) => s.op !== 'check')
    expect(new Set(writes.map((s) => s.db))).toEqual(new Set(['placement']))
    expect(r.stdout).toContain(`${writes.length} write(s) in placement;`)
    // One line per subject, one per action with its rows counted, then why in the finding's words.
    expect(r.stdout).toContain(
      '  deleted instance 9c089546-670c-4fce-b963-d08860d435c7 on cmp-r1-04 (cell cell1):\n    - delete 3 allocations: VCPU=2, MEMORY_MB=4096, DISK_GB=40\n    - delete 1 consumer',
    )
    expect(r.stdout).toMatch(/^ {4}why: allocation held by an instance soft-deleted in its cell \(allocation\.consumer-deleted\)$/m)
    expect(r.stdout).toMatch(
      /^ {2}evacuated instance fe2bc781-14d9-4518-a8ff-e2ceb80829b0 on cmp-r1-04 \(cell cell1\):\n {4}- delete 3 allocations: VCPU=4, MEMORY_MB=8192, DISK_GB=80$/m,
    )
    // Every write has its plain words, and the counts add up to the writes.
    expect(writes.every((s) => s.about && s.about.subject !== '')).toBe(true)
    const counted = [...r.stdout.matchAll(/^ {4}- \S+(?: the generation of)? (\d+) /gm)].reduce((n, m) => n + Number(m[1]), 0)
    expect(counted).toBe(writes.length)
    expect(r.stdout).not.toMatch(/DELETE FROM|│/)
    // -v: the statements too, every step numbered from 1 (lock/check steps included).
    const v = await cloudctl(['repair', 'leaks', ...DEMO, '-v'], {env: {COLUMNS: '200'}})
    expect(v.stdout).toContain('- delete 3 allocations: VCPU=2')
    const numbers = [...v.stdout.matchAll(/^│ (\d+) +│/gm)].map((m) => Number(m[1]))
    expect(numbers).toEqual(j.plan.steps.map((_, i) => i + 1))
    expect(v.stdout).toMatch(/DELETE FROM `allocations` WHERE `id` = \?/)
  })

  it('repair leaks --max-count 1 says its note once, and plans one subject', async () => {
    const r = await cloudctl(['repair', 'leaks', ...DEMO, '--max-count', '1'], {env: {COLUMNS: '200'}})
    expect(r.exitCode).toBe(3)
    expect(r.stdout.match(/--max-count/g)).toEqual(['--max-count'])
    expect(r.stdout).toContain('deleted instance 9c089546-670c-4fce-b963-d08860d435c7')
    expect(r.stdout).not.toContain('evacuated instance')
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

  it('--cell and --host: only the findings the audit shows with the same filter are planned', async () => {
    const plan = async (args: string[]) => {
      const r = await cloudctl([...args, ...DEMO, '--json'])
      return {
        exit: r.exitCode,
        ...(JSON.parse(r.stdout) as {plan: {findings: Array<{subject: string}>; skipped: Array<{subject: string}>; steps: unknown[]}}).plan,
      }
    }
    const all = await plan(['repair', 'providers'])
    expect(all.findings.length).toBeGreaterThan(0)
    expect(all.skipped.some((s) => s.subject.includes('cell=cell2'))).toBe(true)
    // cell1 holds the stale provider; the uuid mismatch of cell2 is neither planned nor listed.
    const cell1 = await plan(['repair', 'providers', '--cell', 'cell1'])
    expect(cell1.steps).toEqual(all.steps)
    expect(cell1.skipped.filter((s) => s.subject.includes('cell=cell2'))).toEqual([])
    const cell2 = await plan(['repair', 'providers', '--cell', 'cell2'])
    expect(cell2.steps).toEqual([])
    expect(cell2.skipped.length).toBeGreaterThan(0)
    // The leaks are all on cmp-r1-04: another host plans nothing and exits 0.
    const here = await plan(['repair', 'leaks', '--host', 'cmp-r1-04'])
    expect(here.steps).toEqual((await plan(['repair', 'leaks'])).steps)
    const elsewhere = await plan(['repair', 'leaks', '--host', 'cmp-r1-01'])
    expect([elsewhere.exit, elsewhere.steps]).toEqual([0, []])
  })

  it.each([
    ['repair', 'leaks'],
    ['repair', 'providers'],
    ['repair', 'pinning'],
    ['repair', 'usage'],
    ['repair', 'aggregates'],
  ])("%s %s: an unknown --cell or --host is the audits' usage error (exit 2)", async (...cmd) => {
    for (const [flag, value] of [
      ['--cell', 'cell9'],
      ['--host', 'cmp-r9-99'],
    ]) {
      const audit = await cloudctl(['audit', cmd[1] === 'leaks' ? 'leaks' : 'all', ...DEMO, flag, value])
      const r = await cloudctl([...cmd, ...DEMO, flag, value])
      expect(r.exitCode).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toBe(audit.stderr)
      expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(2)
    }
  })
})
