/**
 * A name that matches nothing in the cloud is a usage error (exit 2) with the known names, never an
 * empty result that reads like "all clear" or a placement nova would not make.
 */
import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

const DEMO = 'examples/demo-cloud.yaml'

describe('unknown hosts and zones', () => {
  it('repair pinning/usage --host that the cloud does not know: exit 2 (as the audits), not "nothing to do"', async () => {
    for (const verb of ['pinning', 'usage']) {
      const r = await cloudctl(['repair', verb, '--snapshot', DEMO, '--host', 'pin-r1-99'])
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toMatch(/^Error: host "pin-r1-99" is not a service, compute node, host mapping or resource provider of this cloud$/m)
      expect(r.stdout).toBe('')
    }
    // the real host still plans (the demo's pin-r1-02 has stuck pins; its nova-compute is up, so it is skipped)
    const ok = await cloudctl(['repair', 'pinning', '--snapshot', DEMO, '--host', 'pin-r1-02'])
    // skipped, not repaired: the finding remains (exit 3)
    expect(ok.exitCode).toBe(3)
    expect(ok.stdout).toContain('pin-r1-02')
  })

  it('cells map-instances/discover-hosts --host and --cell as every repair: unknown is exit 2; a known host plans only its own', async () => {
    for (const verb of ['map-instances', 'discover-hosts']) {
      const r = await cloudctl(['cells', verb, '--snapshot', DEMO, '--host', 'pin-r1-99'])
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toMatch(/^Error: host "pin-r1-99" is not a service, compute node, host mapping or resource provider of this cloud$/m)
      expect(r.stdout).toBe('')
      const c = await cloudctl(['cells', verb, '--snapshot', DEMO, '--cell', 'cell9'])
      expect(c.exitCode).toBe(2)
      expect(c.stderr).toMatch(/^Hint: Known cells: cell0, cell1, cell2$/m)
    }
    // The demo's one cells finding is the instance live in cell1 and cell0, on cmp-r1-02.
    const on = await cloudctl(['cells', 'map-instances', '--snapshot', DEMO, '--host', 'cmp-r1-02'])
    expect(on.exitCode).toBe(3)
    expect(on.stdout).toContain('cell.instance-duplicate')
    const off = await cloudctl(['cells', 'map-instances', '--snapshot', DEMO, '--host', 'cmp-r1-04'])
    expect(off.exitCode).toBe(0)
    expect(off.stdout).toContain('Nothing to do.')
  })

  it('simulate boot in an availability zone nova-api would refuse: exit 2 with the zones', async () => {
    const r = await cloudctl(['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small', '--availability-zone', 'az9'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/availability zone "az9" is not available/)
    expect(r.stderr).toMatch(/^Hint: Zones with an enabled nova-compute: az1, az2$/m)
    const az2 = await cloudctl(['simulate', 'boot', '--snapshot', DEMO, '--flavor', 'm1.small', '--availability-zone', 'az2', '--json'])
    expect(az2.exitCode).toBe(0)
    expect((JSON.parse(az2.stdout) as {instances: Array<{host: string}>}).instances[0]?.host).toMatch(/^cmp-r2-/)
  })
})
