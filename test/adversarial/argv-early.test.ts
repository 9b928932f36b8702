/**
 * Issue 25 item 15: `ps` showed the --api-db password for the first 0.24-0.39 s of every run, until
 * oclif had loaded and argv was rewritten. bin/run.js now rewrites it first. The test reads
 * /proc/PID/cmdline of the real CLI:
 *  - held (test/support/hold-import.mjs) at the moment run.js asks for oclif, the first slow module:
 *    argv must already be masked;
 *  - sampled in a tight loop from spawn on, against a server that accepts and never answers (the run
 *    stays alive): once masked, the password never comes back, and the samples that show it are only
 *    those taken before node ran a line of run.js (node's own start-up, which no script can shorten).
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {createServer, type Server, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {execa} from 'execa'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, ROOT} from '../support/cli.js'

const PW = 'Argv-Early-Pw9'
const dir = mkdtempSync(join(tmpdir(), 'cloudctl-argv-early-'))
const HOLD = fileURLToPath(new URL('../support/hold-import.mjs', import.meta.url))

let server: Server
let port = 0
const sockets: Socket[] = []

function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0+$/, '').split('\0').join(' ')
  } catch {
    return undefined
  }
}

describe('the --api-db password leaves argv before anything slow loads (built CLI)', {timeout: 60_000}, () => {
  beforeAll(async () => {
    // A MySQL port that accepts and never sends the handshake: the CLI waits (its connect timeout).
    server = createServer((s) => sockets.push(s))
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    port = (server.address() as {port: number}).port
  })
  afterAll(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((done) => server.close(() => done()))
    rmSync(dir, {recursive: true, force: true})
  })

  const args = () => [
    'cells',
    'list',
    '--api-db',
    `mysql+pymysql://nova:${PW}@127.0.0.1:${port}/nova_api`,
    `--placement-db=mysql://placement:${PW}@127.0.0.1:${port}/placement`,
    '--cell-db',
    `cell1=mysql://nova:${PW}@127.0.0.1:${port}/nova`,
  ]

  it('held where run.js imports oclif, /proc/PID/cmdline is already masked', async () => {
    const marker = join(dir, 'held')
    const child = execa('node', ['--import', HOLD, BIN, ...args()], {
      cwd: ROOT,
      reject: false,
      env: {NO_COLOR: '1', HOLD_IMPORT: 'dist/lib/cli/oclif.js:3000', HOLD_MARKER: marker},
    })
    try {
      let seen: string | undefined
      for (let i = 0; i < 2000 && seen === undefined; i++) {
        try {
          readFileSync(marker)
          seen = cmdline(child.pid as number)
        } catch {
          await new Promise((done) => setTimeout(done, 5))
        }
      }
      expect(seen, 'the hold was reached').toBeDefined()
      expect(seen).not.toContain(PW)
      expect(seen).toContain('cloudctl cells list --api-db mysql+pymysql://nova:***@127.0.0.1')
      expect(seen).toContain('--cell-db cell1=mysql://nova:***@127.0.0.1')
    } finally {
      child.kill('SIGKILL')
      await child
    }
  })

  it('sampled from spawn on: masked before the CLI loads, and never shown again', async () => {
    const child = execa('node', [BIN, ...args()], {cwd: ROOT, reject: false, env: {NO_COLOR: '1'}})
    const pid = child.pid as number
    const original = ['node', BIN, ...args()].join(' ')
    const samples: Array<{t: number; text: string}> = []
    const t0 = performance.now()
    let maskedAt: number | undefined
    // A tight synchronous loop: nothing else of this process runs while it samples. It goes on for
    // 500 ms after the masked title appears (the connection is still pending then), at most 20 s.
    while (performance.now() - t0 < 20_000 && (maskedAt === undefined || performance.now() - maskedAt < 500)) {
      const text = cmdline(pid)
      if (text === undefined || text === '') continue
      samples.push({t: performance.now() - t0, text})
      if (maskedAt === undefined && text.startsWith('cloudctl ')) maskedAt = performance.now()
    }
    child.kill('SIGKILL')
    await child
    const firstMasked = samples.findIndex((s) => s.text.startsWith('cloudctl cells list'))
    expect(firstMasked, 'the masked title was seen').toBeGreaterThanOrEqual(0)
    // Before the rewrite, only node's untouched argv; after it, never the password.
    for (const s of samples.slice(0, firstMasked)) expect(s.text).toBe(original)
    for (const s of samples.slice(firstMasked)) expect(s.text).not.toContain(PW)
    const shown = samples.slice(0, firstMasked)
    console.log(
      `argv-early: ${samples.length} samples; password visible in ${shown.length} (until ${shown.length > 0 ? shown.at(-1)?.t.toFixed(1) : '0'} ms after spawn), masked from ${samples[firstMasked].t.toFixed(1)} ms`,
    )
  })
})
