/**
 * Runs test/compare-nova/nova_driver.py (nova's and placement's own code, Zed) with /usr/bin/python3.
 * The suites that use it are skipped unless CLOUDCTL_COMPARE_NOVA=1.
 */
import {execFileSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

export const COMPARE = process.env.CLOUDCTL_COMPARE_NOVA === '1'
const DRIVER = fileURLToPath(new URL('nova_driver.py', import.meta.url))

export function runNova<T>(doc: Record<string, unknown>): T {
  const out = execFileSync(process.env.CLOUDCTL_PYTHON ?? '/usr/bin/python3', [DRIVER], {input: JSON.stringify(doc), maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe']})
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
