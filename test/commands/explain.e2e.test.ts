import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {execa} from 'execa'
import {describe, expect, it} from 'vitest'

import {FINDING_CODES} from '../../src/lib/checks/index.js'
import {CODE_EXPLANATIONS} from '../../src/lib/checks/explain.js'
import {cloudctl, ROOT} from '../support/cli.js'

// cloudctl explain through the built CLI (npm run build first), against the registry docs/checks.md is checked with.
interface Explained {
  code: string
  check: string
  severity: string
  summary: string
  cause: string
  repair: string
  runbook?: string
  docs: string
}

describe('cloudctl explain', () => {
  it('prints every code of the registry with its meaning, cause, repair and runbook', async () => {
    const r = await cloudctl(['explain'])
    expect(r.exitCode).toBe(0)
    const blocks = r.stdout.split(/\n\n(?=\S)/)
    expect(blocks).toHaveLength(Object.keys(FINDING_CODES).length)
    for (const [code, d] of Object.entries(FINDING_CODES)) {
      const block = blocks.find((b) => b.startsWith(`${code} `))
      expect(block, code).toBeDefined()
      const flat = block!.replace(/\s+/g, ' ')
      expect(flat).toContain(`${code} (${d.check}, ${d.severity})`)
      expect(flat).toContain(d.summary)
      expect(flat).toContain(CODE_EXPLANATIONS[code].cause)
      expect(flat).toContain(CODE_EXPLANATIONS[code].repair)
      if (CODE_EXPLANATIONS[code].runbook) expect(flat).toContain(`Runbook: ${CODE_EXPLANATIONS[code].runbook}`)
    }
    const narrow = await cloudctl(['explain', 'provider.uuid-mismatch'], {env: {COLUMNS: '80'}})
    expect(narrow.stdout.split('\n').filter((l) => l.length > 80)).toEqual([])
    expect(narrow.stdout.replace(/\s+/g, ' ')).toContain(CODE_EXPLANATIONS['provider.uuid-mismatch'].repair)
    expect(narrow.stdout.split('\n').length).toBeGreaterThan(8)
  })

  it('--json is one document; one code, or a check name for its codes', async () => {
    const all = await cloudctl(['explain', '--json'])
    expect(all.exitCode).toBe(0)
    const {codes} = JSON.parse(all.stdout) as {codes: Explained[]}
    expect(codes.map((c) => c.code)).toEqual(Object.keys(FINDING_CODES))

    const one = await cloudctl(['explain', 'pinning.leaked', '--json'])
    expect(one.exitCode).toBe(0)
    const doc = JSON.parse(one.stdout) as {codes: Explained[]}
    expect(doc.codes).toEqual([
      {code: 'pinning.leaked', ...FINDING_CODES['pinning.leaked'], ...CODE_EXPLANATIONS['pinning.leaked'], docs: 'docs/checks.md#pinning'},
    ])

    const check = await cloudctl(['explain', 'usage', '-f', 'value', '-c', 'code'])
    expect(check.exitCode).toBe(0)
    expect(check.stdout.trim().split('\n')).toEqual(Object.keys(FINDING_CODES).filter((c) => FINDING_CODES[c].check === 'usage'))
  })

  it('an unknown code is exit 2 with the nearest known code', async () => {
    const r = await cloudctl(['explain', 'pining.leakd'])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('unknown finding code "pining.leakd"')
    expect(r.stderr).toContain('Did you mean `cloudctl explain pinning.leaked`?')
    expect(r.stderr).not.toMatch(/\n\s+at /)

    const j = await cloudctl(['explain', 'allocation.consumer-delted', '--json'])
    expect(j.exitCode).toBe(2)
    const {error} = JSON.parse(j.stdout) as {error: {code: string; hint: string; exit_code: number}}
    expect(error).toMatchObject({code: 'NotFoundError', exit_code: 2})
    expect(error.hint).toContain('cloudctl explain allocation.consumer-deleted')

    const far = await cloudctl(['explain', 'no-such-thing-at-all'])
    expect(far.exitCode).toBe(2)
    expect(far.stderr).not.toContain('Did you mean')
    expect(far.stderr).toContain('`cloudctl explain` lists every code.')
  })

  it('--runbook prints the page installed beside the CLI; a code without one, or several codes, is exit 2', async () => {
    const r = await cloudctl(['explain', 'pinning.leaked', '--runbook'])
    expect(r.exitCode).toBe(0)
    const page = readFileSync(join(ROOT, CODE_EXPLANATIONS['pinning.leaked'].runbook ?? 'none'), 'utf8')
    expect(r.stdout).toBe(page.trimEnd())
    expect(r.stdout).toMatch(/^# /)

    const none = Object.keys(FINDING_CODES).find((c) => !CODE_EXPLANATIONS[c]?.runbook) ?? 'none'
    const missing = await cloudctl(['explain', none, '--runbook'])
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toContain(`${none} has no runbook page`)
    expect(missing.stderr).toContain('pinning.leaked')
    const several = await cloudctl(['explain', 'leaks', '--runbook'])
    expect(several.exitCode).toBe(2)
    expect(several.stderr).toContain('--runbook needs one finding code')
  })

  it('--snapshot demo is the demo cloud installed with cloudctl, from any directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cloudctl-demo-'))
    try {
      const demo = await execa('node', [join(ROOT, 'bin/run.js'), 'audit', 'all', '--snapshot', 'demo', '--json'], {cwd, reject: false})
      const byPath = await cloudctl(['audit', 'all', '--snapshot', join(ROOT, 'examples/demo-cloud.yaml'), '--json'])
      expect(demo.exitCode).toBe(3)
      const strip = (out: string) => JSON.stringify({...(JSON.parse(out) as object), generated_at: null})
      expect(strip(String(demo.stdout))).toBe(strip(byPath.stdout))
      const show = await execa('node', [join(ROOT, 'bin/run.js'), 'snapshot', 'show', 'demo'], {cwd, reject: false})
      expect(show.exitCode).toBe(0)
    } finally {
      rmSync(cwd, {recursive: true, force: true})
    }
  })
})
