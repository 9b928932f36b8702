/**
 * Runs nova's and placement's own code (Zed) with /usr/bin/python3 for the comparison suites.
 *
 * The suites run whenever that python can import nova and placement. Otherwise they are skipped
 * with one line on stderr, except under CI=true, where a missing nova is an error (CI installs
 * python3-nova and python3-placement). CLOUDCTL_COMPARE_NOVA=0 skips them on purpose;
 * CLOUDCTL_COMPARE_NOVA=1 insists on them, like CI.
 */
import {execFileSync} from 'node:child_process'
import {closeSync, openSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

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

/** mulberry32: the cases are random but the same on every run. */
export function seeded(seed: number): {int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean} {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number],
    chance: (p) => next() < p,
  }
}
