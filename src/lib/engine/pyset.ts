/**
 * The iteration order of a CPython (3.11) set of small non-negative integers.
 *
 * nova's CPU pinning (_pack_instance_onto_cores) takes "the first N" CPUs of thread-sibling sets
 * with list(set)[:N]; which host CPUs a guest gets therefore depends on the hash-table layout of
 * those sets, not on numeric order ({4, 10} iterates 10, 4 in a table of 8 slots). To pin the same
 * CPUs as nova, the engine replays the table: hash(i) == i for these ints, open addressing with
 * LINEAR_PROBES 9 and PERTURB_SHIFT 5 (Objects/setobject.c), resize at fill*5 >= mask*3 to the
 * smallest power of two above used*4, set(list) inserting in list order, intersection iterating
 * the smaller operand, difference either re-inserting survivors or copying and discarding.
 */
const LINEAR_PROBES = 9
const PERTURB_SHIFT = 5
const MINSIZE = 8
const DUMMY = -1
const EMPTY = -2

export class PyIntSet {
  private table: number[] = new Array<number>(MINSIZE).fill(EMPTY)
  private mask = MINSIZE - 1
  private fill = 0
  private used = 0
  private readonly members = new Set<number>()

  static of(values: Iterable<number>): PyIntSet {
    const s = new PyIntSet()
    for (const v of values) s.add(v)
    return s
  }

  /**
   * A SetOfIntegersField value of a nova object read from its JSON list: set(list) by
   * from_primitive, re-inserted element by element by CoercedSet._coerce_set, then merged into
   * the (empty) CoercedSet.
   */
  static novaField(list: Iterable<number>): PyIntSet {
    return PyIntSet.of(PyIntSet.of(list).values()).copy()
  }

  get size(): number {
    return this.used
  }

  has(v: number): boolean {
    return this.members.has(v)
  }

  /** Slot order, as `for x in s` / list(s) sees it. */
  values(): number[] {
    const out: number[] = []
    for (const k of this.table) if (k >= 0) out.push(k)
    return out
  }

  add(v: number): void {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`PyIntSet holds non-negative integers, got ${v}`)
    if (this.members.has(v)) return
    let i = v & this.mask
    let perturb = v
    let freeslot = -1
    for (;;) {
      const probes = i + LINEAR_PROBES <= this.mask ? LINEAR_PROBES : 0
      for (let j = i; j <= i + probes; j++) {
        const k = this.table[j] as number
        if (k === EMPTY) {
          this.place(freeslot >= 0 ? freeslot : j, freeslot < 0)
          this.table[freeslot >= 0 ? freeslot : j] = v
          this.members.add(v)
          return this.maybeResize(freeslot < 0)
        }
        if (k === DUMMY && freeslot < 0) freeslot = j
      }
      perturb = Math.floor(perturb / (1 << PERTURB_SHIFT))
      i = (i * 5 + 1 + perturb) & this.mask
    }
  }

  /** set.discard: leaves a dummy, as CPython does. */
  discard(v: number): void {
    if (!this.members.delete(v)) return
    const at = this.table.indexOf(v)
    this.table[at] = DUMMY
    this.used--
  }

  /** a & b */
  static intersection(a: PyIntSet, b: PyIntSet): PyIntSet {
    // set_intersection iterates `other` unless it is the larger one
    const [so, other] = b.size > a.size ? [b, a] : [a, b]
    const out = new PyIntSet()
    for (const k of other.values()) if (so.has(k)) out.add(k)
    return out
  }

  /** a - b */
  static difference(a: PyIntSet, b: PyIntSet): PyIntSet {
    if (a.size >> 2 > b.size) {
      const out = a.copy()
      for (const k of b.values()) out.discard(k)
      return out
    }
    const out = new PyIntSet()
    for (const k of a.values()) if (!b.has(k)) out.add(k)
    return out
  }

  /** set(s) of a set: set_merge into an empty set. */
  copy(): PyIntSet {
    const out = new PyIntSet()
    if (this.used * 5 >= out.mask * 3) out.resize(this.used * 2)
    if (out.mask === this.mask && this.fill === this.used) {
      out.table = [...this.table]
    } else {
      for (const k of this.values()) out.insertClean(k)
    }
    out.fill = this.used
    out.used = this.used
    for (const k of this.values()) out.members.add(k)
    return out
  }

  private place(_slot: number, wasEmpty: boolean): void {
    if (wasEmpty) this.fill++
    this.used++
  }

  private maybeResize(filledEmpty: boolean): void {
    if (!filledEmpty) return
    if (this.fill * 5 < this.mask * 3) return
    this.resize(this.used > 50000 ? this.used * 2 : this.used * 4)
  }

  private resize(minused: number): void {
    let size = MINSIZE
    while (size <= minused) size <<= 1
    const old = this.values()
    this.table = new Array<number>(size).fill(EMPTY)
    this.mask = size - 1
    this.fill = old.length
    this.used = old.length
    for (const k of old) this.insertClean(k)
  }

  private insertClean(v: number): void {
    let i = v & this.mask
    let perturb = v
    for (;;) {
      if (this.table[i] === EMPTY) {
        this.table[i] = v
        return
      }
      if (i + LINEAR_PROBES <= this.mask) {
        for (let j = i + 1; j <= i + LINEAR_PROBES; j++) {
          if (this.table[j] === EMPTY) {
            this.table[j] = v
            return
          }
        }
      }
      perturb = Math.floor(perturb / (1 << PERTURB_SHIFT))
      i = (i * 5 + 1 + perturb) & this.mask
    }
  }
}
