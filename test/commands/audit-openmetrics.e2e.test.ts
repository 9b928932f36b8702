/**
 * `audit all -f openmetrics` through the built CLI on the bundled demo: promtool (Prometheus's own
 * parser and linter, Debian's prometheus package) accepts the text, and every value is the figure
 * the other commands report: the audit's counts, placement's capacity arithmetic on the snapshot's
 * rows, `simulate capacity`'s count per flavor. Also the example alerting rules (promtool check rules
 * and its rule unit tests).
 */
import {spawnSync} from 'node:child_process'
import {existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import YAML from 'yaml'

import type {AuditResult as AuditReport} from '../../src/lib/cli/audit-command.js'
import type {CapacityResult as CapacityReport} from '../../src/lib/capacity/what-if.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'
import type {JsonOf} from '../../src/lib/output/json-view.js'

type AuditResult = JsonOf<AuditReport>
type CapacityResult = JsonOf<CapacityReport>

const PROMTOOL = process.env.CLOUDCTL_PROMTOOL ?? '/usr/bin/promtool'

function ensurePromtool(): string | null {
  if (existsSync(PROMTOOL)) return null
  if (process.getuid?.() !== 0) return `${PROMTOOL} is missing and installing it needs root (apt-get install prometheus)`
  const env = {...process.env, DEBIAN_FRONTEND: 'noninteractive'}
  const args = ['install', '-y', '-qq', '--no-install-recommends', '-o', 'DPkg::Lock::Timeout=600', 'prometheus']
  let r = spawnSync('apt-get', args, {env, stdio: 'ignore', timeout: 600_000})
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], {env, stdio: 'ignore', timeout: 300_000})
    r = spawnSync('apt-get', args, {env, stdio: 'ignore', timeout: 600_000})
  }
  return existsSync(PROMTOOL) ? null : `${PROMTOOL} is missing and apt-get install prometheus did not provide it (exit ${r.status ?? r.error?.message})`
}

const skipReason = ensurePromtool()
if (skipReason) process.stderr.write(`audit-openmetrics.e2e: promtool tests SKIPPED: ${skipReason}\n`)

/** execa strips stdout's final newline; the text format requires it back. */
const asWritten = (stdout: string): string => `${stdout}\n`

function promtool(args: string[], input?: string, cwd?: string): {status: number | null; out: string} {
  const r = spawnSync(PROMTOOL, args, {input, cwd, encoding: 'utf8'})
  return {status: r.status, out: `${r.stdout}${r.stderr}`}
}

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** The sample lines (HELP/TYPE checked by promtool), label values unescaped. */
function samples(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    out.push({name: m[1], labels, value: Number(m[3])})
  }
  return out
}

const demo = 'examples/demo-cloud.yaml'

