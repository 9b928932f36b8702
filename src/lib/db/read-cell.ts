/** One nova cell database into the snapshot: services, compute nodes, instances, migrations. */
import type {Instance, NovaCellTables} from '../domain/snapshot.js'
import {COMPUTE_NODES, INSTANCE_EXTRA, INSTANCES, MIGRATIONS, SERVICES} from '../domain/tables/nova-cell.js'
import {rowConverter} from './row-converter.js'
import {type Reader, readEach, readRows} from './table-reader.js'

/**
 * The audit view (Snapshot.scope 'audit'): row columns no audit reads, left out of a live audit's
 * read (they hold null). Blobs the scheduler parses and an audit does not (cpu_info,
 * supported_instances, pci_stats, pci_requests), and instance columns no check or evidence names:
 * a third of the values of the largest table, strings most of them (display_name, one per
 * instance). A check that starts reading one of them must take it off this list:
 * test/db/audit-view.test.ts holds the view's findings equal to a full read's.
 * In placement the view reads the resource_provider_traits rows of AUDIT_TRAITS only
 * (domain/trait-sets.ts): one trait of the 60-100 a real compute reports. And instance_extra's
 * blobs and the hosts' NUMA topologies are read by digest (readExtraDigests, readHostTopologyDigests):
 * each distinct text once.
 */
export const AUDIT_VIEW = {
  compute_nodes: ['hypervisor_version', 'host_ip', 'disk_available_least', 'current_workload', 'cpu_info', 'supported_instances', 'pci_stats'],
  instances: ['power_state', 'display_name', 'os_type', 'architecture', 'availability_zone', 'launched_at', 'terminated_at', 'updated_at'],
  instance_extra: ['pci_requests'],
} as const satisfies Partial<Record<string, readonly string[]>>

/** Row columns a cell read leaves out, by table (AUDIT_VIEW, or none). */
export type CellColumns = Partial<Record<keyof typeof AUDIT_VIEW, readonly string[]>>

/**
 * `present`: the newer columns this database has ('table.column', from the schema probe);
 * `leaveOut`: row columns not read, by table (AUDIT_VIEW for a live audit); `blobsByDigest`: the
 * hosts' NUMA topologies and instance_extra's blobs read by digest where their texts repeat.
 */
export async function readCell(
  r: Reader,
  cellUuid: string,
  present: ReadonlySet<string>,
  leaveOut: CellColumns = {},
  opts: {blobsByDigest?: boolean} = {},
): Promise<NovaCellTables> {
  // instance_extra's digests first: the server hashes 1 KB of blobs per instance (about 0.5 s
  // per 160k instances), rows the client takes as it can while it still parses nova_api's and
  // placement's. Asked after the compute nodes, as before, both cells' digests were the only reads
  // left at their turn and the client waited for the server's hashing (~0.3 s of a 10k audit).
  const digests = opts.blobsByDigest ? await readExtraDigests(r, leaveOut.instance_extra ?? []) : undefined
  const services = await readRows(r, SERVICES, {cellUuid})
  const byDigest = opts.blobsByDigest === true && !(leaveOut.compute_nodes ?? []).includes('numa_topology')
  const topologies = byDigest ? await readHostTopologyDigests(r) : undefined
  const compute_nodes = await readRows(r, COMPUTE_NODES, {
    cellUuid,
    leaveOut: topologies ? [...(leaveOut.compute_nodes ?? []), 'numa_topology'] : leaveOut.compute_nodes,
  })
  if (topologies) await attachHostTopologies(r, compute_nodes, topologies)

  // instances and instance_extra are read as two primary-key scans and matched here by uuid. A
  // join makes the server look up instance_extra through its instance_uuid index for every instance
  // (then the clustered index for the blobs): about three times the server time of two scans.
  // nova writes an instance and its instance_extra row in one transaction, so both scans meet the
  // instances in the same order: the match is the instance at a cursor, a few rows on where some
  // had no extra row, and a uuid map (built once, on the first miss) otherwise.
  // An instance with two live instance_extra rows (never written by nova) keeps the one with the
  // lowest id.
  const instances = await readRows(r, INSTANCES, {cellUuid, present, leaveOut: leaveOut.instances})
  if (digests) await attachExtras(r, instances, digests)
  else await readExtras(r, instances, 'deleted = 0', [], leaveOut.instance_extra)

  // Soft-deleted migrations too: nova's instance_destroy soft-deletes an instance's migrations with it,
  // and a migration allocation nova failed to remove outlives both (leaks names it as that
  // migration's). Every use of in-progress migrations filters on deleted (isMigrationInProgress).
  const migrations = await readRows(r, MIGRATIONS, {cellUuid, present})
  return {services, compute_nodes, instances, migrations}
}

