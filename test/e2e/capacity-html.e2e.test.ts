/**
 * End to end: `simulate capacity --html` on the bundled demo, opened in Debian's headless Chromium
 * (/usr/bin/chromium). The page is driven over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: NUL-separated JSON on fds 3 and 4, no port, no dependency): after the
 * load event the test measures the laid-out charts (getBoundingClientRect) against the report's
 * numbers, then saves a full-page screenshot to test-artifacts/capacity-report.png.
 *
 * Chromium missing: installed with apt-get when possible (.ci/run installs it); the suite is skipped,
 * with the reason in its title, only when it can be neither found nor installed.
 */
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import type {Readable, Writable} from 'node:stream'
import {describe, expect, it} from 'vitest'

import type {CapacityResult as CapacityReport} from '../../src/lib/capacity/what-if.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'
import type {JsonOf} from '../../src/lib/output/json-view.js'

type CapacityResult = JsonOf<CapacityReport>

const CHROMIUM = process.env.CLOUDCTL_CHROMIUM ?? '/usr/bin/chromium'

function ensureChromium(): string | null {
  if (existsSync(CHROMIUM)) return null
  if (process.getuid?.() !== 0) return `${CHROMIUM} is missing and installing it needs root (apt-get install -y chromium)`
  const env = {...process.env, DEBIAN_FRONTEND: 'noninteractive'}
  let r = spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], {env, stdio: 'ignore', timeout: 600_000})
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], {env, stdio: 'ignore', timeout: 300_000})
    r = spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], {env, stdio: 'ignore', timeout: 600_000})
  }
  return existsSync(CHROMIUM)
    ? null
    : `${CHROMIUM} is missing and apt-get install -y chromium did not provide it (apt-get exit ${r.status ?? r.error?.message})`
}

const skipReason = ensureChromium()
if (skipReason) process.stderr.write(`capacity-html.e2e: SKIPPED: ${skipReason}\n`)

interface CdpMessage {
  id?: number
  method?: string
  params?: Record<string, unknown>
  result?: Record<string, unknown>
  error?: {message: string}
  sessionId?: string
}

/** A minimal DevTools-protocol client over Chromium's --remote-debugging-pipe. */
class Browser {
  private nextId = 1
  private buffer = ''
  private readonly pending = new Map<number, {resolve: (m: CdpMessage) => void; reject: (e: Error) => void}>()
  private readonly listeners: Array<(m: CdpMessage) => void> = []
  private stderr = ''

