/**
 * Seeded PRNG for nova's two random choices (host_subset_size and shuffle_best_same_weighed_hosts).
 * Nova uses Python's `random` module; we cannot reproduce its exact stream, so the simulation is
 * reproducible for a given --seed instead. mulberry32: small, fast, good enough for picking hosts.
 */
export interface Rng {
  readonly seed: number
  /** Uniform in [0, 1). */
  next(): number
  /** Uniform integer in [0, n). */
  int(n: number): number
  clone(): Rng
}

export const DEFAULT_SEED = 42

export function createRng(seed: number = DEFAULT_SEED, state?: number): Rng {
  let s = (state ?? seed) >>> 0
  const rng: Rng = {
    seed,
    next() {
      s = (s + 0x6d2b79f5) >>> 0
      let t = s
      t = Math.imul(t ^ (t >>> 15), t | 1)
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296
    },
    int(n: number) {
      return Math.floor(rng.next() * n)
    },
    clone() {
      return createRng(seed, s)
    },
  }
  return rng
}

/** Fisher-Yates in place, as random.shuffle does. */
export function shuffleInPlace<T>(items: T[], rng: Rng): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    const tmp = items[i] as T
    items[i] = items[j] as T
    items[j] = tmp
  }
}
