/**
 * The blobs of a snapshot's rows (NUMA topologies, stats, embedded flavors), as CloudModel reads
 * them: parsed on first use and cached per row, and a blob that cannot be read recorded rather than
 * thrown. Apart from model.ts because none of it depends on the indexes: CloudModel extends it and
 * provides only the rows to look at.
 */
import {TextMemo} from '../util/text-memo.js'
import {isFlatPlainObject, jsonTopLevel} from './json-scan.js'
import {
  type HostNumaTopology,
  type InstanceFlavors,
  type InstanceNumaTopology,
  type Parsed,
  parseHostNumaTopology,
  parseInstanceFlavors,
  parseInstanceNumaTopology,
  parseJsonText,
  parseStats,
} from './nova-objects.js'
import type {ComputeNode, Instance, Snapshot} from './snapshot.js'

export interface BlobError {
  table: 'compute_nodes' | 'instance_extra' | 'request_specs'
  column: string
  cell_uuid?: string
  /** compute node uuid / instance uuid */
  subject: string
  error: string
}

/** A blob of a live row that cannot be read, with the row it belongs to (the audits name it). */
export type UnreadableBlob =
  | {table: 'compute_nodes'; column: 'numa_topology' | 'stats'; row: ComputeNode; error: string}
  | {table: 'instance_extra'; column: 'numa_topology' | 'flavor'; row: Instance; error: string}

/** The blob readers unreadableBlobs asks: the model's own, or the audits' (which share parses between equal texts). */
export type BlobReaders = Pick<ModelBlobs, 'hostNumaTopology' | 'statsReadable' | 'instanceNumaTopology' | 'instanceFlavors'> & {
  /** The blobs of the live row at a position of snapshot.nova.instances, where the reader keeps them by position. */
  liveInstanceBlobsAt?(): {
    numa: ReadonlyArray<Parsed<InstanceNumaTopology | null> | undefined>
    flavors: ReadonlyArray<Parsed<InstanceFlavors | null> | undefined>
  }
}

export abstract class ModelBlobs {
  abstract readonly snapshot: Snapshot
  abstract readonly liveComputeNodes: ComputeNode[]

  private readonly hostNuma = new Map<ComputeNode, Parsed<HostNumaTopology | null>>()
  private readonly hostNumaByText = new TextMemo<Parsed<HostNumaTopology | null>>()
  private readonly instNuma = new Map<Instance, Parsed<InstanceNumaTopology | null>>()
  private readonly instFlavor = new Map<Instance, Parsed<InstanceFlavors | null>>()
  private readonly nodeStats = new Map<ComputeNode, Parsed<Record<string, string>>>()

  hostNumaTopology(cn: ComputeNode): Parsed<HostNumaTopology | null> {
    let v = this.hostNuma.get(cn)
    // Hosts of one hardware model report one text until something NUMA-bound lands on them.
    if (!v)
      this.hostNuma.set(cn, (v = cn.numa_topology === null ? parseHostNumaTopology(null) : this.hostNumaByText.get(cn.numa_topology, parseHostNumaTopology)))
    return v
  }

  stats(cn: ComputeNode): Parsed<Record<string, string>> {
    let v = this.nodeStats.get(cn)
    if (!v) this.nodeStats.set(cn, (v = parseStats(cn.stats)))
    return v
  }

  /**
   * Whether stats(cn) would succeed, and its error if not, without building the record (the
   * audits only report unreadable rows; building 10k records of per-project counters costs more
   * than parsing them).
   */
  statsReadable(cn: ComputeNode): {ok: true} | {ok: false; error: string} {
    const cached = this.nodeStats.get(cn)
    if (cached) return cached.ok ? {ok: true} : cached
    // A scan that builds nothing decides the common case; the real parser words any failure.
    if (cn.stats !== null && isFlatPlainObject(cn.stats)) return READABLE
    const top = cn.stats === null || cn.stats === '' ? 'null' : jsonTopLevel(cn.stats)
    if (top === 'object' || top === 'null') return READABLE
    const json = parseJsonText(cn.stats)
    if (!json.ok) return json
    if (json.value === null || (typeof json.value === 'object' && !Array.isArray(json.value))) return {ok: true}
    // Not an object: let parseStats word the error.
    const parsed = parseStats(cn.stats)
    return parsed.ok ? {ok: true} : parsed
  }

  instanceNumaTopology(inst: Instance): Parsed<InstanceNumaTopology | null> {
    let v = this.instNuma.get(inst)
    if (!v) this.instNuma.set(inst, (v = parseInstanceNumaTopology(inst.extra?.numa_topology ?? null)))
    return v
  }

  instanceFlavors(inst: Instance): Parsed<InstanceFlavors | null> {
    let v = this.instFlavor.get(inst)
    if (!v) this.instFlavor.set(inst, (v = parseInstanceFlavors(inst.extra?.flavor ?? null)))
    return v
  }

  /**
   * The one place that decides which blobs of live rows cannot be read: `snapshot validate` words
   * them through blobErrors(), the audits as snapshot.unreadable-blob findings (with their own
   * readers, which parse each distinct text once).
   */
  unreadableBlobs(readers: BlobReaders = this): UnreadableBlob[] {
    const out: UnreadableBlob[] = []
    for (const cn of this.liveComputeNodes) {
      const n = readers.hostNumaTopology(cn)
      if (!n.ok) out.push({table: 'compute_nodes', column: 'numa_topology', row: cn, error: n.error})
      // Only readability matters (the engine parses stats when it needs them).
      const st = readers.statsReadable(cn)
      if (!st.ok) out.push({table: 'compute_nodes', column: 'stats', row: cn, error: st.error})
    }
    const instances = this.snapshot.nova.instances
    const at = readers.liveInstanceBlobsAt?.()
    for (let pos = 0; pos < instances.length; pos++) {
      const inst = instances[pos]
      if (inst.deleted !== 0) continue
      const n = at?.numa[pos] ?? readers.instanceNumaTopology(inst)
      if (!n.ok) out.push({table: 'instance_extra', column: 'numa_topology', row: inst, error: n.error})
      const f = at?.flavors[pos] ?? readers.instanceFlavors(inst)
      if (!f.ok) out.push({table: 'instance_extra', column: 'flavor', row: inst, error: f.error})
    }
    return out
  }

  /** Every unreadable blob of live rows, for `snapshot validate` and the snapshot summary. */
  blobErrors(): BlobError[] {
    return this.unreadableBlobs().map((b) => ({table: b.table, column: b.column, cell_uuid: b.row.cell_uuid, subject: blobSubject(b), error: b.error}))
  }
}

/** How a blob's row is named: the compute node uuid (its id without one) or the instance uuid. */
export function blobSubject(b: UnreadableBlob): string {
  return b.table === 'compute_nodes' ? (b.row.uuid ?? String(b.row.id)) : b.row.uuid
}

const READABLE = {ok: true} as const