/**
 * The live instance_extra rows of `instances` (those `where` selects, with its `params`) into their
 * `extra`; an instance with two such rows keeps the one with the lowest id.
 */
export async function readExtras(r: Reader, instances: Instance[], where: string, params: unknown[] = [], leaveOut?: readonly string[]): Promise<void> {
  const match = new InstanceMatcher(instances)
  await readEach(r, INSTANCE_EXTRA, {where, params, also: ['instance_uuid'], leaveOut}, (extra, raw, at) => {
    const inst = match.find(String(raw[at]))
    if (inst && inst.extra === null) inst.extra = extra
  })
}

/** Per compute node id, the index of its NUMA topology's text (-1: NULL); per text, a node holding it. */
interface TopologyDigests {
  byId: Map<number, number>
  holderId: readonly number[]
}

/**
 * Whether texts repeat enough to be read by digest: at most `share` as many distinct texts as
 * values. A digest per row costs the decode and lookup of a 64-character string and each distinct
 * text a read by id.
 */
const repeating = (distinct: number, values: number, share: number): boolean => distinct <= values * share

/** Distinct digests in the order first met, each with the id of the row that held it first. */
class Holders {
  readonly ids: number[] = []
  private readonly index = new Map<string, number>()

  /** The index of `digest`, `id`'s row made its holder when it is the first to hold it. */
  of(digest: string, id: number): number {
    let at = this.index.get(digest)
    if (at === undefined) {
      this.index.set(digest, (at = this.ids.length))
      this.ids.push(id)
    }
    return at
  }
}

/**
 * The hosts' NUMA topologies by SHA-256 first (readCell): hosts of one hardware model that run the
 * same load report the same 3-4 KB text (5,000 nodes, 1,460 texts in a cell of the 10k bench
 * cloud), and one string per distinct text is what the audits' memo of parsed topologies finds
 * again without hashing it. Where fewer than half the nodes share a text with another (every host
 * its own load), undefined: they are read in the scan, as without digests, for 64 bytes of digest
 * per node more. Half, not instance_extra's quarter: a node's text is 3-4 KB against an instance
 * blob's 0.5 KB, and at 1,460 texts for 5,000 nodes (29 %) the digests still saved time.
 */
async function readHostTopologyDigests(r: Reader): Promise<TopologyDigests | undefined> {
  const byId = new Map<number, number>()
  const holders = new Holders()
  let texts = 0
  await r.eachDecoded(
    COMPUTE_NODES.name,
    'SELECT id, SHA2(numa_topology, 256) AS numa_topology FROM compute_nodes ORDER BY id',
    {names: ['id', 'numa_topology'], decode: (x) => x},
    (x) => {
      const id = Number(x[0])
      if (x[1] === null || x[1] === undefined) byId.set(id, -1)
      else {
        texts++
        byId.set(id, holders.of(String(x[1]), id))
      }
    },
  )
  return repeating(holders.ids.length, texts, 1 / 2) ? {byId, holderId: holders.ids} : undefined
}

/** Each node's NUMA topology from `d`, each distinct text read once by the id of a node holding it. */
async function attachHostTopologies(r: Reader, nodes: ReadonlyArray<{id: number; numa_topology: string | null}>, d: TopologyDigests): Promise<void> {
  const texts = new Map<number, string>()
  await eachRowById(r, COMPUTE_NODES.name, ['numa_topology'], d.holderId, (x) => texts.set(Number(x[0]), String(x[1])))
  for (const cn of nodes) {
    const at = d.byId.get(cn.id)
    // A node the scan met and the digests did not would mean a second transaction: never within one read.
    if (at === undefined) throw new Error(`compute_nodes row ${cn.id}: its NUMA topology's digest was not read`)
    if (at < 0) continue
    const text = texts.get(d.holderId[at] as number)
    if (text === undefined) throw new Error(`compute_nodes row ${d.holderId[at]}: the NUMA topology of its digest was not read`)
    cn.numa_topology = text
  }
}

/** Marks an instance whose extra row attachExtras has met, until its blobs are read. */
const PENDING = Object.freeze({}) as NonNullable<Instance['extra']>

/** Row ids per IN list of eachRowById. */
const IDS_PER_QUERY = 1000

