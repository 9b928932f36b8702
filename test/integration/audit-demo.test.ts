/**
 * `cloudctl audit all` on the bundled demo snapshot (examples/demo-cloud.yaml) finds each incident
 * listed in examples/demo-incidents.json (the table in examples/README.md says which code each
 * incident is), and nothing else; the human report, the JSON document, the filters and the exit
 * codes behave as docs/checks.md says.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {beforeAll, describe, expect, it} from 'vitest'

import type {Finding, FindingSubject} from '../../src/lib/domain/finding.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'
import type {AuditDoc} from './audit-live-support.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const incidents = JSON.parse(readFileSync(join(ROOT, 'examples/demo-incidents.json'), 'utf8')) as {
  host_died: {host: string; provider_uuid: string}
  evacuated: {instance_uuid: string; migration_uuid: string; now_on: string}
  deleted_while_down: {instance_uuid: string}
  pinned_leak: {host: string; provider_uuid: string}
  negative_free: {host: string; provider_uuid: string}
  duplicate: {instance_uuid: string; host: string}
  uuid_mismatch: {node: string; provider_uuid: string}
}

/** Incident -> the finding examples/README.md says it is, with the subject taken from the incidents file. */
const EXPECTED: Array<{incident: string; code: string; severity: string; subject: FindingSubject}> = [
  {
    incident: 'deleted_while_down',
    code: 'allocation.consumer-deleted',
    severity: 'error',
    subject: {
      instance_uuid: incidents.deleted_while_down.instance_uuid,
      consumer_uuid: incidents.deleted_while_down.instance_uuid,
      provider_uuid: incidents.host_died.provider_uuid,
    },
  },
  {
    incident: 'evacuated',
    code: 'allocation.evacuation-leftover',
    severity: 'warning',
    subject: {
      instance_uuid: incidents.evacuated.instance_uuid,
      migration_uuid: incidents.evacuated.migration_uuid,
      provider_uuid: incidents.host_died.provider_uuid,
    },
  },
  {
    incident: 'host_died',
    code: 'provider.stale',
    severity: 'warning',
    subject: {host: incidents.host_died.host, provider_uuid: incidents.host_died.provider_uuid},
  },
  {
    incident: 'uuid_mismatch',
    code: 'provider.uuid-mismatch',
    severity: 'error',
    subject: {node: incidents.uuid_mismatch.node, provider_uuid: incidents.uuid_mismatch.provider_uuid},
  },
  {
    incident: 'duplicate',
    code: 'cell.instance-duplicate',
    severity: 'error',
    subject: {instance_uuid: incidents.duplicate.instance_uuid, host: incidents.duplicate.host, cell: 'cell1,cell0'},
  },
  {
    incident: 'pinned_leak',
    code: 'pinning.leaked',
    severity: 'error',
    subject: {host: incidents.pinned_leak.host, provider_uuid: incidents.pinned_leak.provider_uuid},
  },
  {
    incident: 'negative_free',
    code: 'usage.negative-free',
    severity: 'info',
    subject: {host: incidents.negative_free.host, provider_uuid: incidents.negative_free.provider_uuid},
  },
]

async function auditJson(args: string[]): Promise<{exitCode: number; doc: AuditDoc}> {
  const r = await cloudctl(['audit', ...args, '--snapshot', DEMO, '--json'])
  expect([0, 3], r.stderr).toContain(r.exitCode)
  return {exitCode: r.exitCode, doc: oneJsonDocument(r.stdout) as AuditDoc}
}

const codes = (fs: Finding[]) => fs.map((f) => f.code).sort()

let all: {exitCode: number; doc: AuditDoc}
let human: {exitCode: number; stdout: string; stderr: string}

beforeAll(async () => {
  ;[all, human] = await Promise.all([auditJson(['all']), cloudctl(['audit', 'all', '--snapshot', DEMO])])
})

