/**
 * Resource limits (issue 9, item 11): sizes that made the simulation abort out of memory, hang or fail
 * with "Invalid array length" are usage errors (exit 2, one line with the reason), and a snapshot whose
 * host names are 20 kB long renders in bounded output (it produced 3.4 MB of table in 80 s): the human
 * output elides, --json keeps every character.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {ROOT, cloudctl} from '../support/cli.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const dir = mkdtempSync(join(tmpdir(), 'cloudctl-limits-'))
const longFile = join(dir, 'long-names.json')
const LONG = 'h'.repeat(20_000)

describe('resource limits of the simulation (built CLI)', {timeout: 180_000}, () => {
  beforeAll(async () => {
    // Every compute host gets a 20 kB prefix, wherever it is named.
    const s = await readSnapshotFile(DEMO)
    const text = JSON.stringify(s).split('cmp-r').join(`${LONG}cmp-r`).split('pin-r').join(`${LONG}pin-r`)
    await writeSnapshotFile(JSON.parse(text) as Snapshot, longFile)
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  const cases: Array<[string, string[], RegExp]> = [
    [
      '--num-instances 1000000000',
      ['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small', '--num-instances', '1000000000'],
      /--num-instances.*less than or equal to 10000/,
    ],
    [
      '--num-instances 99999999999999999999',
      ['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small', '--num-instances', '99999999999999999999'],
      /--num-instances.*less than or equal to 10000/,
    ],
    [
      'simulate boot --add-hosts 10000000',
      ['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small', '--add-hosts', '10000000', '--like', 'cmp-r1-01'],
      /--add-hosts.*less than or equal to 100000/,
    ],
    [
      'simulate capacity --add-hosts 10000000',
      ['simulate', 'capacity', '--snapshot', DEMO, '--add-hosts', '10000000', '--like', 'cmp-r1-01'],
      /--add-hosts.*less than or equal to 100000/,
    ],
  ]

  it.each(cases)('%s: exit 2, one line with the limit', async (_name, args, reason) => {
    const r = await cloudctl(args)
    expect(r.exitCode, r.stderr).toBe(2)
    const [error, hint, ...rest] = r.stderr.trim().split('\n')
    expect(error).toMatch(/^Error: /)
    expect(error).toMatch(reason)
    expect(hint).toMatch(/^Hint: /)
    expect(rest).toEqual([])
    const json = await cloudctl([...args, '--json'])
    expect(json.exitCode).toBe(2)
    expect((JSON.parse(json.stdout) as {error: {message: string}}).error.message).toMatch(reason)
  })

  it('the limits are in --help', async () => {
    const boot = await cloudctl(['simulate', 'boot', '--help'])
    expect(boot.stdout.replace(/\s+/g, ' ')).toMatch(/--num-instances.*at most 10,000/)
    expect(boot.stdout.replace(/\s+/g, ' ')).toMatch(/--add-hosts.*at most 100,000/)
  })

  it('the largest --add-hosts a 10k-hypervisor plan needs still runs', async () => {
    const r = await cloudctl([
      'simulate',
      'boot',
      '--snapshot',
      DEMO,
      '--flavor',
      'm1.small',
      '--add-hosts',
      '10000',
      '--like',
      'cmp-r1-01',
      '--num-instances',
      '50',
      '--json',
    ])
    expect(r.exitCode, r.stderr).toBe(0)
  })

  it('20 kB host names: human output elides them (bounded size), --json keeps them whole', async () => {
    const r = await cloudctl(['audit', 'all', '--snapshot', longFile])
    expect(r.exitCode, r.stderr).toBe(3)
    expect(r.stdout).toContain('more characters; --json shows all]')
    // 11 hosts of 20 kB, some named in several findings: elided, the report stays a report.
    expect(r.stdout.length).toBeLessThan(200_000)
    expect(r.stdout).not.toContain('h'.repeat(300))
    const json = await cloudctl(['audit', 'all', '--snapshot', longFile, '--json'])
    expect(json.exitCode).toBe(3)
    const findings = (JSON.parse(json.stdout) as {findings: Array<{subject: {host?: string; node?: string}}>}).findings
    expect(findings.some((f) => f.subject.host === `${LONG}cmp-r1-04` || f.subject.node === `${LONG}cmp-r1-04`)).toBe(true)
  })

  it('20 kB host names in the other human renderers stay bounded too', async () => {
    for (const args of [
      ['snapshot', 'show', longFile],
      ['cells', 'list', '--snapshot', longFile],
      ['simulate', 'capacity', '--snapshot', longFile, '--per-host'],
      ['simulate', 'boot', '--snapshot', longFile, '--flavor', 'm1.small', '--explain'],
      ['repair', 'leaks', '--snapshot', longFile],
    ]) {
      const r = await cloudctl(args)
      expect([0, 3], r.stderr).toContain(r.exitCode)
      expect(`${r.stdout}${r.stderr}`, args.join(' ')).not.toContain('h'.repeat(300))
    }
  })
})