/**
 * The rows of a table with these ids (its primary key), each handed to `each` as [id, ...columns]:
 * the texts read by digest, once each. Table and column names come from the constant table specs.
 */
async function eachRowById(r: Reader, table: string, columns: readonly string[], ids: readonly number[], each: (x: unknown[]) => void): Promise<void> {
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const part = ids.slice(i, i + IDS_PER_QUERY)
    await r.eachDecoded(
      table,
      `SELECT id, ${columns.map((c) => `\`${c}\``).join(', ')} FROM \`${table}\` WHERE id IN (${part.map(() => '?').join(', ')})`,
      {names: ['id', ...columns], decode: (x) => x},
      each,
      part,
    )
  }
}

/**
 * The live instance_extra rows in id order: instance uuid, the texts of the blob columns read as
 * text, and the combination of the texts of those read by digest.
 */
export interface ExtraDigests {
  columns: string[]
  /** Per column: read by digest (its texts repeat), or as text. */
  byDigest: boolean[]
  uuids: string[]
  /** Per row, a text (null for NULL) for each column read as text, in column order. */
  texts: Array<string | null>
  /** Per row: the index of its combination of the digest-read columns' texts (-1: no column is read by digest). */
  combos: number[]
  /** Per combination: the id of a row holding it. */
  holderId: readonly number[]
}

/** Rows whose digests decide which columns are read by digest. */
const SAMPLE_ROWS = 1000

/**
 * A column is read by digest when its first SAMPLE_ROWS rows hold at most a quarter as many
 * distinct texts as values: on a cloud whose every NUMA topology is its instance's own (every
 * guest pinned), digests would cost a second read of each text.
 */
async function digestColumns(r: Reader, columns: readonly string[]): Promise<boolean[]> {
  const distinct = columns.map(() => new Set<string>())
  const counted = columns.map(() => 0)
  const list = columns.map((c) => `SHA2(\`${c}\`, 256) AS \`${c}\``).join(', ')
  await r.eachDecoded(
    INSTANCE_EXTRA.name,
    `SELECT ${list} FROM instance_extra WHERE deleted = 0 ORDER BY id LIMIT ${SAMPLE_ROWS}`,
    {names: [...columns], decode: (x) => x},
    (x) => {
      for (let k = 0; k < columns.length; k++) {
        if (x[k] === null || x[k] === undefined) continue
        distinct[k]?.add(String(x[k]))
        counted[k] = (counted[k] as number) + 1
      }
    },
  )
  return columns.map((_, k) => repeating((distinct[k] as Set<string>).size, counted[k] as number, 1 / 4))
}

/**
 * One SHA-256 for the texts of several columns of a row: each column as its byte length, ':' and
 * the text, or '-' for NULL, one after the other. The encoding is read back unambiguously (a length
 * says where a text ends; a NULL is not a digit), so two rows share a digest only when they share
 * every text. Column names come from the constant table spec.
 */
function combinedDigest(columns: readonly string[]): string {
  return `SHA2(CONCAT(${columns.map((c) => `IFNULL(CONCAT(LENGTH(\`${c}\`), ':', \`${c}\`), '-')`).join(', ')}), 256)`
}

/**
 * readExtras in two halves, this and attachExtras (every live row, the lowest id of an instance's
 * kept): the blobs whose texts repeat read as one SHA-256 digest per row, of their texts together,
 * and each distinct combination of texts then once, by the id of a row holding it, in the same read
 * transaction. An instance's NUMA topology and flavor blobs are ~1.1 KB a row and the same few
 * hundred texts over and over (324k rows, 350 MB of text, 204 distinct texts on the 10k bench
 * cloud): sent whole, the driver decoded every copy before the memo dropped it, a tenth of a 10k
 * audit's time. One digest for both columns, not one each, halves what is left of that per row (a
 * 64-character string decoded and looked up). The digests cost the server time the client no longer
 * spends; readCell asks for them before the instances, so that the server computes them while the
 * client reads the rest. A column whose texts do not repeat is read as text (digestColumns).
 */
export async function readExtraDigests(r: Reader, leaveOut: readonly string[]): Promise<ExtraDigests> {
  const columns = INSTANCE_EXTRA.row.filter((c) => !leaveOut.includes(c))
  const byDigest = await digestColumns(r, columns)
  const asText = columns.filter((_, k) => !byDigest[k])
  const digested = columns.filter((_, k) => byDigest[k])
  const width = asText.length
  const holders = new Holders()
  const out: ExtraDigests = {columns, byDigest, uuids: [], texts: [], combos: [], holderId: holders.ids}
  const list = [...asText.map((c) => `\`${c}\``), ...(digested.length > 0 ? [`${combinedDigest(digested)} AS digest`] : [])].join(', ')
  await r.eachDecoded(
    INSTANCE_EXTRA.name,
    `SELECT id, instance_uuid${list === '' ? '' : `, ${list}`} FROM instance_extra WHERE deleted = 0 ORDER BY id`,
    {names: ['id', 'instance_uuid', ...asText, ...(digested.length > 0 ? ['digest'] : [])], decode: (x) => x},
    (x) => {
      out.uuids.push(String(x[1]))
      for (let k = 0; k < width; k++) {
        const v = x[2 + k]
        out.texts.push(v === null || v === undefined ? null : String(v))
      }
      if (digested.length === 0) {
        out.combos.push(-1)
        return
      }
      out.combos.push(holders.of(String(x[2 + width]), Number(x[0])))
    },
  )
  return out
}

