/**
 * End to end: `audit all --html` on the bundled demo, loaded by Debian's headless Chromium
 * (/usr/bin/chromium): the DOM Chromium built (--dump-dom) holds one article per finding with its
 * evidence and repair, the summary counts of the audit, a capacity strip per host whose bars are the
 * placement figures, with the host's findings marked; a full-page screenshot is kept in
 * test-artifacts/audit-report.png. Database strings with markup in them stay text.
 */
import {spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {describe, expect, it} from 'vitest'

import type {AuditResult as AuditReport} from '../../src/lib/cli/audit-command.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'
import type {JsonOf} from '../../src/lib/output/json-view.js'

type AuditResult = JsonOf<AuditReport>

const CHROMIUM = process.env.CLOUDCTL_CHROMIUM ?? '/usr/bin/chromium'
const skipReason = existsSync(CHROMIUM) ? null : `${CHROMIUM} is missing (.ci/run installs it: apt-get install chromium)`
if (skipReason) process.stderr.write(`audit-html.e2e: SKIPPED: ${skipReason}\n`)

function chromium(args: string[], file: string): {status: number | null; stdout: string; stderr: string} {
  const profile = mkdtempSync(join(tmpdir(), 'cloudctl-chromium-'))
  const r = spawnSync(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      `--user-data-dir=${profile}`,
      ...args,
      pathToFileURL(file).href,
    ],
    {
      encoding: 'utf8',
      timeout: 90_000,
      maxBuffer: 64 << 20,
    },
  )
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

const decode = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')

describe.skipIf(skipReason !== null)(`audit HTML report in headless Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('shows the summary, every finding with evidence and repair, a capacity strip per host with its findings marked; screenshot kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-audit-html-'))
    const file = join(dir, 'audit.html')
    const cli = await cloudctl(['audit', 'all', '--snapshot', 'examples/demo-cloud.yaml', '--html', file, '--json'])
    expect(cli.exitCode, cli.stderr).toBe(3)
    const report = oneJsonDocument(cli.stdout) as AuditResult & {html: string}
    expect(report.html).toBe(file)

    const dom = chromium(['--dump-dom'], file)
    expect(dom.status, dom.stderr.slice(-2000)).toBe(0)
    const html = dom.stdout
    expect(html).toMatch(/<title>cloudctl audit — /)
    // Summary: the audit's counts, per check and severity.
    for (const check of report.checks) {
      const row = new RegExp(`<tr data-check="${check}">(.*?)</tr>`).exec(html)?.[1] ?? ''
      const counts = [...row.matchAll(/data-severity="(\w+)">(\d+)</g)].map((m) => [m[1], Number(m[2])])
      const c = report.counts.by_check[check]!
      expect(counts, check).toEqual([
        ['error', c.error],
        ['unknown', c.unknown],
        ['warning', c.warning],
        ['info', c.info],
      ])
    }
    // One article per finding, with its message, repair command and evidence.
    const articles = [...html.matchAll(/<article class="finding sev-(\w+)" id="f-(\d+)" data-code="([^"]+)"[^>]*>([\s\S]*?)<\/article>/g)]
    expect(articles.map((a) => [a[3], a[1]])).toEqual(report.findings.map((f) => [f.code, f.severity]))
    for (const a of articles) {
      const f = report.findings[Number(a[2])]
      expect(decode(a[4])).toContain(f.message)
      if (f.repair) expect(decode(a[4])).toContain(`repair: <code>${f.repair}</code>`)
      expect(a[4]).toMatch(/<summary>evidence<\/summary><pre>/)
      const evidence = decode(/<pre>([\s\S]*?)<\/pre>/.exec(a[4])?.[1] ?? '')
      expect(JSON.parse(evidence)).toEqual(f.evidence)
    }
    // Host strips: a bar per resource class sized by used / capacity, findings marked and linked.
    const hosts = [
      ...html.matchAll(/<div class="host[^"]*" data-host="([^"]*)" data-node="([^"]*)" data-findings="(\d+)">([\s\S]*?)<div class="marks">(.*?)<\/div>/g),
    ]
    expect(hosts.length).toBeGreaterThanOrEqual(11)
    for (const h of hosts) {
      for (const bar of h[4].matchAll(
        /data-rc="(\w+)" data-value="([\d.]+)" style="width:([\d.]+)%[^"]*"><\/div><\/div><span class="nums">([\d.]+) \/ ([\d.]+)/g,
      )) {
        const used = Number(bar[4])
        const cap = Number(bar[5])
        expect(Number(bar[2]), `${h[1]} ${bar[1]}`).toBeCloseTo((used / cap) * 100, 0)
        expect(Number(bar[3]), `${h[1]} ${bar[1]}`).toBeCloseTo(Math.min(100, (used / cap) * 100), 0)
      }
      const marks = [...h[5].matchAll(/href="#f-(\d+)" data-code="([^"]+)"/g)]
      expect(marks.length, h[1]).toBe(Number(h[3]))
      for (const m of marks) {
        const f = report.findings[Number(m[1])]
        expect(f.code).toBe(m[2])
        const names = [f.subject.host, f.subject.node]
        expect(names.includes(h[1]) || names.includes(h[2]) || f.subject.provider_uuid !== undefined, `${h[1]} ${f.code}`).toBe(true)
      }
    }
    // The pinned host with leaked pins, the misnamed provider's host, the stale provider: each marked.
    const marked = (name: string) => hosts.find((h) => h[1] === name)?.[5] ?? ''
    expect(marked('pin-r1-02')).toContain('pinning.leaked')
    expect(marked('cmp-r2-05.cloud.example.com')).toContain('provider.uuid-mismatch')
    expect(marked('cmp-r1-04')).toContain('allocation.consumer-deleted')
    expect(marked('cmp-r1-04')).toContain('provider.stale')

    const shot = chromium(['--window-size=1200,1600', `--screenshot=${join(dir, 'audit.png')}`], file)
    expect(shot.status, shot.stderr.slice(-2000)).toBe(0)
    const png = readFileSync(join(dir, 'audit.png'))
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG')
    expect(png.readUInt32BE(16)).toBe(1200)
    const artifacts = join(ROOT, 'test-artifacts')
    mkdirSync(artifacts, {recursive: true})
    copyFileSync(join(dir, 'audit.png'), join(artifacts, 'audit-report.png'))
    copyFileSync(file, join(artifacts, 'audit-report.html'))
  }, 180_000)

  it('markup in database strings stays text: no element, no script reaches the page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-audit-html-'))
    const s = await readSnapshotFile(join(ROOT, 'examples/demo-cloud.yaml'))
    const evil = '<img src=x onerror="document.title=1"><script>document.title=2</script>&amp;'
    const stale = s.placement.resource_providers.find((p) => p.name === 'cmp-r1-04')!
    stale.name = `cmp-r1-04${evil}`
    for (const i of s.nova.instances) i.display_name = evil
    const snap = join(dir, 'evil.json')
    await writeSnapshotFile(s, snap)
    const file = join(dir, 'audit.html')
    const cli = await cloudctl(['audit', 'all', '--snapshot', snap, '--html', file])
    expect(cli.exitCode, cli.stderr).toBe(3)
    const dom = chromium(['--dump-dom'], file)
    expect(dom.status).toBe(0)
    expect(dom.stdout).toMatch(/<title>cloudctl audit — [^<]*<\/title>/)
    expect(dom.stdout).not.toMatch(/<img|<script/i)
    expect(dom.stdout).toContain('cmp-r1-04&lt;img src=x onerror="document.title=1"&gt;&lt;script&gt;')
    expect(dom.stdout).toContain('&amp;amp;')
  }, 180_000)
})
