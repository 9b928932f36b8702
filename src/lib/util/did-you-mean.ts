/** "Did you mean": the nearest of some names to what was typed (commands, flavors, hosts). */

function distance(a: string, b: string): number {
  const d = Array.from({length: a.length + 1}, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
  }
  return d[a.length][b.length]
}

/** The closest name, if it is close enough to be what was meant (edit distance within a third, at least 2). */
export function nearest(word: string, names: Iterable<string>): string | undefined {
  let best: {name: string; d: number} | undefined
  for (const name of names) {
    const d = distance(word, name)
    if (!best || d < best.d) best = {name, d}
  }
  return best && best.d <= Math.max(2, Math.floor(word.length / 3)) ? best.name : undefined
}
