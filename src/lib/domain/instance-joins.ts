/**
 * The uuid joins of instance rows and instance mappings that CloudModel keeps (built on first use),
 * made through its consumer index instead of maps of their own: on a 10k cloud a Map of 300k uuids
 * costs ~30 MB and a few hundred ms to fill, and the consumer index already holds nearly every uuid.
 */
import type {Allocation, Instance, Snapshot} from './snapshot.js'
import type {StringIndex} from '../util/string-index.js'

/** What the joins read of the model. */
interface Joinable {
  readonly snapshot: Snapshot
  readonly consumerIndex: StringIndex
  readonly consumerIds: readonly string[]
  readonly liveNodeListAt: ReadonlyArray<Instance[] | undefined>
}

/**
 * Instance rows grouped by uuid, each group read as an array made when asked for. Nearly every uuid
 * has one row: an array of one per uuid kept for the whole audit was 324k arrays on a 10k cloud
 * (18 MB, each copied by the scavenger and faulted in), while an array made per question dies young.
 * A uuid with several rows (live in two cells, a cross-cell move's hidden copy) keeps its list.
 */
export class InstanceRows {
  /** Rows of instance uuids that hold no allocation. */
  readonly other = new Map<string, Instance[]>()
  private count = 0
  /** Per uuid in first-seen order: its consumer position (-1: holds no allocation). */
  readonly orderConsumer: Int32Array
  /** Per uuid in first-seen order: the position of its first row in snapshot.nova.instances. */
  private readonly orderFirst: Int32Array
  /** Per allocation consumer: the position of its only row, or NONE, or SEVERAL (in `several`). */
  private readonly single: Int32Array
  private readonly several = new Map<number, Instance[]>()

  constructor(private readonly model: Joinable) {
    const instances = model.snapshot.nova.instances
    this.single = new Int32Array(model.consumerIds.length).fill(NONE)
    this.orderConsumer = new Int32Array(instances.length)
    this.orderFirst = new Int32Array(instances.length)
    const consumerIndex = model.consumerIndex
    // Instances of a cell are in id order, as their consumers first got allocations.
    let hint = 0
    for (let pos = 0; pos < instances.length; pos++) {
      const inst = instances[pos]
      const index = consumerIndex.near(inst.uuid, hint)
      if (index === undefined) {
        const rows = this.other.get(inst.uuid)
        if (rows) rows.push(inst)
        else {
          this.other.set(inst.uuid, [inst])
          this.firstSeen(-1, pos)
        }
        continue
      }
      hint = index + 1
      const at = this.single[index]
      if (at === NONE) {
        this.single[index] = pos
        this.firstSeen(index, pos)
      } else if (at === SEVERAL) this.several.get(index)?.push(inst)
      else {
        this.several.set(index, [instances[at], inst])
        this.single[index] = SEVERAL
      }
    }
  }

  /** The number of distinct uuids; order(k) and orderConsumer[k] are the k-th in first-seen order (instancesByUuid's). */
  get size(): number {
    return this.count
  }

  private firstSeen(consumer: number, pos: number): void {
    this.orderConsumer[this.count] = consumer
    this.orderFirst[this.count++] = pos
  }

  /** Rows of allocation consumer i (consumerIds[i]), in snapshot order; undefined: none. */
  ofConsumer(i: number): Instance[] | undefined {
    const at = this.single[i]
    if (at >= 0) return [this.model.snapshot.nova.instances[at]]
    return at === NONE ? undefined : this.several.get(i)
  }

  /** When consumer i has a single instance row, that row's liveNodeListAt list. */
  nodeListOfConsumer(i: number): readonly Instance[] | undefined {
    const at = this.single[i]
    return at >= 0 ? this.model.liveNodeListAt[at] : undefined
  }

  /** Rows of the k-th uuid in first-seen order (k < size), in snapshot order. */
  order(k: number): Instance[] {
    const consumer = this.orderConsumer[k]
    if (consumer >= 0) return this.ofConsumer(consumer) as Instance[]
    return this.other.get(this.model.snapshot.nova.instances[this.orderFirst[k]].uuid) as Instance[]
  }
}

const NONE = -1
const SEVERAL = -2

export interface MappingPositions {
  /** Per allocation consumer, the position of its uuid's last mapping (-1: none). */
  ofConsumer: Int32Array
  /** The same for uuids that hold no allocation. */
  other: ReadonlyMap<string, number>
  /** Whether some uuid has more than one mapping. */
  repeated: boolean
  /** Per mapping position, the consumer position of its uuid (-1: holds no allocation). */
  consumerAt: Int32Array
}

/**
 * Where each instance uuid's mapping is in nova_api.instance_mappings: the last one of the uuid, as a
 * uuid-keyed map keeps; by consumer position for allocation consumers, by uuid for the others.
 */
export function locateMappings(model: Joinable): MappingPositions {
  const mappings = model.snapshot.nova_api.instance_mappings
  const ofConsumer = new Int32Array(model.consumerIds.length).fill(-1)
  const other = new Map<string, number>()
  const consumerAt = new Int32Array(mappings.length)
  let repeated = false
  let hint = 0
  for (let i = 0; i < mappings.length; i++) {
    const index = model.consumerIndex.near(mappings[i].instance_uuid, hint)
    consumerAt[i] = index ?? -1
    if (index === undefined) {
      const before = other.size
      other.set(mappings[i].instance_uuid, i)
      repeated ||= other.size === before
    } else {
      repeated ||= ofConsumer[index] >= 0
      ofConsumer[index] = i
      hint = index + 1
    }
  }
  return {ofConsumer, other, repeated, consumerAt}
}

/**
 * Each allocation consumer's rows, as a run of the allocation table: placement writes a consumer's
 * rows together and they are read by id, so a consumer's rows are mostly one run, kept as its first
 * row and one past its last. A list per consumer made here would be kept for the whole audit (300k
 * arrays on a 10k cloud, each copied by the collector and faulted in); a slice made when asked for
 * dies young. A consumer met again later (its allocations rewritten by a move) keeps a list of all
 * its rows, in row order.
 */
export class ConsumerRuns {
  // Sized for a consumer per row, the most there can be: the part never written is never touched.
  private readonly start: Int32Array
  private readonly end: Int32Array
  private count = 0
  private readonly rejoined = new Map<number, Allocation[]>()

  /** Fills `index` with the consumers of the rows, in first-seen order. */
  constructor(
    private readonly rows: readonly Allocation[],
    index: StringIndex,
  ) {
    this.start = new Int32Array(rows.length)
    this.end = new Int32Array(rows.length)
    this.runs(index)
  }

  /** Consumer i's rows, in row order: a new array (the rows themselves, not copies). */
  of(i: number): Allocation[] {
    if (this.rejoined.size > 0) {
      const list = this.rejoined.get(i)
      if (list) return list.slice()
    }
    return this.rows.slice(this.start[i], this.end[i])
  }

  private runs(index: StringIndex): void {
    const rows = this.rows
    const n = rows.length
    let start = 0
    while (start < n) {
      const consumer = rows[start].consumer_id
      let end = start + 1
      while (end < n && rows[end].consumer_id === consumer) end++
      const at = index.add(consumer)
      if (at < this.count) {
        let list = this.rejoined.get(at)
        if (!list) this.rejoined.set(at, (list = rows.slice(this.start[at], this.end[at])))
        for (let i = start; i < end; i++) list.push(rows[i])
      } else {
        this.start[at] = start
        this.end[at] = end
        this.count++
      }
      start = end
    }
  }
}
