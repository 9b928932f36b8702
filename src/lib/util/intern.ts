/**
 * One string per distinct value of a column: the reader's memo for columns whose values repeat
 * (domain/tables `repeats`). A short list while there are few values (a flavor's blob is 500 bytes
 * and more; hashing it for a Map costs ten times comparing it with a handful of others), a Map beyond.
 */
export interface Memo {
  list: string[]
  map: Map<string, string> | null
}

const LIST_MAX = 16

export const newMemo = (): Memo => ({list: [], map: null})

/** The memo's copy of `s`, which becomes the copy when it is the first of its value. */
export function same(m: Memo, s: string): string {
  if (m.map !== null) {
    const t = m.map.get(s)
    if (t !== undefined) return t
    m.map.set(s, s)
    return s
  }
  const l = m.list
  for (let i = 0; i < l.length; i++) if (l[i] === s) return l[i] as string
  if (l.length < LIST_MAX) l.push(s)
  else m.map = new Map([...l.map((t): [string, string] => [t, t]), [s, s]])
  return s
}