describe('cloudctl audit all on the demo snapshot', () => {
  it.each(EXPECTED)('finds incident $incident as $code ($severity)', ({code, severity, subject}) => {
    const found = all.doc.findings.filter((f) => f.code === code)
    expect(found).toHaveLength(1)
    expect(found[0].subject).toMatchObject(subject)
    expect(found[0].severity).toBe(severity)
  })

  it('finds nothing but the seeded incidents, and exits 3', () => {
    expect(codes(all.doc.findings)).toEqual(EXPECTED.map((e) => e.code).sort())
    expect(all.exitCode).toBe(3)
    expect(all.doc.exit_code).toBe(3)
  })

  it('--json carries per-check counts by severity, totals and the checks that ran', () => {
    const c = all.doc.counts
    expect(c.total).toBe(EXPECTED.length)
    expect(c.by_severity).toEqual({error: 4, unknown: 0, warning: 2, info: 1})
    expect(c.by_check.leaks).toEqual({error: 1, unknown: 0, warning: 1, info: 0})
    expect(c.by_check.providers).toEqual({error: 1, unknown: 0, warning: 1, info: 0})
    expect(c.by_check.cells).toEqual({error: 1, unknown: 0, warning: 0, info: 0})
    expect(c.by_check.pinning).toEqual({error: 1, unknown: 0, warning: 0, info: 0})
    expect(c.by_check.usage).toEqual({error: 0, unknown: 0, warning: 0, info: 1})
    expect(c.by_check.aggregates).toEqual({error: 0, unknown: 0, warning: 0, info: 0})
    expect(Object.values(c.by_code).reduce((a, b) => a + b, 0)).toBe(c.total)
    expect(all.doc.checks).toEqual(['snapshot', 'leaks', 'providers', 'cells', 'pinning', 'usage', 'aggregates'])
    expect(all.doc.unavailable_cells).toEqual([])
    for (const f of all.doc.findings) {
      expect(f.message.length).toBeGreaterThan(10)
      expect(Object.keys(f.evidence).length).toBeGreaterThan(0)
    }
  })

  it('human output: a table per check with findings, a summary line per check, the summary table, no colour without a TTY', () => {
    expect(human.exitCode).toBe(3)
    const out = human.stdout
    for (const check of ['leaks', 'providers', 'cells', 'pinning', 'usage']) expect(out).toContain(`audit ${check}`)
    expect(out).not.toContain('audit aggregates')
    expect(out).toContain('✖ leaks: 2 findings (1 error, 1 warning)')
    expect(out).toContain('✖ providers: 2 findings (1 error, 1 warning)')
    expect(out).toContain('✖ cells: 1 finding (1 error)')
    expect(out).toContain('✖ pinning: 1 finding (1 error)')
    expect(out).toContain('ℹ usage: 1 finding (1 info)')
    expect(out).toContain('✔ aggregates: no findings')
    expect(out).toMatch(/summary/)
    expect(out).toMatch(/total\s*│\s*4\s*│\s*0\s*│\s*2\s*│\s*1\s*│\s*7/)
    for (const e of EXPECTED) expect(out).toContain(e.code)
    expect(out).toContain('cloudctl repair leaks')
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/\u001b\[/)
  })
})

describe('colours', () => {
  // eslint-disable-next-line no-control-regex
  const ANSI = /\u001b\[\d+m/
  it('FORCE_COLOR colours severities (red errors); NO_COLOR wins over it', async () => {
    const coloured = await cloudctl(['audit', 'pinning', '--snapshot', DEMO], {env: {NO_COLOR: '', FORCE_COLOR: '1'}})
    expect(coloured.stdout).toMatch(ANSI)
    expect(coloured.stdout).toContain('\u001b[31merror\u001b[39m')
    const plain = await cloudctl(['audit', 'pinning', '--snapshot', DEMO], {env: {NO_COLOR: '1', FORCE_COLOR: '1'}})
    expect(plain.stdout).not.toMatch(ANSI)
    expect(plain.stdout).toContain('✖ pinning: 1 finding (1 error)')
  })
})

describe('audit filters and exit codes on the demo snapshot', () => {
  it('--check keeps the chosen checks (repeatable)', async () => {
    const r = await auditJson(['all', '--check', 'pinning', '--check', 'cells'])
    expect(codes(r.doc.findings)).toEqual(['cell.instance-duplicate', 'pinning.leaked'])
    expect(r.doc.checks).toEqual(['snapshot', 'cells', 'pinning'])
    expect(r.exitCode).toBe(3)
  })

  it('--cell keeps one cell (by name or uuid)', async () => {
    const r = await auditJson(['all', '--cell', 'cell2'])
    expect(codes(r.doc.findings)).toEqual(['provider.uuid-mismatch', 'usage.negative-free'])
    const uuid = r.doc.findings[0].subject.cell_uuid as string
    const byUuid = await auditJson(['all', '--cell', uuid])
    expect(codes(byUuid.doc.findings)).toEqual(codes(r.doc.findings))
  })

  it('--host keeps one host', async () => {
    const r = await auditJson(['all', '--host', incidents.pinned_leak.host])
    expect(r.doc.findings.map((f) => [f.code, f.subject.host])).toEqual([['pinning.leaked', incidents.pinned_leak.host]])
  })

  it('--severity keeps findings at or above it', async () => {
    const errors = await auditJson(['all', '--severity', 'error'])
    expect(codes(errors.doc.findings)).toEqual(
      EXPECTED.filter((e) => e.severity === 'error')
        .map((e) => e.code)
        .sort(),
    )
    const warnings = await auditJson(['all', '--severity', 'warning'])
    expect(codes(warnings.doc.findings)).toEqual(
      EXPECTED.filter((e) => e.severity !== 'info')
        .map((e) => e.code)
        .sort(),
    )
  })

  it('exit 0 when only info findings remain (overcommit within the ratio is not a leak), 3 otherwise', async () => {
    const usage = await auditJson(['usage'])
    expect(codes(usage.doc.findings)).toEqual(['usage.negative-free'])
    expect(usage.exitCode).toBe(0)
    const quiet = await auditJson(['aggregates'])
    expect(quiet.doc.findings).toEqual([])
    expect(quiet.exitCode).toBe(0)
    const leaks = await auditJson(['leaks'])
    expect(leaks.exitCode).toBe(3)
  })

  it('a filter on a healthy host is clean (exit 0); an unknown host or severity is a usage error (exit 2)', async () => {
    const none = await auditJson(['all', '--host', 'cmp-r1-03'])
    expect(none.doc.findings).toEqual([])
    expect(none.exitCode).toBe(0)
    const unknown = await cloudctl(['audit', 'all', '--snapshot', DEMO, '--host', 'no-such-host'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toMatch(/^Error: host "no-such-host"/m)
    const bad = await cloudctl(['audit', 'all', '--snapshot', DEMO, '--severity', 'fatal'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).not.toMatch(/\n\s+at /)
  })
})
