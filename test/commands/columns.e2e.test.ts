/**
 * Declared listing columns (issue 29, items 1-3 and 5), through the built CLI (npm run build first):
 * every command's csv header is the same on a clean cloud and on the demo, a clean run prints the
 * header alone and exits 0, and -c takes the table's labels as well as the keys.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl, ROOT} from '../support/cli.js'

const DEMO = 'examples/demo-cloud.yaml'
// A live instance of the demo on a healthy host (cells verify-instance, simulate migrate).
const DEMO_INSTANCE = '92603ad8-6fc4-46da-9e14-7a8b7fb99abd'

let tmp: string
let clean: string
let cleanInstance: string

beforeAll(async () => {
  const b = new CloudBuilder({seed: 2901})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
  b.addHost('cell1', {host: 'cmp1', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az1'})
  b.addHost('cell1', {host: 'cmp2', vcpus: 16, memory_mb: 65536, local_gb: 500, az: 'az1'})
  cleanInstance = b.addInstance('cmp1', 'm1.small').row.uuid
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-columns-'))
  clean = join(tmp, 'clean.json')
  await writeSnapshotFile(b.build(), clean)
})

afterAll(() => {
  if (tmp) rmSync(tmp, {recursive: true, force: true})
})

/** Each command with -f, run on a snapshot FILE (instance: one live instance of it). */
const CASES: Array<{id: string; args: (file: string, instance: string) => string[]}> = [
  ...['all', 'aggregates', 'cells', 'leaks', 'pinning', 'providers', 'usage'].map((c) => ({id: `audit:${c}`, args: (f: string) => ['audit', c, '-s', f]})),
  ...['aggregates', 'leaks', 'pinning', 'providers', 'usage'].map((c) => ({id: `repair:${c}`, args: (f: string) => ['repair', c, '-s', f]})),
  {id: 'cells:list', args: (f) => ['cells', 'list', '-s', f]},
  {id: 'cells:discover-hosts', args: (f) => ['cells', 'discover-hosts', '-s', f]},
  {id: 'cells:map-instances', args: (f) => ['cells', 'map-instances', '-s', f]},
  {id: 'cells:verify-instance', args: (f, i) => ['cells', 'verify-instance', i, '-s', f]},
  {id: 'hosts:list', args: (f) => ['hosts', 'list', '-s', f]},
  {id: 'simulate:boot', args: (f) => ['simulate', 'boot', '--flavor', 'm1.small', '-s', f]},
  {id: 'simulate:capacity', args: (f) => ['simulate', 'capacity', '-s', f]},
  {id: 'simulate:migrate', args: (f, i) => ['simulate', 'migrate', '--instance', i, '-s', f]},
  {id: 'snapshot:show', args: (f) => ['snapshot', 'show', '-s', f]},
  {id: 'snapshot:validate', args: (f) => ['snapshot', 'validate', f]},
  {id: 'snapshot:diff', args: (f) => ['snapshot', 'diff', f, f]},
  {id: 'explain', args: () => ['explain']},
  {id: 'version', args: () => ['version']},
]
// `repair undo` needs an undo file a repair --apply wrote on a database: its declared listing is the
// repairs' one (src/lib/output/listings.ts REPAIR_LISTING), which the repair cases above run.
const NOT_RUN_HERE = ['repair:undo']

const header = (stdout: string) => stdout.split('\n')[0]

