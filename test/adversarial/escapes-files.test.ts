/**
 * Issue 25 item 14: terminal output was clean, but the files cloudctl writes kept database strings'
 * ESC, BEL, C1 and bidi controls raw: `cat report.html` or `cat cloudctl.prom` then ran them. Every
 * file format goes through the one escaper (output/terminal.ts terminalSafe, via escapeHtml and the
 * OpenMetrics label escaper): the planted controls must appear in each file as visible escapes,
 * never as bytes. csv, value and yaml on stdout (redirected to a file by cron) are checked too.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {ROOT, cloudctl} from '../support/cli.js'

// Retitle the window, ring the bell, clear the screen, a C1 CSI, DEL, a carriage return and a right-to-left override.
const EVIL = '\u001B]0;pwned\u0007\u001B[2J\u009B31m\u007F\r\u202E'
const HOST = 'cmp-r1-01'
const EVIL_HOST = `${HOST}\u001B]0;host\u0007`

// Any C0 byte but \n and \t, DEL, C1, or a bidi control.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-escapes-files-'))
const snap = join(dir, 'evil.json')

function plant(s: Snapshot): Snapshot {
  for (const i of s.nova.instances) i.display_name = `vm${EVIL}${i.display_name ?? ''}`
  for (const a of s.nova_api.aggregates) {
    a.name = `${a.name}${EVIL}`
    if (a.metadata.availability_zone) a.metadata.availability_zone = `${a.metadata.availability_zone}${EVIL}`
  }
  for (const c of s.cells) if (c.name === 'cell1') c.name = `cell1${EVIL}`
  for (const f of s.nova_api.flavors) f.name = `${f.name}${EVIL}`
  return JSON.parse(JSON.stringify(s).split(HOST).join(JSON.stringify(EVIL_HOST).slice(1, -1))) as Snapshot
}

function firstForbidden(text: string): string | undefined {
  const m = FORBIDDEN.exec(text)
  return m ? JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 20)) : undefined
}

describe('database strings cannot drive a terminal through a written file (built CLI)', {timeout: 180_000}, () => {
  beforeAll(async () => {
    await writeSnapshotFile(plant(await readSnapshotFile(join(ROOT, 'examples/demo-cloud.yaml'))), snap)
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('audit all --html: no control byte; the planted names shown as escapes', async () => {
    const html = join(dir, 'audit.html')
    const r = await cloudctl(['audit', 'all', '-s', snap, '--nova-conf', 'examples/nova.conf', '--html', html])
    expect(r.exitCode, r.stderr).toBe(3)
    const text = readFileSync(html, 'utf8')
    expect(firstForbidden(text)).toBeUndefined()
    expect(text).toContain('cmp-r1-01\\x1b]0;host\\x07')
    expect(text).toContain('cell1\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\x7f\\x0d\\u202e')
  })

  it('simulate capacity --html: no control byte', async () => {
    const html = join(dir, 'capacity.html')
    const r = await cloudctl(['simulate', 'capacity', '-s', snap, '--nova-conf', 'examples/nova.conf', '--per-host', '--html', html])
    expect(r.exitCode, r.stderr).toBe(0)
    const text = readFileSync(html, 'utf8')
    expect(firstForbidden(text)).toBeUndefined()
    expect(text).toMatch(/m1\.\w+\\x1b\]0;pwned\\x07/)
    expect(text).toContain('cmp-r1-01\\x1b]0;host\\x07')
  })

  it('audit all -f openmetrics -o FILE: no control byte, labels escaped per the text format', async () => {
    const prom = join(dir, 'cloudctl.prom')
    const r = await cloudctl(['audit', 'all', '-s', snap, '--nova-conf', 'examples/nova.conf', '-f', 'openmetrics', '-o', prom])
    expect(r.exitCode, r.stderr).toBe(3)
    const text = readFileSync(prom, 'utf8')
    expect(firstForbidden(text)).toBeUndefined()
    // The escape's backslash is itself escaped: a scraper reads the label value as the text \x1b]0;host\x07.
    expect(text).toContain('provider="cmp-r1-01\\\\x1b]0;host\\\\x07"')
    expect(text).toContain('cell="cell1\\\\x1b]0;pwned\\\\x07\\\\x1b[2J\\\\x9b31m\\\\x7f\\\\x0d\\\\u202e"')
    // Only the three escapes the format defines (\\, \", \n) follow a backslash inside label values.
    for (const m of text.matchAll(/="((?:[^"\\]|\\.)*)"/g)) expect(m[1].replace(/\\[\\"n]/g, '')).not.toContain('\\')
    // The same text on stdout.
    const out = await cloudctl(['audit', 'all', '-s', snap, '--nova-conf', 'examples/nova.conf', '-f', 'openmetrics'])
    expect(out.stdout.split('\n').filter((l) => !l.startsWith('cloudctl_audit_duration_seconds'))).toEqual(
      text
        .trimEnd()
        .split('\n')
        .filter((l) => !l.startsWith('cloudctl_audit_duration_seconds')),
    )
  })

  it.each(['csv', 'value', 'yaml', 'json'])('cells list -f %s (redirected to a file): no control byte', async (format) => {
    const r = await cloudctl(['cells', 'list', '-s', snap, '-f', format])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(firstForbidden(r.stdout)).toBeUndefined()
    expect(r.stdout).toMatch(/cell1(\\x1b|\\e|\\u001b|\\u001B)/)
  })
})
