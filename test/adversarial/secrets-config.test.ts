/**
 * Issue 9 item 13 (profiles): names that are Object.prototype properties are ordinary unknown
 * profile names for the built CLI: exit 2, one line naming the profile, the known ones in the hint.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-adv-profiles-'))
const config = join(dir, 'config.yaml')
writeFileSync(
  config,
  'profiles:\n  prod:\n    api_db: mysql+pymysql://nova:Pr0f-Secret#1@127.0.0.1:1/nova_api\n    placement_db: mysql+pymysql://nova:Pr0f-Secret#1@127.0.0.1:1/placement\n',
  {mode: 0o600},
)

describe('adversarial: profile names from the Object prototype', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])('--profile %s is an unknown profile (exit 2)', async (name) => {
    const r = await cloudctl(['cells', 'list', '--config', config, '--profile', name], {env: {HOME: dir, XDG_CONFIG_HOME: dir}})
    expect(r.exitCode, r.stderr).toBe(2)
    expect(r.stderr).toContain(`unknown profile '${name}'`)
    expect(r.stderr).toContain('Known profiles: prod.')
    expect(r.stderr).not.toMatch(/TypeError|at .*\.js:\d+/)
    expect(`${r.stdout}${r.stderr}`).not.toContain('Pr0f-Secret')
  })
})
