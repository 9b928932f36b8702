/**
 * Proving a cell's identity (docs/repairs.md): a database that answers is not yet the cell nova maps
 * to. An empty, freshly synced database given as cell1 says "no instances, no hosts" and every
 * allocation looks leaked, every host mapping stale; cell1's database given as cell0 (or reached by a
 * second cell mapping) says every host runs in two cells. Repairs refuse to write from a cell that
 * fails any rule below; the audit reports it as cell.identity-unproven.
 *
 * For every cell that was read:
 * 1. Hosts: of the host_mappings pointing at the cell, not counting hosts whose live nova-compute
 *    service another read cell holds (a wrong-cell mapping, reported on its own), at least half must
 *    be known to the cell's database: a nova-compute service or compute node row of that host,
 *    deleted or not (nova soft-deletes both; only an archive removes them).
 * 2. Instances: of the instance_mappings pointing at the cell whose instance nova_api holds live
 *    (queued_for_delete not set), not counting instances with no row there and a live row in another
 *    read cell, at least half must have an instances row there, deleted or not.
 *    A rule only applies when something is mapped (a new cell with nothing mapped yet proves nothing
 *    and contradicts nothing). Half, not all: stale mappings of hosts removed by hand and archived,
 *    which `discover-hosts --prune` exists for, leave a right database short of a few; a wrong one
 *    knows none or next to none.
 * 3. cell0 holds no live nova-compute service and no live compute node: nova never runs computes there.
 * 4. No database serves two cells: two cells whose databases report the same server (@@server_uuid,
 *    else @@hostname, @@port and @@server_id) and the same DATABASE(), or whose services rows are the
 *    same non-empty set (the same rows read twice, whatever the server said), are both unproven.
 */
import type {Open} from '../../domain/finding.js'
import type {CloudModel} from '../../domain/model.js'
import type {CellDatabaseIdentity, CellInfo} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'

export interface MappingAgreement {
  /** Mappings pointing at the cell that the rule counts. */
  mapped: number
  /** Of those, how many the cell's database knows. */
  found: number
}

export interface CellIdentityEvidence extends Open {
  /** Where the cell was read: host:port/database as recorded at capture, else its mapping's URL (redacted). */
  database: string
  /** elsewhere: mapped here, absent here, live in another read cell (a wrong-cell mapping, reported on its own): not counted. */
  hosts: MappingAgreement & {elsewhere: number}
  instances: MappingAgreement & {elsewhere: number}
  /** cell0 only: the live computes its database holds. */
  computes?: {services: number; nodes: number}
  /** Cells read from the same database. */
  shares_database_with?: string[]
  identity?: CellDatabaseIdentity
}

export interface UnprovenCell {
  cell: CellInfo
  label: string
  /** One line per broken rule, each naming its evidence. */
  reasons: string[]
  evidence: CellIdentityEvidence
}

const n = (x: number): string => x.toLocaleString('en-US')
const plural = (x: number, one: string, many = `${one}s`): string => `${n(x)} ${x === 1 ? one : many}`

/** Fewer than half of what is mapped there is known to the database. */
export const disagrees = (a: MappingAgreement): boolean => a.mapped > 0 && 2 * a.found < a.mapped

