/**
 * Values derived from blob texts, keyed by the text. Equal texts are found by direct comparison
 * within a bucket of the same length: hashing 300k distinct copies of a few 700-byte flavor blobs
 * costs more than the parsing it saves. Buckets hold a few texts, then spill into a hashed map.
 */
export class TextMemo<V> {
  private readonly byLength = new Map<number, Array<{text: string; value: V}>>()
  private readonly byText = new Map<string, V>()

  get(text: string, make: (text: string) => V): V {
    const bucket = this.byLength.get(text.length)
    if (bucket) for (const e of bucket) if (e.text === text) return e.value
    if (bucket && bucket.length >= TextMemo.BUCKET) {
      let v = this.byText.get(text)
      if (v === undefined) this.byText.set(text, (v = make(text)))
      return v
    }
    const value = make(text)
    if (bucket) bucket.push({text, value})
    else this.byLength.set(text.length, [{text, value}])
    return value
  }

  static readonly BUCKET = 8
}
