/**
 * Bad input is one clear line and exit 2 (issue 9, item 13): oclif's flag parse errors kept only
 * "Parsing --num-instances" and lost the reason; a typo in --consumer / --provider read as "Nothing
 * to do", exit 0; a database URL without a database name was exit 1.
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {ROOT, cloudctl} from '../support/cli.js'
import {testDsn} from '../support/db.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')

/** Exit 2 with exactly an Error line (matching `reason`) and a Hint line on stderr, nothing on stdout. */
function usageError(r: {exitCode: number; stdout: string; stderr: string}, reason: RegExp): void {
  expect(r.exitCode, r.stderr).toBe(2)
  const lines = r.stderr.trim().split('\n')
  expect(lines, r.stderr).toHaveLength(2)
  expect(lines[0]).toMatch(/^Error: /)
  expect(lines[0]).toMatch(reason)
  expect(lines[1]).toMatch(/^Hint: /)
  expect(r.stdout).toBe('')
}

describe('usage errors keep their reason on one line (built CLI)', {timeout: 180_000}, () => {
  const boot = ['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small']
  const parseCases: Array<[string, string[], RegExp]> = [
    ['an empty --num-instances', [...boot, '--num-instances', ''], /^Error: Parsing --num-instances: Expected an integer but received: ""$/],
    ['a word for --num-instances', [...boot, '--num-instances', 'ten'], /Parsing --num-instances: Expected an integer but received: ten/],
    [
      'a negative --num-instances',
      [...boot, '--num-instances', '-5'],
      /Parsing --num-instances: Expected an integer greater than or equal to 1 but received: -5/,
    ],
    ['--num-instances with no value at all', [...boot, '--num-instances'], /--num-instances expects a value/],
    [
      'a word for --seed of simulate capacity',
      ['simulate', 'capacity', '--snapshot', DEMO, '--seed', 'x1'],
      /Parsing --seed: Expected an integer but received: x1/,
    ],
    ['a check that does not exist', ['audit', 'all', '--snapshot', DEMO, '--check', 'leak'], /Expected --check=leak to be one of: /],
    ['a flag that does not exist', ['audit', 'all', '--snapshot', DEMO, '--chek', 'leaks'], /Nonexistent flag: --chek/],
  ]

  it.each(parseCases)('%s', async (_name, args, reason) => {
    usageError(await cloudctl(args), reason)
    const json = await cloudctl([...args, '--json'])
    expect(json.exitCode).toBe(2)
    const message = (JSON.parse(json.stdout) as {error: {message: string}}).error.message
    expect(message).toMatch(new RegExp(reason.source.replace(/^\^Error: /, '')))
    expect(message).not.toContain('\n')
  })

  // Issue 29 item 13: a mistyped flag names the flag it was probably meant to be, from the command's own.
  it.each([
    [['audit', 'all', '--snpashot', DEMO], '--snpashot', '--snapshot'],
    [['audit', 'all', `--snpashot=${DEMO}`], `--snpashot=${DEMO}`, '--snapshot'],
    [['simulate', 'boot', '--snapshot', DEMO, '--flavr', 'm1.small'], '--flavr', '--flavor'],
    [['hosts', 'list', '--snapshot', DEMO, '--max-widht', '80'], '--max-widht', '--max-width'],
  ])('%j: Nonexistent flag with "Did you mean"', async (args, typed, meant) => {
    const r = await cloudctl(args)
    usageError(r, new RegExp(`^Error: Nonexistent flag: ${typed.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`))
    expect(r.stderr.trim().split('\n')[1]).toBe(`Hint: Did you mean ${meant}?`)
    expect(r.stderr).not.toMatch(/\n\s+at /)
    const json = JSON.parse((await cloudctl([...args, '--json'])).stdout) as {error: {hint: string; exit_code: number}}
    expect(json.error).toMatchObject({hint: `Did you mean ${meant}?`, exit_code: 2})
  })

  it('a flag nothing is close to keeps the usage hint', async () => {
    const r = await cloudctl(['audit', 'all', '--snapshot', DEMO, '--zzzzzzzzzz'])
    usageError(r, /^Error: Nonexistent flag: --zzzzzzzzzz$/)
    expect(r.stderr).toMatch(/Hint: See `cloudctl audit all --help`/)
  })

  it('repair leaks --consumer with an id this cloud does not have: exit 2 naming the consumers with findings', async () => {
    const r = await cloudctl(['repair', 'leaks', '--snapshot', DEMO, '--consumer', '9c089546-670c-4fce-b963-d08860d435c8'])
    usageError(r, /consumer "9c089546-670c-4fce-b963-d08860d435c8" is not an allocation consumer, instance or migration of this cloud/)
    expect(r.stderr).toMatch(/Hint: Consumers with leak findings: .*9c089546-670c-4fce-b963-d08860d435c7/)
    // The right id plans its repair (exit 3): the refusal above is about the typo, not the flag.
    const ok = await cloudctl(['repair', 'leaks', '--snapshot', DEMO, '--consumer', '9c089546-670c-4fce-b963-d08860d435c7'])
    expect(ok.exitCode, ok.stderr).toBe(3)
  })

  it('repair providers --provider with a name this cloud does not have: exit 2 naming the providers with findings', async () => {
    const r = await cloudctl(['repair', 'providers', '--snapshot', DEMO, '--provider', 'cmp-r1-4'])
    usageError(r, /provider "cmp-r1-4" is not a resource provider \(uuid or name\) or compute node of this cloud/)
    expect(r.stderr).toMatch(/Hint: Providers with findings: .*cmp-r1-04/)
    const ok = await cloudctl(['repair', 'providers', '--snapshot', DEMO, '--provider', 'cmp-r1-04'])
    expect(ok.exitCode, ok.stderr).toBe(3)
  })

  // The test server's URL cut after host:port, then with a bare trailing slash.
  const server = testDsn().replace(/^([a-z][a-z0-9+]*:\/\/[^/?]*).*$/i, '$1')
  it.each([server, `${server}/`])('a database URL without a database name (%s) is exit 2, not 1', async (url) => {
    const r = await cloudctl(['audit', 'all', '--api-db', url, '--placement-db', url])
    usageError(r, /no database name in the URL of the nova_api database/)
  })
})
