import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {ROOT, cloudctl} from '../support/cli.js'

// Operator conveniences through the built CLI (npm run build first).
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

function commandIds(): string[][] {
  const dir = join(ROOT, 'src', 'commands')
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory()
      ? readdirSync(join(dir, e.name))
          .filter((f) => f.endsWith('.ts'))
          .map((f) => [e.name, f.slice(0, -3)])
      : e.name.endsWith('.ts')
        ? [[e.name.slice(0, -3)]]
        : [],
  )
}

describe('help, version, completion', () => {
  it('every command has EXAMPLES, -h is --help, and the exit-code table appears exactly once', async () => {
    const ids = commandIds()
    expect(ids.length).toBeGreaterThan(15)
    for (const id of ids) {
      const h = await cloudctl([...id, '-h'])
      expect(h.exitCode, id.join(' ')).toBe(0)
      expect(h.stdout, id.join(' ')).toContain('EXAMPLES')
      expect(h.stdout.split('EXIT CODES').length - 1, id.join(' ')).toBe(1)
    }
    for (const args of [['--help'], ['audit', '--help']]) {
      const h = await cloudctl(args)
      expect(h.stdout.split('EXIT CODES').length - 1, args.join(' ')).toBe(1)
    }
  })

  it('cloudctl version (human and -f json)', async () => {
    const {version} = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {version: string}
    const r = await cloudctl(['version'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(new RegExp(`^cloudctl ${version.replace(/\./g, '\\.')} \\(node `))
    expect(JSON.parse((await cloudctl(['version', '-f', 'json'])).stdout)).toMatchObject({cloudctl: version})
  })

  it('shell completion scripts (bash, zsh) from @oclif/plugin-autocomplete', async () => {
    for (const shell of ['bash', 'zsh']) {
      const r = await cloudctl(['autocomplete', 'script', shell])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/CLOUDCTL_AC_/)
    }
  })
})

describe('list flags as nova.conf writes them; shares that mean what they say', () => {
  it('--check takes a comma list', async () => {
    const a = JSON.parse((await cloudctl(['audit', 'all', ...DEMO, '--check', 'leaks,providers', '--json'])).stdout) as {checks: string[]}
    const b = JSON.parse((await cloudctl(['audit', 'all', ...DEMO, '--check', 'leaks', '--check', 'providers', '--json'])).stdout) as {checks: string[]}
    expect(a.checks).toEqual(b.checks)
    expect(a.checks).toEqual(expect.arrayContaining(['leaks', 'providers']))
    expect(a.checks).not.toContain('pinning')
  })

  it('--mix percentages must total 100% (exit 2); weights without % are weights', async () => {
    const bad = await cloudctl(['simulate', 'capacity', ...DEMO, '--mix', 'm1.small=50%,m1.large=40%'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('--mix shares add up to 90%, not 100%')
    const mixed = await cloudctl(['simulate', 'capacity', ...DEMO, '--mix', 'm1.small=50%,m1.large=4'])
    expect(mixed.exitCode).toBe(2)
    const ok = await cloudctl(['simulate', 'capacity', ...DEMO, '--mix', 'm1.small=60%,m1.large=40%', '--json'])
    expect([0, 3]).toContain(ok.exitCode)
    const w = await cloudctl(['simulate', 'capacity', ...DEMO, '--mix', 'm1.small=3,m1.large=2', '--json'])
    expect([0, 3]).toContain(w.exitCode)
  })
})
