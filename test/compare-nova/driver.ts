/**
 * Runs nova's and placement's own code (Zed) with /usr/bin/python3 for the comparison suites.
 *
 * The suites run whenever that python can import nova and placement. Otherwise they are skipped
 * with one line on stderr, except under CI=true, where a missing nova is an error (CI installs
 * python3-nova and python3-placement). CLOUDCTL_COMPARE_NOVA=0 skips them on purpose;
 * CLOUDCTL_COMPARE_NOVA=1 insists on them, like CI.
 */
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {createRng} from '../../src/lib/engine/rng.js'

export const PYTHON = process.env.CLOUDCTL_PYTHON ?? '/usr/bin/python3'
const DRIVER = fileURLToPath(new URL('nova_driver.py', import.meta.url))

function novaImportError(): string | null {
  try {
    execFileSync(PYTHON, ['-c', 'import nova.virt.hardware, nova.scheduler.utils, placement.objects.allocation_candidate'], {stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000})
    return null
  } catch (error) {
    const e = error as {code?: string; stderr?: Buffer}
    if (e.code === 'ENOENT') return `${PYTHON} not found`
    const last = String(e.stderr ?? '').trim().split('\n').pop()
    return last || 'import failed'
  }
}

function decide(): boolean {
  const wanted = process.env.CLOUDCTL_COMPARE_NOVA
  if (wanted === '0') return false
  const why = novaImportError()
  if (why === null) return true
  if (process.env.CI === 'true' || wanted === '1') {
    throw new Error(`test/compare-nova: ${PYTHON} cannot import nova/placement (${why}); CI needs python3-nova and python3-placement (CLOUDCTL_COMPARE_NOVA=0 skips these suites)`)
  }
  // Each test file loads this module in its own worker: the first one of this run says it, once.
  try {
    closeSync(openSync(join(tmpdir(), `cloudctl-compare-nova-skipped-${process.ppid}`), 'wx'))
    process.stderr.write(`test/compare-nova skipped: ${PYTHON} cannot import nova/placement (${why}); install python3-nova python3-placement to compare with the real code\n`)
  } catch {
    // already said in this run
  }
  return false
}

export const COMPARE = decide()

export function runNova<T>(doc: Record<string, unknown>): T {
  const out = execFileSync(PYTHON, [DRIVER], {input: JSON.stringify(doc), maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe']})
  return JSON.parse(out.toString('utf8')) as T
}

/** The engine's seeded generator: the cases are random but the same on every run. */
export function seeded(seed: number): {int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean} {
  const rng = createRng(seed)
  return {
    int: (n) => rng.int(n),
    pick: (xs) => xs[rng.int(xs.length)] as (typeof xs)[number],
    chance: (p) => rng.next() < p,
  }
}

const CACHE = fileURLToPath(new URL('.cache/', import.meta.url))

function packageVersion(name: string): string | null {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', name], {stdio: ['ignore', 'pipe', 'ignore']}).toString('utf8').trim() || null
  } catch {
    return null
  }
}

/**
 * Runs a recorder (a Python script that runs nova's or placement's own tests with the functions
 * under test wrapped) and returns its JSON lines. Recordings are cached in test/compare-nova/.cache
 * (gitignored), keyed by the python3-nova and python3-placement versions and the recorders' own
 * text, so a second run replays without running the tests again; without dpkg there is no cache.
 */
export function recorded<T>(recorder: string, sources: string[], env: Record<string, string> = {}): T[] {
  const script = fileURLToPath(new URL(recorder, import.meta.url))
  const versions = [packageVersion('python3-nova'), packageVersion('python3-placement')]
  const hash = createHash('sha256')
  hash.update(PYTHON)
  for (const v of versions) hash.update(`\0${v ?? ''}`)
  for (const f of [recorder, ...sources]) hash.update(`\0${readFileSync(fileURLToPath(new URL(f, import.meta.url)), 'utf8')}`)
  for (const [k, v] of Object.entries(env).sort()) hash.update(`\0${k}=${v}`)
  const key = `${recorder.replace(/\.py$/, '')}-${hash.digest('hex').slice(0, 16)}.jsonl`
  const cacheable = versions.every((v) => v !== null) && process.env.CLOUDCTL_COMPARE_CACHE !== '0'
  const cached = join(CACHE, key)
  if (cacheable && existsSync(cached)) return parseLines<T>(readFileSync(cached, 'utf8'))
  const dir = mkdtempSync(join(tmpdir(), 'cloudctl-rec-'))
  try {
    const file = join(dir, 'cases.jsonl')
    execFileSync(PYTHON, [script], {env: {...process.env, ...env, RECORD: file}, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26, timeout: 600_000})
    const text = readFileSync(file, 'utf8')
    if (cacheable) {
      mkdirSync(CACHE, {recursive: true})
      // write then rename: a concurrent run never reads half a file
      const tmp = join(CACHE, `${key}.${process.pid}.tmp`)
      writeFileSync(tmp, text)
      renameSync(tmp, cached)
      // recordings of an older nova or recorder are never read again
      const prefix = key.slice(0, key.lastIndexOf('-') + 1)
      for (const f of readdirSync(CACHE)) if (f.startsWith(prefix) && f !== key && f.endsWith('.jsonl')) rmSync(join(CACHE, f), {force: true})
    }
    return parseLines<T>(text)
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

function parseLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T)
}
