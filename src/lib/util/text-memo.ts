/**
 * Values derived from texts, keyed by the text: blobs parsed once per distinct text, and the
 * capture's one string per distinct value of a repeating column (the value is the text itself).
 * Equal texts are found by direct comparison within a bucket of the same length: hashing 300k
 * distinct copies of a few 700-byte flavor blobs costs more than the parsing it saves. A length
 * with more than a few texts (host names, project ids) moves to a hashed map, where later lookups
 * of that length go straight.
 */
export class TextMemo<V> {
  private readonly byLength = new Map<number, Array<{text: string; value: V}> | null>()
  private readonly byText = new Map<string, V>()

  get(text: string, make: (text: string) => V): V {
    const bucket = this.byLength.get(text.length)
    if (bucket === null) {
      let v = this.byText.get(text)
      if (v === undefined) this.byText.set(text, (v = make(text)))
      return v
    }
    // Indexed: a memo is asked once per row, mostly before the JIT optimises its caller, and an
    // unoptimised for-of allocates an iterator result per entry compared (300k rows, 8 entries).
    if (bucket) for (let i = 0; i < bucket.length; i++) if (bucket[i].text === text) return bucket[i].value
    const value = make(text)
    if (!bucket) this.byLength.set(text.length, [{text, value}])
    else if (bucket.length < TextMemo.BUCKET) bucket.push({text, value})
    else {
      for (const e of bucket) this.byText.set(e.text, e.value)
      this.byText.set(text, value)
      this.byLength.set(text.length, null)
    }
    return value
  }

  static readonly BUCKET = 8
}

/** For a TextMemo<string> that keeps one copy of each text. */
export const itself = (text: string): string => text