describe.skipIf(skipReason !== null)(`audit all -f openmetrics${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('is valid Prometheus text (promtool) whose values are the audit, placement and simulate capacity figures', async () => {
    const m = await cloudctl(['audit', 'all', '-s', demo, '--nova-conf', 'examples/nova.conf', '-f', 'openmetrics'])
    expect(m.exitCode, m.stderr).toBe(3)
    const lint = promtool(['check', 'metrics'], asWritten(m.stdout))
    expect(lint.status, lint.out).toBe(0)
    expect(lint.out.trim()).toBe('')
    expect(m.stdout.trimEnd().endsWith('# EOF')).toBe(true)
    const s = samples(m.stdout)
    const by = (name: string) => s.filter((x) => x.name === name)

    const audit = oneJsonDocument((await cloudctl(['audit', 'all', '-s', demo, '--json'])).stdout) as AuditResult
    expect(audit.findings.length).toBeGreaterThan(3)
    const findings = by('cloudctl_audit_findings')
    expect(findings.reduce((n, x) => n + x.value, 0)).toBe(audit.findings.length)
    for (const f of audit.findings) {
      const hit = findings.find(
        (x) => x.labels.code === f.code && x.labels.check === f.check && x.labels.severity === f.severity && x.labels.cell === (f.subject.cell ?? ''),
      )
      expect(hit, f.code).toBeDefined()
    }
    for (const x of by('cloudctl_audit_check_findings'))
      expect(x.value, `${x.labels.check} ${x.labels.severity}`).toBe(audit.counts.by_check[x.labels.check as 'leaks']?.[x.labels.severity as 'error'])
    expect(by('cloudctl_audit_unknown_cells')[0].value).toBe(0)
    expect(by('cloudctl_audit_cell_readable').map((x) => x.value)).toEqual([1, 1, 1])

    // Placement's arithmetic, redone here from the snapshot's own rows.
    const snap = YAML.parse(readFileSync(join(ROOT, demo), 'utf8')) as {
      captured_at: string
      placement: {
        resource_providers: Array<{id: number; uuid: string}>
        inventories: Array<{resource_provider_id: number; resource_class_id: number; total: number; reserved: number; allocation_ratio: number}>
        allocations: Array<{resource_provider_id: number; resource_class_id: number; used: number}>
      }
    }
    const rcName = ['VCPU', 'MEMORY_MB', 'DISK_GB']
    const capacity = by('cloudctl_provider_capacity')
    expect(capacity.length).toBe(snap.placement.inventories.length)
    for (const inv of snap.placement.inventories.filter((i) => i.resource_class_id < 3)) {
      const rp = snap.placement.resource_providers.find((p) => p.id === inv.resource_provider_id)
      const labels = (x: Sample) => x.labels.provider_uuid === rp?.uuid && x.labels.resource_class === rcName[inv.resource_class_id]
      const used = snap.placement.allocations
        .filter((a) => a.resource_provider_id === inv.resource_provider_id && a.resource_class_id === inv.resource_class_id)
        .reduce((n, a) => n + a.used, 0)
      expect(capacity.find(labels)?.value).toBeCloseTo((inv.total - inv.reserved) * inv.allocation_ratio, 6)
      expect(by('cloudctl_provider_inventory').find(labels)?.value).toBe(inv.total)
      expect(by('cloudctl_provider_reserved').find(labels)?.value).toBe(inv.reserved)
      expect(by('cloudctl_provider_used').find(labels)?.value).toBe(used)
    }

    const cap = oneJsonDocument((await cloudctl(['simulate', 'capacity', '-s', demo, '--nova-conf', 'examples/nova.conf', '--json'])).stdout) as CapacityResult
    expect(cap.flavors.length).toBeGreaterThan(2)
    expect(by('cloudctl_capacity_instances').map((x) => [x.labels.flavor, x.value])).toEqual(cap.flavors.filter((f) => !f.error).map((f) => [f.flavor, f.fits]))
    expect(by('cloudctl_capacity_naive_instances').map((x) => [x.labels.flavor, x.value])).toEqual(
      cap.flavors.filter((f) => !f.error).map((f) => [f.flavor, f.naive]),
    )

    expect(by('cloudctl_snapshot_timestamp_seconds')[0].value).toBe(Date.parse(snap.captured_at) / 1000)
    expect(by('cloudctl_audit_duration_seconds')[0].value).toBeGreaterThan(0)
  }, 120_000)

  it('escapes label values: quotes, backslashes and newlines in a provider name stay one valid sample', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-om-'))
    const snap = YAML.parse(readFileSync(join(ROOT, demo), 'utf8')) as {placement: {resource_providers: Array<{id: number; name: string}>}}
    const evil = 'cmp "quoted" \\back\\slash\nsecond line'
    snap.placement.resource_providers[0].name = evil
    writeFileSync(join(dir, 'evil.yaml'), YAML.stringify(snap))
    const m = await cloudctl(['audit', 'all', '-s', join(dir, 'evil.yaml'), '-f', 'openmetrics'])
    expect([0, 3]).toContain(m.exitCode)
    const lint = promtool(['check', 'metrics'], asWritten(m.stdout))
    expect(lint.status, lint.out).toBe(0)
    expect(samples(m.stdout).filter((x) => x.name === 'cloudctl_provider_capacity' && x.labels.provider === evil).length).toBeGreaterThan(0)
  }, 120_000)

  it('-o FILE writes the same metrics atomically, stdout stays empty; -o without -f openmetrics is a usage error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-om-'))
    const target = join(dir, 'real.prom')
    writeFileSync(target, 'old\n')
    symlinkSync(target, join(dir, 'cloudctl.prom'))
    const w = await cloudctl(['audit', 'all', '-s', demo, '-f', 'openmetrics', '-o', join(dir, 'cloudctl.prom')])
    expect(w.exitCode, w.stderr).toBe(3)
    expect(w.stdout).toBe('')
    // Written through the link (textfile directories are often links), nothing left behind.
    expect(lstatSync(join(dir, 'cloudctl.prom')).isSymbolicLink()).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['cloudctl.prom', 'real.prom'])
    const text = readFileSync(target, 'utf8')
    expect(promtool(['check', 'metrics'], text).status).toBe(0)
    expect(samples(text).filter((x) => x.name === 'cloudctl_audit_findings').length).toBeGreaterThan(3)

    const bad = await cloudctl(['audit', 'all', '-s', demo, '-o', join(dir, 'x.prom')])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/needs -f openmetrics/)
    expect(existsSync(join(dir, 'x.prom'))).toBe(false)
    const dirTarget = await cloudctl(['audit', 'all', '-s', demo, '-f', 'openmetrics', '-o', dir])
    expect(dirTarget.exitCode).toBe(2)
    expect(dirTarget.stderr).toMatch(/a directory/)
    expect(dirTarget.stderr).not.toMatch(/\n\s+at /)
  }, 120_000)

  it('the example alerting rules load (promtool check rules) and fire as their unit tests say', () => {
    const dir = join(ROOT, 'examples/prometheus')
    const check = promtool(['check', 'rules', 'cloudctl-rules.yml'], undefined, dir)
    expect(check.status, check.out).toBe(0)
    expect(check.out).toMatch(/SUCCESS: [1-9]\d* rules found/)
    const unit = promtool(['test', 'rules', 'cloudctl-rules.test.yml'], undefined, dir)
    expect(unit.status, unit.out).toBe(0)
  })
})