  private constructor(private readonly proc: ChildProcess) {
    const out = proc.stdio[4] as Readable
    out.setEncoding('utf8')
    out.on('data', (chunk: string) => {
      this.buffer += chunk
      let i: number
      while ((i = this.buffer.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, i)) as CdpMessage
        this.buffer = this.buffer.slice(i + 1)
        if (msg.id !== undefined) {
          const p = this.pending.get(msg.id)
          this.pending.delete(msg.id)
          if (msg.error) p?.reject(new Error(`CDP: ${msg.error.message}`))
          else p?.resolve(msg)
        } else for (const l of this.listeners) l(msg)
      }
    })
    proc.stderr?.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000)
    })
    proc.on('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`chromium exited (${code}): ${this.stderr}`))
      this.pending.clear()
    })
  }

  static launch(profileDir: string): Browser {
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profileDir}`,
      '--window-size=1000,1400',
      '--remote-debugging-pipe',
      'about:blank',
    ]
    return new Browser(spawn(CHROMIUM, args, {stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe']}))
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<CdpMessage> {
    const id = this.nextId++
    const msg = JSON.stringify({id, method, params, ...(sessionId ? {sessionId} : {})})
    return new Promise((resolve, reject) => {
      this.pending.set(id, {resolve, reject})
      ;(this.proc.stdio[3] as Writable).write(`${msg}\0`)
    })
  }

  waitFor(method: string, sessionId: string): Promise<CdpMessage> {
    return new Promise((resolve) => {
      this.listeners.push((m) => {
        if (m.method === method && m.sessionId === sessionId) resolve(m)
      })
    })
  }

  async close(): Promise<void> {
    if (this.proc.exitCode !== null) return
    const exited = new Promise((r) => this.proc.once('exit', r))
    await this.send('Browser.close').catch(() => undefined)
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  }
}

interface Measured {
  title: string
  sections: Array<{
    az: string
    flavorChart: {w: number; h: number} | null
    fits: Array<{flavor: string; value: number; w: number; h: number}>
    naive: Array<{flavor: string; value: number; w: number; h: number}>
    hostChart: {w: number; h: number} | null
    util: Array<{host: string; rc: string; value: number; w: number; h: number}>
  }>
  page: {w: number; h: number}
}

// Runs in the page: sizes as laid out by Chromium, with the numbers each bar stands for.
const MEASURE = `(() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return {w: r.width, h: r.height} }
  const bars = (root, sel) => [...root.querySelectorAll(sel)].map((b) => ({flavor: b.dataset.flavor, host: b.dataset.host, rc: b.dataset.rc, value: Number(b.dataset.value), ...box(b)}))
  return {
    title: document.title,
    page: {w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight},
    sections: [...document.querySelectorAll('section.az')].map((s) => ({
      az: s.dataset.az,
      flavorChart: box(s.querySelector('svg.chart-flavors')),
      fits: bars(s, 'svg.chart-flavors rect.bar.fits'),
      naive: bars(s, 'svg.chart-flavors rect.bar.naive'),
      hostChart: box(s.querySelector('svg.chart-hosts')),
      util: bars(s, 'svg.chart-hosts rect.bar.util'),
    })),
  }
})()`

describe.skipIf(skipReason !== null)(`capacity HTML report in headless Chromium${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('renders a capacity chart and a utilisation chart per AZ, bars sized by the numbers; screenshot kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-html-'))
    const file = join(dir, 'capacity.html')
    const cli = await cloudctl([
      'simulate',
      'capacity',
      '--snapshot',
      'examples/demo-cloud.yaml',
      '--nova-conf',
      'examples/nova.conf',
      '--apply-repairs',
      '--per-host',
      '--html',
      file,
      '--json',
    ])
    expect(cli.exitCode, cli.stderr).toBe(0)
    const report = oneJsonDocument(cli.stdout) as CapacityResult
    expect(report.html).toBe(file)

    const browser = Browser.launch(mkdtempSync(join(tmpdir(), 'cloudctl-chromium-')))
    let measured: Measured
    let png: Buffer
    try {
      const {result: created} = await browser.send('Target.createTarget', {url: 'about:blank'})
      const {result: attached} = await browser.send('Target.attachToTarget', {targetId: created?.targetId, flatten: true})
      const session = attached?.sessionId as string
      await browser.send('Page.enable', {}, session)
      const loaded = browser.waitFor('Page.loadEventFired', session)
      await browser.send('Page.navigate', {url: pathToFileURL(file).href}, session)
      await loaded
      const {result} = await browser.send('Runtime.evaluate', {expression: MEASURE, returnByValue: true}, session)
      measured = (result?.result as {value: Measured}).value
      const shot = await browser.send('Page.captureScreenshot', {format: 'png', captureBeyondViewport: true}, session)
      png = Buffer.from(shot.result?.data as string, 'base64')
    } finally {
      await browser.close()
    }

    const artifacts = join(ROOT, 'test-artifacts')
    mkdirSync(artifacts, {recursive: true})
    writeFileSync(join(artifacts, 'capacity-report.png'), png)
    writeFileSync(join(artifacts, 'capacity-report.html'), await import('node:fs/promises').then((fs) => fs.readFile(file)))
    // A PNG whose IHDR says it is page-sized.
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG')
    expect(png.readUInt32BE(16)).toBeGreaterThanOrEqual(800)
    expect(png.readUInt32BE(20)).toBeGreaterThan(1000)

    expect(measured.title).toContain('cloudctl capacity')
    const azs = [...new Set(report.flavors.flatMap((f) => f.by_az.map((g) => g.name)))].sort()
    expect(azs.length).toBeGreaterThan(1)
    expect(measured.sections.map((s) => s.az)).toEqual(azs)
    for (const s of measured.sections) {
      expect(s.flavorChart?.w, s.az).toBeGreaterThan(300)
      expect(s.flavorChart?.h, s.az).toBeGreaterThan(50)
      expect(s.hostChart?.w, s.az).toBeGreaterThan(300)
      // One fits bar and one division bar per flavor, with the report's numbers.
      expect(s.fits.map((b) => [b.flavor, b.value])).toEqual(report.flavors.map((f) => [f.flavor, f.by_az.find((g) => g.name === s.az)?.fits ?? 0]))
      expect(s.naive.map((b) => [b.flavor, b.value])).toEqual(report.flavors.map((f) => [f.flavor, f.by_az.find((g) => g.name === s.az)?.naive ?? 0]))
      const largest = Math.max(...s.naive.map((b) => b.value), ...s.fits.map((b) => b.value))
      const widest = Math.max(...s.naive.map((b) => b.w), ...s.fits.map((b) => b.w))
      expect(widest).toBeGreaterThan(200)
      for (const b of [...s.fits, ...s.naive]) {
        expect(b.h, `${s.az} ${b.flavor}`).toBeGreaterThan(5)
        // Drawn to scale: width / widest = value / largest (within a pixel).
        expect(Math.abs(b.w - (b.value / largest) * widest), `${s.az} ${b.flavor} ${b.value}`).toBeLessThan(1.5)
      }
      // Utilisation: a bar per host and resource class with a provider, sized by the percentage used.
      const hosts = (report.host_usage ?? []).filter((h) => h.az === s.az)
      const expected = hosts.flatMap((h) =>
        Object.entries(h.resources)
          .filter(([, r]) => r.capacity > 0)
          .map(([rc, r]) => [h.host, rc, Math.round((r.used / r.capacity) * 1000) / 10]),
      )
      expect(expected.length, s.az).toBeGreaterThan(hosts.length)
      expect(s.util.map((b) => [b.host, b.rc, b.value]).sort()).toEqual(expected.sort())
      const full = Math.max(...s.util.map((b) => b.w / Math.min(100, b.value)).filter(Number.isFinite))
      for (const b of s.util) {
        if (b.value > 0) expect(b.w, `${b.host} ${b.rc}`).toBeGreaterThan(0)
        expect(Math.abs(b.w - (Math.min(100, b.value) / 100) * full * 100), `${b.host} ${b.rc}`).toBeLessThan(1.5)
      }
    }
    // The repaired pinned host: both NUMA cells free, its PCPU bar at 0 while the other pinned host is full.
    const az1 = measured.sections.find((s) => s.az === 'az1')
    expect(az1?.fits.find((b) => b.flavor === 'm1.pinned')?.value).toBe(2)
    expect(az1?.util.find((b) => b.host === 'pin-r1-01' && b.rc === 'PCPU')?.value).toBe(100)
  }, 120_000)
})
