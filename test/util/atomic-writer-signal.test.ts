/**
 * One atomic writer for snapshots and the metrics file (issue 29, item 16): both go through
 * replaceFile (util/atomic-file.ts), so both leave no FILE.tmp-PID behind when SIGINT or SIGTERM
 * arrives mid-write, and the process still dies of the signal. Built CLI; the snapshot is captured
 * from a real MariaDB cloud. To stop the write at a known point, a preload module (--import) holds
 * fs.fsync (the last step before the rename) and says so on stderr: the signal then lands while the
 * temporary file exists, every time, with no timing guess.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT, cloudctl} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-atomic-signal-'))
const HOLD = join(dir, 'hold-fsync.mjs')
writeFileSync(
  HOLD,
  `import fs from 'node:fs'
import {syncBuiltinESMExports} from 'node:module'
fs.fsync = () => {
  // Never calls back: the write stays in flight until the test signals the process.
  setInterval(() => {}, 1000)
  process.stderr.write('HOLDING-FSYNC\\n')
}
syncBuiltinESMExports()
`,
)
const DEMO = join(ROOT, 'examples/demo-cloud.yaml')

/** Runs the CLI with fsync held, signals it once it is holding, and returns how it ended. */
async function interrupted(
  args: string[],
  signal: NodeJS.Signals,
  target: string,
): Promise<{code: number | null; sig: NodeJS.Signals | null; tmpWhileHeld: string[]}> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/run.js'), ...args], {
    cwd: ROOT,
    env: {...process.env, NO_COLOR: '1', NODE_OPTIONS: `--import ${pathToFileURL(HOLD).href}`},
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])))
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      if (stderr.includes('HOLDING-FSYNC')) resolve()
    })
    void exited.then(() => reject(new Error(`exited before the write: ${stderr}`)))
  })
  const tmpWhileHeld = readdirSync(dir).filter((f) => f.startsWith(`${target}.tmp-`))
  child.kill(signal)
  const [code, sig] = await exited
  return {code, sig, tmpWhileHeld}
}

describe('snapshots and the metrics file: one atomic writer, no temporary file left by a signal (built CLI, MariaDB)', {timeout: 180_000}, () => {
  let cloud: TestCloud
  let src: string[]

  beforeAll(async () => {
    const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
    const generated = generateCloud({seed: 29, cells: 1, hostsPerCell: 2, now})
    cloud = await createTestCloud('atomic_sig', {cells: ['cell1']})
    await seedSnapshot(generated.snapshot, cloud)
    src = ['--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl]
  })
  afterAll(async () => {
    await cloud?.drop()
    rmSync(dir, {recursive: true, force: true})
  })

  it.each(['SIGINT', 'SIGTERM'] as const)('%s during audit all -f openmetrics -o FILE: the temporary file is removed', async (signal) => {
    const name = `metrics-${signal}.prom`
    const r = await interrupted(['audit', 'all', '-s', DEMO, '-f', 'openmetrics', '-o', join(dir, name)], signal, name)
    expect(r.tmpWhileHeld).toHaveLength(1)
    expect(r.sig).toBe(signal)
    expect(r.code).toBeNull()
    expect(readdirSync(dir).filter((f) => f.startsWith(name))).toEqual([])
  })

  it.each(['SIGINT', 'SIGTERM'] as const)('%s during snapshot capture -o FILE: the temporary file is removed', async (signal) => {
    for (const name of [`snap-${signal}.json.gz`, `snap-${signal}.yaml`]) {
      const r = await interrupted(['snapshot', 'capture', ...src, '-o', join(dir, name)], signal, name)
      expect(r.tmpWhileHeld, name).toHaveLength(1)
      expect(r.sig).toBe(signal)
      expect(readdirSync(dir).filter((f) => f.startsWith(name))).toEqual([])
    }
  })

  it('without a signal both are written whole, the snapshot 0600, and nothing else is left beside them', async () => {
    const snap = join(dir, 'whole.json.gz')
    const c = await cloudctl(['snapshot', 'capture', ...src, '-o', snap])
    expect(c.exitCode, c.stderr).toBe(0)
    expect(statSync(snap).mode & 0o777).toBe(0o600)
    const prom = join(dir, 'whole.prom')
    const m = await cloudctl(['audit', 'all', '-s', snap, '-f', 'openmetrics', '-o', prom])
    expect([0, 1, 3]).toContain(m.exitCode)
    expect(existsSync(prom)).toBe(true)
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([])
    // The snapshot reads back (gzip ended before the fsync and the rename).
    const again = await cloudctl(['hosts', 'list', '-s', snap, '-f', 'value', '-c', 'host'])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(2)
  })
})