/** host:port/database of a redacted SQLAlchemy URL, for cells captured before identities were recorded. */
function urlAddress(url: string | null): string | undefined {
  const m = url ? /^[a-z0-9+]+:\/\/(?:[^@/]*@)?([^/?#]*)\/?([^?#]*)/i.exec(url) : null
  return m ? `${m[1]}/${m[2]}` : undefined
}

export function databaseOf(cell: CellInfo): string {
  return cell.identity?.address ?? urlAddress(cell.database_connection) ?? 'database unknown'
}

/** The same server and schema, however they were reached; undefined when the server said too little. */
function identityKey(id: CellDatabaseIdentity | undefined): string | undefined {
  if (!id || id.database === null) return undefined
  // Every node of a Galera cluster holds the same data: one database reached through two nodes is one.
  const cluster = id.wsrep?.cluster_uuid ? `galera:${id.wsrep.cluster_uuid}` : undefined
  const server = cluster ?? id.server_uuid ?? (id.hostname === null ? undefined : `${id.hostname}:${id.port ?? ''}#${id.server_id ?? ''}`)
  return server === undefined ? undefined : `${server}/${id.database}`
}

/** Per host: the cells whose database has a row of it, and those where nova-compute runs on it; per cell, its live computes and services rows. */
function hostIndex(model: CloudModel) {
  const s = model.snapshot
  const knownIn = new Map<string, Set<string>>()
  const liveIn = new Map<string, Set<string>>()
  const add = (into: Map<string, Set<string>>, host: string | null, cell: string) => {
    if (host === null) return
    let set = into.get(host)
    if (!set) into.set(host, (set = new Set()))
    set.add(cell)
  }
  const servicesOf = new Map<string, string[]>()
  const computes = new Map<string, {services: number; nodes: number}>()
  const count = (cell: string) => {
    let c = computes.get(cell)
    if (!c) computes.set(cell, (c = {services: 0, nodes: 0}))
    return c
  }
  for (const svc of s.nova.services) {
    push(servicesOf, svc.cell_uuid, `${svc.id}\u0000${svc.host ?? ''}\u0000${svc.binary ?? ''}\u0000${svc.created_at ?? ''}`)
    if (svc.binary !== 'nova-compute') continue
    add(knownIn, svc.host, svc.cell_uuid)
    if (svc.deleted === 0) {
      add(liveIn, svc.host, svc.cell_uuid)
      count(svc.cell_uuid).services++
    }
  }
  for (const cn of s.nova.compute_nodes) add(knownIn, cn.host, cn.cell_uuid)
  for (const cn of model.liveComputeNodes) count(cn.cell_uuid).nodes++
  return {knownIn, liveIn, servicesOf, computes}
}

/** Rules 1 and 2: each read cell's mapped hosts and instances, and how many its database knows. */
function agreements(model: CloudModel, read: CellInfo[], idx: ReturnType<typeof hostIndex>): Map<string, CellIdentityEvidence> {
  const s = model.snapshot
  const evidence = new Map<string, CellIdentityEvidence>()
  for (const c of read) {
    const e: CellIdentityEvidence = {
      database: databaseOf(c),
      hosts: {mapped: 0, found: 0, elsewhere: 0},
      instances: {mapped: 0, found: 0, elsewhere: 0},
      ...(c.identity ? {identity: c.identity} : {}),
    }
    if (c.is_cell0) e.computes = idx.computes.get(c.uuid) ?? {services: 0, nodes: 0}
    evidence.set(c.uuid, e)
  }
  const tally = (a: MappingAgreement & {elsewhere: number}, found: boolean, elsewhere: boolean) => {
    if (!found && elsewhere) a.elsewhere++
    else {
      a.mapped++
      if (found) a.found++
    }
  }
  const byId = new Map(read.map((c) => [c.id, c]))
  for (const hm of s.nova_api.host_mappings) {
    const c = byId.get(hm.cell_id)
    if (!c || c.is_cell0) continue
    const elsewhere = [...(idx.liveIn.get(hm.host) ?? [])].some((u) => u !== c.uuid && model.isCellAvailable(u))
    tally(evidence.get(c.uuid)!.hosts, idx.knownIn.get(hm.host)?.has(c.uuid) === true, elsewhere)
  }
  // The last mapping of an instance decides where nova_api sends it, as for the mapping checks;
  // mappings and rows are joined through the consumer index (no map of 300k uuids), as
  // model.mappingPositions already probed it for each mapping.
  const mappings = s.nova_api.instance_mappings
  const positions = model.mappingPositions
  const instanceRows = model.instanceRows
  for (let i = 0; i < mappings.length; i++) {
    const im = mappings[i]
    const at = positions.consumerAt[i]
    const index = at < 0 ? undefined : at
    if (positions.repeated && (index === undefined ? positions.other.get(im.instance_uuid) : positions.ofConsumer[index]) !== i) continue
    const c = im.cell_id === null ? undefined : byId.get(im.cell_id)
    if (!c || im.queued_for_delete === true) continue
    const rows = index === undefined ? instanceRows.other.get(im.instance_uuid) : instanceRows.ofConsumer(index)
    // One indexed pass, no closures: once per mapping (300k on a 10k cloud), mostly unoptimised.
    let found = false
    let elsewhere = false
    if (rows)
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r]
        if (row.cell_uuid === c.uuid) found = true
        else if (row.deleted === 0 && model.isCellAvailable(row.cell_uuid)) elsewhere = true
      }
    tally(evidence.get(c.uuid)!.instances, found, elsewhere)
  }
  return evidence
}

