/**
 * End-to-end: the built CLI (`npm run build` first) audits snapshot files written from test clouds.
 * The demo-cloud test (examples/demo-cloud.yaml, planted incidents listed in examples/README.md) is
 * in test/integration/audit-demo.test.ts once the demo exists.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl, oneJsonDocument} from '../support/cli.js'

let dir: string
let clean: string
let faulty: string
let leaked: string

/** One cell of hosts with a small flavor, consistent as nova would leave it. */
function computeCloud(hosts: string[]): CloudBuilder {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  for (const host of hosts) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  return b
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cloudctl-audit-'))
  const a = computeCloud(['cmp1'])
  a.addInstance('cmp1', 'm1.small')
  clean = join(dir, 'clean.json')
  await writeSnapshotFile(a.build(), clean)

  const b = computeCloud(['cmp1', 'cmp2'])
  leaked = b.addInstance('cmp1', 'm1.small').row.uuid
  b.addInstance('cmp2', 'm1.small')
  // nova deleted it and the resource tracker stopped counting it; placement kept its allocation
  b.deleteInstance(leaked, {keepAllocations: true})
  b.removeHostMapping('cmp2')
  faulty = join(dir, 'faulty.yaml')
  await writeSnapshotFile(b.build(), faulty)
})

afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('cloudctl audit (built CLI)', () => {
  it('audit all on a clean snapshot exits 0 and says so per check', async () => {
    const r = await cloudctl(['audit', 'all', '--snapshot', clean])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('leaks: no findings')
    expect(r.stdout).toContain('summary')
  })

  it('audit all --json prints one document with findings and per-check counts, and exits 3', async () => {
    const r = await cloudctl(['audit', 'all', '--snapshot', faulty, '--json'])
    expect(r.exitCode).toBe(3)
    const doc = oneJsonDocument(r.stdout) as {
      findings: Array<{code: string; subject: Record<string, string>}>
      counts: {by_check: Record<string, Record<string, number>>}
      exit_code: number
    }
    expect(doc.findings.map((f) => f.code).sort()).toEqual(['allocation.consumer-deleted', 'cell.host-unmapped'])
    expect(doc.findings.find((f) => f.code === 'allocation.consumer-deleted')?.subject.consumer_uuid).toBe(leaked)
    expect(doc.counts.by_check.leaks.error).toBe(1)
    expect(doc.counts.by_check.cells.error).toBe(1)
    expect(doc.exit_code).toBe(3)
  })

  it('audit leaks renders a table with the repair command; --check/--host filters apply', async () => {
    const r = await cloudctl(['audit', 'leaks', '--snapshot', faulty])
    expect(r.exitCode).toBe(3)
    expect(r.stdout).toContain('allocation.consumer-deleted')
    expect(r.stdout).toContain('cloudctl repair leaks')
    expect(r.stdout).not.toContain('cell.host-unmapped')
    const only = await cloudctl(['audit', 'all', '--snapshot', faulty, '--check', 'cells', '--json'])
    expect((oneJsonDocument(only.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)).toEqual(['cell.host-unmapped'])
    const host = await cloudctl(['audit', 'all', '--snapshot', faulty, '--host', 'cmp1', '--json'])
    expect((oneJsonDocument(host.stdout) as {findings: Array<{code: string}>}).findings.map((f) => f.code)).toEqual(['allocation.consumer-deleted'])
  })

  it('a bad --severity is a usage error (exit 2)', async () => {
    const r = await cloudctl(['audit', 'all', '--snapshot', clean, '--severity', 'fatal'])
    expect(r.exitCode).toBe(2)
  })

  it('an unknown --host or --cell is an error, not a clean bill of health', async () => {
    const host = await cloudctl(['audit', 'leaks', '--snapshot', faulty, '--host', 'cmp9'])
    expect(host.exitCode).toBe(2)
    expect(host.stderr).toMatch(/^Error: host "cmp9" is not a service, compute node/m)
    expect(host.stderr).toMatch(/^Hint: /m)
    const cell = await cloudctl(['audit', 'all', '--snapshot', faulty, '--cell', 'cell9', '--json'])
    expect(cell.exitCode).toBe(2)
    expect((oneJsonDocument(cell.stdout) as {error: {hint: string}}).error.hint).toMatch(/Known cells: .*cell1/)
    // a host that exists but has nothing wrong stays a clean, successful run
    expect((await cloudctl(['audit', 'all', '--snapshot', clean, '--host', 'cmp1'])).exitCode).toBe(0)
  })
})