/** Each instance's extra row (the first of its uuid) from `d`, the digest-read texts read by row id. */
export async function attachExtras(r: Reader, instances: Instance[], d: ExtraDigests): Promise<void> {
  const {columns, byDigest} = d
  const digested = columns.filter((_, k) => byDigest[k])
  const width = columns.length - digested.length
  const match = new InstanceMatcher(instances)
  const owners: Instance[] = []
  const ownerRows: number[] = []
  for (let i = 0; i < d.uuids.length; i++) {
    const inst = match.find(d.uuids[i] as string)
    if (inst === undefined || inst.extra !== null) continue
    // Claimed for the lowest id: a later row of the same instance finds it taken.
    inst.extra = PENDING
    owners.push(inst)
    ownerRows.push(i)
  }
  // Each combination's texts, in the order of `digested`: one holder row each (distinct ids).
  const byId = new Map<number, unknown[]>()
  await eachRowById(r, INSTANCE_EXTRA.name, digested, d.holderId, (x) => byId.set(Number(x[0]), x))
  const holderRows: unknown[][] = d.holderId.map((id) => {
    const row = byId.get(id)
    // Gone between the two queries would mean a second transaction: never within one read.
    if (row === undefined) throw new Error(`instance_extra row ${id}: the blobs of its digest were not read`)
    return row
  })
  const convert = rowConverter(
    INSTANCE_EXTRA,
    [],
    [],
    INSTANCE_EXTRA.row.filter((c) => !columns.includes(c)),
  )
  const raw: unknown[] = new Array<unknown>(columns.length)
  // When every column is read by digest, a row's values are its combination's: instances of one
  // combination share one row object (read-only, as every snapshot row in an audit), not 300k equal ones.
  const shared: Array<Instance['extra'] | undefined> = width === 0 ? new Array(d.holderId.length + 1) : []
  for (let j = 0; j < owners.length; j++) {
    const row = ownerRows[j] as number
    const combo = d.combos[row] as number
    const had = width === 0 ? shared[combo + 1] : undefined
    if (had !== undefined) {
      ;(owners[j] as Instance).extra = had
      continue
    }
    const held = combo < 0 ? undefined : holderRows[combo]
    // The columns in order: a text column's value from the row, a digest column's from its combination.
    let t = 0
    let g = 1
    for (let k = 0; k < columns.length; k++) raw[k] = byDigest[k] ? (held as unknown[])[g++] : d.texts[row * width + t++]
    const extra = convert(raw, undefined, []) as Instance['extra']
    if (width === 0) shared[combo + 1] = extra
    ;(owners[j] as Instance).extra = extra
  }
}

/** How far past the cursor a match is looked for before the uuid map. */
const LOOK_AHEAD = 8

/** Instances by uuid for rows that mostly come in the instances' own order (see readCell). */
class InstanceMatcher {
  private next = 0
  private byUuid: Map<string, Instance> | null = null

  constructor(private readonly instances: Instance[]) {}

  find(uuid: string): Instance | undefined {
    const rows = this.instances
    const end = Math.min(rows.length, this.next + LOOK_AHEAD)
    for (let i = this.next; i < end; i++) {
      if ((rows[i] as Instance).uuid === uuid) {
        this.next = i + 1
        return rows[i]
      }
    }
    this.byUuid ??= new Map(rows.map((inst) => [inst.uuid, inst]))
    return this.byUuid.get(uuid)
  }
}
