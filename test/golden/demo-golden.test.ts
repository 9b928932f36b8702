/**
 * Golden outputs on the bundled demo (examples/demo-cloud.yaml): `audit all -f json` and the dry-run
 * plan of every repair command, compared byte for byte with the files beside this test. Restructuring
 * the checks or the planners must leave these unchanged; a change in behaviour shows up here as a diff
 * to review.
 *
 * The only field removed before comparing is the plan's `created_at` (the moment the plan was made);
 * nothing else in these documents depends on the clock, a temporary path or a timing.
 * `repair undo` is not covered: it needs an undo file written by an applied repair, not a snapshot.
 *
 * CLOUDCTL_UPDATE_GOLDEN=1 npx vitest run test/golden rewrites the files (then review the diff).
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {cloudctl, ROOT} from '../support/cli.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const DIR = join(ROOT, 'test/golden')
const UPDATE = process.env.CLOUDCTL_UPDATE_GOLDEN === '1'
const CREATED_AT = '<created_at>'

/**
 * Every command that reads the demo and prints findings or a repair plan (src/commands/repair/*,
 * cells map-instances, cells discover-hosts), with the flag variants that change the plan on the demo.
 * `repair leaks --heal`, `repair usage --force` and `cells discover-hosts --by-service` give the same
 * plan as the variants listed here on the demo, so they have no file of their own.
 */
const CASES: Array<{file: string; args: string[]; exitCode: number}> = [
  {file: 'audit-all.json', args: ['audit', 'all'], exitCode: 3},
  {file: 'repair-leaks.json', args: ['repair', 'leaks', '--dry-run'], exitCode: 3},
  {file: 'repair-providers.json', args: ['repair', 'providers', '--dry-run'], exitCode: 3},
  {file: 'repair-providers-move.json', args: ['repair', 'providers', '--dry-run', '--strategy', 'move'], exitCode: 3},
  {file: 'repair-pinning.json', args: ['repair', 'pinning', '--dry-run'], exitCode: 3},
  {file: 'repair-pinning-force.json', args: ['repair', 'pinning', '--dry-run', '--force'], exitCode: 3},
  {file: 'repair-usage.json', args: ['repair', 'usage', '--dry-run'], exitCode: 0}, // only info usage.negative-free is left: the audit's rule (README, Exit codes)
  {file: 'repair-aggregates-prune.json', args: ['repair', 'aggregates', '--dry-run', '--prune'], exitCode: 0},
  {file: 'cells-map-instances.json', args: ['cells', 'map-instances', '--dry-run'], exitCode: 3},
  {file: 'cells-discover-hosts-prune.json', args: ['cells', 'discover-hosts', '--dry-run', '--prune'], exitCode: 0},
]

/**
 * Replaces the plan's creation time, and only that: the value is checked to be a timestamp at
 * plan.created_at, then its one occurrence in the text is replaced, so every other byte is compared.
 */
function stable(stdout: string): string {
  const doc = JSON.parse(stdout) as {plan?: {created_at?: unknown}}
  const at = doc.plan?.created_at
  if (at === undefined) return stdout
  expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
  const needle = `"created_at": ${JSON.stringify(at)}`
  expect(stdout.split(needle)).toHaveLength(2)
  return stdout.replace(needle, `"created_at": ${JSON.stringify(CREATED_AT)}`)
}

describe('golden outputs on the demo snapshot', () => {
  it.each(CASES.map((c) => ({...c, name: c.args.join(' ')})))('$name -f json matches test/golden/$file', async ({file, args, exitCode}) => {
    const r = await cloudctl([...args, '--snapshot', DEMO, '-f', 'json'])
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(exitCode)
    const got = stable(r.stdout)
    const path = join(DIR, file)
    if (UPDATE) writeFileSync(path, got)
    expect(existsSync(path), `${file} missing: run with CLOUDCTL_UPDATE_GOLDEN=1`).toBe(true)
    // Plain string equality: a mismatch prints a line diff against the golden file.
    expect(got).toBe(readFileSync(path, 'utf8'))
  })
})
