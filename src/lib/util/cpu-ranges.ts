/**
 * "4-7,12-15" for [4,5,6,7,12,13,14,15]: CPU numbers as nova's own cpuset strings read. One writing
 * for the engine's reasons, the plan diff and the capacity report, so that they never disagree.
 */
export function cpuRanges(cpus: Iterable<number>): string {
  const s = [...cpus].sort((a, b) => a - b)
  const out: string[] = []
  for (let i = 0; i < s.length;) {
    let j = i
    while (j + 1 < s.length && (s[j + 1] as number) === (s[j] as number) + 1) j++
    out.push(j > i ? `${s[i]}-${s[j]}` : String(s[i]))
    i = j + 1
  }
  return out.join(',')
}
