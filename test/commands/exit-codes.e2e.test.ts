/**
 * One exit-code rule (issue 29, item 11), through the built CLI (npm run build first): the README's
 * table is src/lib/errors.ts's and what --help prints; the rule for 0 and 3 is quoted verbatim by the
 * README, docs/repairs.md and the runbooks' README; and on the same state an audit and the repair of
 * the same check agree: an info finding alone is 0 for both, a warning 3 for both.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {EXIT_CODE_TABLE, EXIT_RULE} from '../../src/lib/errors.js'
import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl, ROOT} from '../support/cli.js'

let tmp: string
const files: Record<'info' | 'warning', string> = {info: '', warning: ''}

/**
 * A 4 GB host (512 MB reserved, ram_allocation_ratio 4) holding three 2 GB instances: free_ram_mb is
 * negative, overcommit within the ratio (info). `ratio` then rewrites the MEMORY_MB inventory's ratio,
 * as an operator lowering it after the instances were placed would: 1.5 no longer covers them (warning).
 */
async function overcommitted(ratio: number, file: string): Promise<void> {
  const b = new CloudBuilder({seed: 2911})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 10})
  b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 4096, local_gb: 500, ram_allocation_ratio: 4})
  for (let i = 0; i < 3; i++) b.addInstance('cmp1', 'm1.small')
  const s = b.build()
  for (const inv of s.placement.inventories) if (inv.resource_class_id === b.rcId('MEMORY_MB')) inv.allocation_ratio = ratio
  await writeSnapshotFile(s, file)
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-exit-'))
  files.info = join(tmp, 'info.json')
  files.warning = join(tmp, 'warning.json')
  await overcommitted(4, files.info)
  await overcommitted(1.5, files.warning)
})

afterAll(() => {
  if (tmp) rmSync(tmp, {recursive: true, force: true})
})

describe('the exit-code table', () => {
  it('the README table is errors.ts, and so is the EXIT CODES section of --help', async () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Exit codes'), readme.indexOf('\n## ', readme.indexOf('## Exit codes') + 3))
    const rows = [...section.matchAll(/^\| (\d) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2]])
    expect(rows).toEqual(EXIT_CODE_TABLE.map(([code, text]) => [code, text]))
    const help = await cloudctl(['repair', 'usage', '--help'], {env: {COLUMNS: '400'}})
    expect(help.exitCode).toBe(0)
    const shown = help.stdout.slice(help.stdout.indexOf('EXIT CODES')).replace(/\s+/g, ' ')
    for (const [code, text] of EXIT_CODE_TABLE) expect(shown).toContain(`${code} ${text}`)
    expect(shown).toContain(EXIT_RULE)
  })

  it.each(['README.md', 'docs/repairs.md', 'docs/runbooks/README.md'])('%s states the rule for 0 and 3 as errors.ts does', (doc) => {
    expect(readFileSync(join(ROOT, doc), 'utf8')).toContain(EXIT_RULE)
  })

  it('no doc still says a repair leaving findings exits 0 whatever their severity', () => {
    const repairs = readFileSync(join(ROOT, 'docs/repairs.md'), 'utf8').replace(/\s+/g, ' ')
    expect(repairs).not.toContain('plans nothing exits 0, also when findings are listed under "Not repaired"')
  })
})

describe('audit and repair agree on the same state', () => {
  it('an info finding alone: audit usage 0, repair usage 0 listing it as "(info)"', async () => {
    const audit = await cloudctl(['audit', 'usage', '-s', files.info, '--json'])
    const findings = (JSON.parse(audit.stdout) as {findings: Array<{code: string; severity: string}>}).findings
    expect(findings.map((f) => `${f.code}/${f.severity}`)).toEqual(['usage.negative-free/info'])
    expect(audit.exitCode).toBe(0)
    const repair = await cloudctl(['repair', 'usage', '-s', files.info])
    expect(repair.stdout).toContain('Nothing to do.')
    expect(repair.stdout).toMatch(/usage\.negative-free \(info\)/)
    expect(repair.exitCode).toBe(0)
    const json = await cloudctl(['repair', 'usage', '-s', files.info, '--json'])
    expect((JSON.parse(json.stdout) as {plan: {skipped: Array<{severity: string}>}}).plan.skipped.map((s) => s.severity)).toEqual(['info'])
    expect(json.exitCode).toBe(0)
  })

  it('the same finding beyond the allocation ratio (warning): 3 for both', async () => {
    const audit = await cloudctl(['audit', 'usage', '-s', files.warning, '--json'])
    expect((JSON.parse(audit.stdout) as {findings: Array<{severity: string}>}).findings.map((f) => f.severity)).toContain('warning')
    expect(audit.exitCode).toBe(3)
    const repair = await cloudctl(['repair', 'usage', '-s', files.warning])
    expect(repair.stdout).toContain('need you')
    expect(repair.exitCode).toBe(3)
  })
})
