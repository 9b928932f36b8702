/**
 * Values derived from texts, keyed by the text: blobs parsed once per distinct text.
 *
 * A Map keyed by the text. The instance blobs an audit reads come as one string per distinct text
 * (the capture's memo and digests, the .cloudctl file's dictionaries), and V8 keeps a string's hash
 * once computed: finding such a text again hashes nothing. A text seen for the first time is hashed
 * whole, though, and a loaded host's NUMA topology (3-4 KB) is its own: its cpu and memory usage
 * and pinned pCPUs differ from every other host's. So a memo that has met PROBE distinct texts and
 * found fewer than PROBE / PROBE_HITS of them again stops looking and derives each value afresh
 * (the values are equal, only no longer shared): on a 10k-host cloud that is 38 MB of text not
 * hashed for no parse saved, while identical idle hosts (one text) or instances of one flavor keep
 * sharing theirs.
 */
export class TextMemo<V> {
  private byText: Map<string, V> | null = new Map()
  private hits = 0

  get(text: string, make: (text: string) => V): V {
    const memo = this.byText
    if (memo === null) return make(text)
    let v = memo.get(text)
    if (v !== undefined) {
      this.hits++
      return v
    }
    memo.set(text, (v = make(text)))
    // Decided once, on the PROBE-th distinct text.
    if (memo.size === TextMemo.PROBE && this.hits * TextMemo.PROBE_HITS < TextMemo.PROBE) this.byText = null
    return v
  }

  /** Distinct texts met before the memo decides whether it pays. */
  static readonly PROBE = 256
  /** It keeps looking when PROBE / PROBE_HITS lookups or more found their text again by then. */
  static readonly PROBE_HITS = 4
}