describe('declared listing columns', () => {
  it('covers every command that has -f', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {flags: Record<string, unknown>}>}
    const withFormat = Object.entries(manifest.commands)
      .filter(([, c]) => 'format' in c.flags)
      .map(([id]) => id)
      .sort()
    expect(withFormat.length).toBeGreaterThan(20)
    expect([...CASES.map((c) => c.id), ...NOT_RUN_HERE].sort()).toEqual(withFormat)
  })

  it('every command prints the same csv header on a clean cloud and on the demo; its exit code is the one --json reports', async () => {
    const seen: string[] = []
    for (const c of CASES) {
      const cleanCsv = await cloudctl([...c.args(clean, cleanInstance), '-f', 'csv'])
      const demoCsv = await cloudctl([...c.args(DEMO, DEMO_INSTANCE), '-f', 'csv'])
      expect(cleanCsv.stderr, c.id).not.toMatch(/Error:/)
      expect(demoCsv.stderr, c.id).not.toMatch(/Error:/)
      expect(header(cleanCsv.stdout), c.id).toBe(header(demoCsv.stdout))
      expect(header(cleanCsv.stdout), c.id).toMatch(/^"[a-z_.]+"(,"[a-z_.]+")*$/)
      // Nothing wrong with the clean cloud: every command exits 0 on it (explain and version alike).
      expect(cleanCsv.exitCode, c.id).toBe(0)
      const demoJson = JSON.parse((await cloudctl([...c.args(DEMO, DEMO_INSTANCE), '--json'])).stdout) as {exit_code: number}
      expect(demoCsv.exitCode, c.id).toBe(demoJson.exit_code)
      seen.push(c.id)
    }
    expect(seen).toHaveLength(CASES.length)
  }, 600_000)

  it('a clean audit prints the header only and exits 0, with or without -c', async () => {
    for (const check of ['aggregates', 'leaks', 'all']) {
      const r = await cloudctl(['audit', check, '-s', clean, '-f', 'csv', '-c', 'code'])
      expect(r.exitCode, check).toBe(0)
      expect(r.stdout.trim(), check).toBe('"code"')
      const v = await cloudctl(['audit', check, '-s', clean, '-f', 'value', '-c', 'code'])
      expect(v.exitCode, check).toBe(0)
      expect(v.stdout.trim(), check).toBe('')
    }
    const all = await cloudctl(['audit', 'aggregates', '-s', clean, '-f', 'csv'])
    expect(all.exitCode).toBe(0)
    expect(all.stdout.trim()).toBe('"severity","code","cell","host","subject","message","repair"')
  })

  it("audit all -f csv prints the table's columns, one row per finding, no JSON blobs", async () => {
    const j = JSON.parse((await cloudctl(['audit', 'all', '-s', DEMO, '--json'])).stdout) as {
      findings: Array<{code: string; severity: string; subject: {cell?: string; host?: string}; message: string}>
    }
    const r = await cloudctl(['audit', 'all', '-s', DEMO, '-f', 'csv'])
    expect(r.exitCode).toBe(3)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toBe('"severity","code","cell","host","subject","message","repair"')
    expect(lines).toHaveLength(j.findings.length + 1)
    expect(r.stdout).not.toContain('{""')
    for (const [i, f] of j.findings.entries()) {
      expect(lines[i + 1].startsWith(`"${f.severity}","${f.code}","${f.subject.cell ?? ''}","${f.subject.host ?? ''}",`)).toBe(true)
    }
  })

  it('every finding names its host under subject.host: -c subject.host works for leaks', async () => {
    const j = JSON.parse((await cloudctl(['audit', 'leaks', '-s', DEMO, '--json'])).stdout) as {
      findings: Array<{code: string; subject: {host?: string; node?: string}}>
    }
    expect(j.findings.length).toBeGreaterThan(0)
    for (const f of j.findings) {
      expect(f.subject.host, f.code).toBeTruthy()
      expect(f.subject.node, f.code).toBeTruthy()
    }
    const r = await cloudctl(['audit', 'leaks', '-s', DEMO, '-f', 'value', '-c', 'subject.host,code'])
    expect(r.exitCode).toBe(3)
    expect(r.stdout.trim().split('\n')).toEqual(j.findings.map((f) => `${f.subject.host} ${f.code}`))
    const onClean = await cloudctl(['audit', 'leaks', '-s', clean, '-f', 'csv', '-c', 'subject.host'])
    expect(onClean.exitCode).toBe(0)
    expect(onClean.stdout.trim()).toBe('"subject.host"')
  })

  it("-c takes the table's header labels, case-insensitively, as well as keys", async () => {
    const j = JSON.parse((await cloudctl(['hosts', 'list', '-s', DEMO, '--json'])).stdout) as {hosts: Array<{host: string; availability_zone: string | null}>}
    const r = await cloudctl(['hosts', 'list', '-s', DEMO, '-f', 'value', '-c', 'Host', '-c', 'AZ'])
    expect(r.exitCode).toBe(0)
    // Not trim(): the last row may be a stale provider with no zone, its line ending in the separator.
    expect(r.stdout.replace(/\n$/, '').split('\n')).toEqual(j.hosts.map((h) => `${h.host} ${h.availability_zone ?? ''}`))
    const lower = await cloudctl(['hosts', 'list', '-s', DEMO, '-f', 'csv', '-c', 'az'])
    expect(lower.exitCode).toBe(0)
    expect(header(lower.stdout)).toBe('"availability_zone"')
    const finding = await cloudctl(['audit', 'leaks', '-s', DEMO, '-f', 'csv', '-c', 'Finding'])
    expect(header(finding.stdout)).toBe('"message"')
    const bad = await cloudctl(['hosts', 'list', '-s', clean, '-f', 'csv', '-c', 'nope'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('no column "nope"')
    expect(bad.stderr).toMatch(/Hint: Columns: host, node, cell/)
  })

  it('a repair lists its plan: one row per write, as its table; -c statement for scripts; nothing to do is the header alone', async () => {
    interface Step {
      db: string
      op: string
      table: string
      why: string
    }
    const j = JSON.parse((await cloudctl(['repair', 'leaks', '-s', DEMO, '--json'])).stdout) as {plan: {steps: Step[]}}
    const writes = j.plan.steps.filter((s) => s.op !== 'check')
    expect(writes.length).toBeGreaterThan(0)
    expect(writes.length).toBeLessThan(j.plan.steps.length)
    const csv = await cloudctl(['repair', 'leaks', '-s', DEMO, '-f', 'csv'])
    expect(csv.exitCode).toBe(3)
    const lines = csv.stdout.trim().split('\n')
    expect(lines[0]).toBe('"db","statement","parameters","rows","why"')
    expect(lines).toHaveLength(writes.length + 1)
    const v = await cloudctl(['repair', 'leaks', '-s', DEMO, '-f', 'value', '-c', 'Database,op,why'])
    expect(v.stdout.trim().split('\n')).toEqual(writes.map((s) => `${s.db} ${s.op} ${s.why}`))
    const stmt = await cloudctl(['repair', 'leaks', '-s', DEMO, '-f', 'value', '-c', 'statement'])
    const statements = stmt.stdout.trim().split('\n')
    expect(statements).toHaveLength(writes.length)
    // Each row is its step's statement: a DELETE or UPDATE of the step's table (repair leaks does both).
    expect(statements.map((sql) => sql.replace(/^(DELETE FROM|UPDATE) (`\w+`).*$/, '$1 $2'))).toEqual(
      writes.map((w) => `${w.op === 'delete' ? 'DELETE FROM' : 'UPDATE'} \`${w.table}\``),
    )
    const none = await cloudctl(['repair', 'leaks', '-s', clean, '-f', 'value', '-c', 'statement'])
    expect(none.exitCode).toBe(0)
    expect(none.stdout.trim()).toBe('')
  })
})
