import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {readSnapshotFile} from '../../src/lib/snapshot/file.js'
import {violations} from './invariants.js'

describe('examples/demo-cloud.yaml', () => {
  it('carries exactly the incidents examples/README.md lists', async () => {
    const s = await readSnapshotFile('examples/demo-cloud.yaml')
    const inc = JSON.parse(readFileSync('examples/demo-incidents.json', 'utf8'))
    const findings = runChecks(buildModel(s)).findings
    expect(findings.map((f) => f.code).sort()).toEqual(
      [
        'allocation.consumer-deleted',
        'allocation.evacuation-leftover',
        'cell.instance-duplicate',
        'pinning.leaked',
        'provider.stale',
        'provider.uuid-mismatch',
        'usage.negative-free',
      ].sort(),
    )
    const by = (code: string) => findings.find((f) => f.code === code)?.subject
    expect(by('allocation.consumer-deleted')?.consumer_uuid).toBe(inc.deleted_while_down.instance_uuid)
    expect(by('allocation.evacuation-leftover')?.consumer_uuid).toBe(inc.evacuated.instance_uuid)
    expect(by('provider.stale')?.provider_uuid).toBe(inc.host_died.provider_uuid)
    expect(by('provider.uuid-mismatch')?.provider_uuid).toBe(inc.uuid_mismatch.provider_uuid)
    expect(by('pinning.leaked')?.host).toBe('pin-r1-02')
    expect(by('usage.negative-free')?.host).toBe('cmp-r2-03')
    expect(s.cells.every((c) => !/:[^*@/]+@/.test(c.database_connection ?? ''))).toBe(true)
    expect(s.nova.instances.filter((i) => i.deleted === 0 && i.cell_uuid !== s.cells[0].uuid).length).toBe(inc.instances)
    // our own invariants see the same incidents and nothing else
    const families = new Set(violations(s).map((v) => v.split(':')[0]))
    expect([...families].sort()).toEqual(['allocation', 'cell', 'pinning', 'provider', 'usage'])
  })
})
