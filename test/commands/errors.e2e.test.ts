import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// Usage errors through the built CLI (npm run build first): one line with the reason, a hint, exit 2.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

describe('usage errors say why', () => {
  it('a missing required flag names the flag (human and --json)', async () => {
    const r = await cloudctl(['simulate', 'boot', ...DEMO])
    expect(r.exitCode).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe('Error: Missing required flag flavor')
    expect(r.stderr).toContain('Hint: See `cloudctl simulate boot --help`')
    const j = await cloudctl(['simulate', 'boot', ...DEMO, '--json'])
    expect(j.exitCode).toBe(2)
    expect(JSON.parse(j.stdout)).toMatchObject({error: {code: 'UsageError', message: 'Missing required flag flavor', exit_code: 2}})
  })

  it("a missing argument names it, without oclif's note about multiple-value flags", async () => {
    const r = await cloudctl(['cells', 'verify-instance', ...DEMO])
    expect(r.exitCode).toBe(2)
    expect(r.stderr.split('\n')[0]).toBe('Error: Missing 1 required arg: uuid (Instance uuid.)')
    expect(r.stderr).not.toContain('multiple values')
  })

  it('an unknown command suggests the nearest one, with spaces; --json gets the error document', async () => {
    const r = await cloudctl(['audit', 'lekas'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Error: unknown command `cloudctl audit lekas`\nHint: Did you mean `cloudctl audit leaks`?')
    expect(r.stderr).not.toContain('audit:lekas')
    const j = await cloudctl(['audit', 'lekas', '--json'])
    expect(j.exitCode).toBe(2)
    expect(JSON.parse(j.stdout)).toEqual({
      error: {code: 'CommandNotFound', message: 'unknown command `cloudctl audit lekas`', hint: 'Did you mean `cloudctl audit leaks`?', exit_code: 2},
    })
    const far = await cloudctl(['frobnicate'])
    expect(far.exitCode).toBe(2)
    expect(far.stderr).toContain('See `cloudctl --help` for the commands.')
  })
})