/** Rule 4: per cell, the other read cells read from its database. */
function sharedDatabases(read: CellInfo[], servicesOf: Map<string, string[]>): Map<string, Set<string>> {
  const shared = new Map<string, Set<string>>()
  const group = (key: (c: CellInfo) => string | undefined) => {
    const groups = new Map<string, CellInfo[]>()
    for (const c of read) {
      const k = key(c)
      if (k !== undefined) push(groups, k, c)
    }
    for (const cells of groups.values()) {
      if (cells.length < 2) continue
      for (const c of cells) {
        let set = shared.get(c.uuid)
        if (!set) shared.set(c.uuid, (set = new Set()))
        for (const o of cells) if (o !== c) set.add(o.uuid)
      }
    }
  }
  group((c) => identityKey(c.identity))
  group((c) => {
    const rows = servicesOf.get(c.uuid)
    return rows && rows.length > 0 ? rows.join('\n') : undefined
  })
  return shared
}

/** Per model: the audit's unit and the repair guard ask the same question in one run. */
const unprovenOf = new WeakMap<CloudModel, UnprovenCell[]>()

/** The cells that fail a rule, in snapshot order ([] when every read cell proves itself). */
export function unprovenCells(model: CloudModel): UnprovenCell[] {
  let out = unprovenOf.get(model)
  if (!out) unprovenOf.set(model, (out = judgeCells(model)))
  return out
}

function judgeCells(model: CloudModel): UnprovenCell[] {
  const read = model.snapshot.cells.filter((c) => c.status === 'available')
  if (read.length === 0) return []
  const idx = hostIndex(model)
  const evidence = agreements(model, read, idx)
  const shared = sharedDatabases(read, idx.servicesOf)
  const out: UnprovenCell[] = []
  for (const c of read) {
    const label = model.cellLabel(c.uuid)
    const e = evidence.get(c.uuid)!
    const reasons: string[] = []
    if (disagrees(e.hosts) || disagrees(e.instances)) {
      const hosts = c.is_cell0 ? '' : `${n(e.hosts.found)} of the ${plural(e.hosts.mapped, 'host')} that host_mappings map to ${label} and `
      reasons.push(
        `${label}'s database (${e.database}) has ${hosts}${n(e.instances.found)} of the ${plural(e.instances.mapped, 'live instance')} that instance_mappings map there: it is not ${label}'s database`,
      )
    }
    if (e.computes && (e.computes.services > 0 || e.computes.nodes > 0))
      reasons.push(
        `${label}'s database (${e.database}) holds ${plural(e.computes.services, 'live nova-compute service')} and ${plural(e.computes.nodes, 'live compute node')}, which cell0 never has: it is not cell0's database`,
      )
    const others = shared.get(c.uuid)
    if (others) {
      e.shares_database_with = [...others].map((u) => model.cellLabel(u))
      const server = c.identity?.server_uuid ?? (c.identity?.hostname ? `${c.identity.hostname}, server_id ${c.identity.server_id ?? '?'}` : undefined)
      reasons.push(
        `${label} and ${e.shares_database_with.join(', ')} read the same database (${e.database}${server ? `, server ${server}` : ''}): one database cannot serve two cells`,
      )
    }
    if (reasons.length > 0) out.push({cell: c, label, reasons, evidence: e})
  }
  return out
}
