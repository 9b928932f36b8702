/**
 * `cloudctl snapshot diff A B`: what changed between two snapshots of one cloud, as an operator
 * checks a repair, an upgrade or last night's maintenance. Pure: two models in, a diff out.
 *
 * Findings are matched by code and subject (the subject's keys and values, whatever their order);
 * several findings with one code and subject are matched in report order. The rows behind them are
 * compared by identity: instances by uuid (live rows only), allocations by consumer, provider and
 * resource class, providers by uuid, pinned CPUs by compute node and NUMA cell.
 */
import {type AuditReport, runChecks} from '../checks/index.js'
import {type Finding, SUBJECT_FIELDS} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, Instance} from '../domain/snapshot.js'

export type RowChange =
  | {kind: 'instance-moved'; instance_uuid: string; name: string | null; from: Place; to: Place}
  | {kind: 'instance-added' | 'instance-removed'; instance_uuid: string; name: string | null; at: Place}
  | {
      kind: 'allocation-added' | 'allocation-removed'
      consumer_uuid: string
      provider_uuid: string
      provider: string | null
      resource_class: string
      used: number
    }
  | {kind: 'allocation-changed'; consumer_uuid: string; provider_uuid: string; provider: string | null; resource_class: string; before: number; after: number}
  | {kind: 'provider-added' | 'provider-removed'; provider_uuid: string; provider: string | null}
  | {
      kind: 'pinned-cpus-changed'
      host: string | null
      node: string | null
      cell: string
      numa_cell: number
      before: number[]
      after: number[]
      added: number[]
      removed: number[]
    }

export interface Place {
  cell: string
  host: string | null
  node: string | null
}

export interface DiffedFinding {
  finding: Finding
  /** Indexes into `changes` of the rows that changed under this finding's subject. */
  related: number[]
}

export interface SnapshotDiff {
  before: {captured_at: string; source: string}
  after: {captured_at: string; source: string}
  findings: {appeared: DiffedFinding[]; disappeared: DiffedFinding[]; persisted: DiffedFinding[]}
  counts: {appeared: number; disappeared: number; persisted: number; changes: Record<RowChange['kind'], number>}
  changes: RowChange[]
  /** 3 when a finding appeared, 0 otherwise. */
  exit_code: 0 | 3
}

/** code + subject, key order not significant. */
export function findingKey(f: Finding): string {
  const parts: string[] = [f.code]
  for (const k of SUBJECT_FIELDS) if (f.subject[k] !== undefined && f.subject[k] !== null) parts.push(`${k}=${String(f.subject[k])}`)
  return parts.join('\u0000')
}

export function matchFindings(before: Finding[], after: Finding[]): {appeared: Finding[]; disappeared: Finding[]; persisted: Finding[]} {
  const waiting = new Map<string, Finding[]>()
  for (const f of before) {
    const k = findingKey(f)
    const l = waiting.get(k)
    if (l) l.push(f)
    else waiting.set(k, [f])
  }
  const appeared: Finding[] = []
  const persisted: Finding[] = []
  for (const f of after) {
    const l = waiting.get(findingKey(f))
    if (l && l.length > 0) {
      l.shift()
      persisted.push(f)
    } else appeared.push(f)
  }
  const disappeared = before.filter((f) => {
    const l = waiting.get(findingKey(f))
    // Whatever is left in a list was not matched; take from the front to keep report order.
    if (l && l.length > 0 && l[0] === f) {
      l.shift()
      return true
    }
    return false
  })
  return {appeared, disappeared, persisted}
}

function placeOf(model: CloudModel, inst: Instance): Place {
  return {cell: model.cellLabel(inst.cell_uuid), host: inst.host, node: inst.node}
}

function liveInstances(model: CloudModel): Map<string, Instance> {
  const out = new Map<string, Instance>()
  for (const inst of model.snapshot.nova.instances) if (inst.deleted === 0 && !inst.hidden && !out.has(inst.uuid)) out.set(inst.uuid, inst)
  return out
}

function allocationIndex(model: CloudModel): Map<string, {consumer: string; rp: string; name: string | null; rc: string; used: number}> {
  const out = new Map<string, {consumer: string; rp: string; name: string | null; rc: string; used: number}>()
  for (const a of model.snapshot.placement.allocations) {
    const rp = model.providersById.get(a.resource_provider_id)
    const rpUuid = rp?.uuid ?? `#${a.resource_provider_id}`
    const rc = model.rc.name(a.resource_class_id)
    const key = `${a.consumer_id}\u0000${rpUuid}\u0000${rc}`
    const prev = out.get(key)
    if (prev) prev.used += a.used
    else out.set(key, {consumer: a.consumer_id, rp: rpUuid, name: rp?.name ?? null, rc, used: a.used})
  }
  return out
}

function pinnedByNode(model: CloudModel): Map<string, {cn: ComputeNode; cells: Map<number, number[]>}> {
  const out = new Map<string, {cn: ComputeNode; cells: Map<number, number[]>}>()
  for (const cn of model.liveComputeNodes) {
    const topo = model.hostNumaTopology(cn)
    if (!topo.ok || !topo.value) continue
    const cells = new Map<number, number[]>()
    for (const c of topo.value.cells)
      cells.set(
        c.id,
        [...c.pinned_cpus].sort((x, y) => x - y),
      )
    out.set(`${cn.cell_uuid}\u0000${cn.uuid ?? `${cn.host}\u0000${cn.hypervisor_hostname}`}`, {cn, cells})
  }
  return out
}

const samePlace = (a: Place, b: Place): boolean => a.cell === b.cell && a.host === b.host && a.node === b.node

export function diffRows(before: CloudModel, after: CloudModel): RowChange[] {
  const changes: RowChange[] = []
  const ia = liveInstances(before)
  const ib = liveInstances(after)
  for (const [uuid, a] of ia) {
    const b = ib.get(uuid)
    if (!b) changes.push({kind: 'instance-removed', instance_uuid: uuid, name: a.display_name, at: placeOf(before, a)})
    else if (!samePlace(placeOf(before, a), placeOf(after, b)))
      changes.push({kind: 'instance-moved', instance_uuid: uuid, name: b.display_name, from: placeOf(before, a), to: placeOf(after, b)})
  }
  for (const [uuid, b] of ib) if (!ia.has(uuid)) changes.push({kind: 'instance-added', instance_uuid: uuid, name: b.display_name, at: placeOf(after, b)})

  const pa = new Map(before.snapshot.placement.resource_providers.map((p) => [p.uuid, p]))
  const pb = new Map(after.snapshot.placement.resource_providers.map((p) => [p.uuid, p]))
  for (const [uuid, p] of pa) if (!pb.has(uuid)) changes.push({kind: 'provider-removed', provider_uuid: uuid, provider: p.name})
  for (const [uuid, p] of pb) if (!pa.has(uuid)) changes.push({kind: 'provider-added', provider_uuid: uuid, provider: p.name})

  const aa = allocationIndex(before)
  const ab = allocationIndex(after)
  for (const [key, a] of aa) {
    const b = ab.get(key)
    if (!b) changes.push({kind: 'allocation-removed', consumer_uuid: a.consumer, provider_uuid: a.rp, provider: a.name, resource_class: a.rc, used: a.used})
    else if (b.used !== a.used)
      changes.push({
        kind: 'allocation-changed',
        consumer_uuid: a.consumer,
        provider_uuid: a.rp,
        provider: b.name,
        resource_class: a.rc,
        before: a.used,
        after: b.used,
      })
  }
  for (const [key, b] of ab)
    if (!aa.has(key))
      changes.push({kind: 'allocation-added', consumer_uuid: b.consumer, provider_uuid: b.rp, provider: b.name, resource_class: b.rc, used: b.used})

  const na = pinnedByNode(before)
  const nb = pinnedByNode(after)
  for (const [key, b] of nb) {
    const a = na.get(key)
    for (const [cellId, pins] of b.cells) {
      const old = a?.cells.get(cellId) ?? []
      const oldSet = new Set(old)
      const newSet = new Set(pins)
      const added = pins.filter((p) => !oldSet.has(p))
      const removed = old.filter((p) => !newSet.has(p))
      if (added.length === 0 && removed.length === 0) continue
      changes.push({
        kind: 'pinned-cpus-changed',
        host: b.cn.host,
        node: b.cn.hypervisor_hostname,
        cell: after.cellLabel(b.cn.cell_uuid),
        numa_cell: cellId,
        before: old,
        after: pins,
        added,
        removed,
      })
    }
  }
  return changes
}

/** The subject keys a change touches, for relating it to findings. */
function changeKeys(c: RowChange): string[] {
  switch (c.kind) {
    case 'instance-moved':
      return [`i:${c.instance_uuid}`, `c:${c.instance_uuid}`, `h:${c.from.host}`, `n:${c.from.node}`, `h:${c.to.host}`, `n:${c.to.node}`]
    case 'instance-added':
    case 'instance-removed':
      return [`i:${c.instance_uuid}`, `c:${c.instance_uuid}`]
    case 'allocation-added':
    case 'allocation-removed':
    case 'allocation-changed':
      return [`c:${c.consumer_uuid}`, `i:${c.consumer_uuid}`, `p:${c.provider_uuid}`]
    case 'provider-added':
    case 'provider-removed':
      return [`p:${c.provider_uuid}`, `n:${c.provider}`]
    case 'pinned-cpus-changed':
      return [`n:${c.node}`, `h:${c.host}`]
  }
}

/**
 * A finding's related changes: those of its consumer or instance when it names one (a leak is about
 * that consumer, not about everything on its provider), else those of its provider, node or host.
 */
function relatedTo(f: Finding, index: Map<string, number[]>): number[] {
  const s = f.subject
  const pick = (keys: string[]): number[] => [...new Set(keys.flatMap((k) => index.get(k) ?? []))].sort((a, b) => a - b)
  const own = [s.consumer_uuid && `c:${s.consumer_uuid}`, s.instance_uuid && `i:${s.instance_uuid}`].filter((k): k is string => Boolean(k))
  if (own.length > 0) return pick(own)
  return pick([s.provider_uuid && `p:${s.provider_uuid}`, s.node && `n:${s.node}`, s.host && `h:${s.host}`].filter((k): k is string => Boolean(k)))
}

const EMPTY_COUNTS = (): Record<RowChange['kind'], number> => ({
  'instance-moved': 0,
  'instance-added': 0,
  'instance-removed': 0,
  'allocation-added': 0,
  'allocation-removed': 0,
  'allocation-changed': 0,
  'provider-added': 0,
  'provider-removed': 0,
  'pinned-cpus-changed': 0,
})

export function diffSnapshots(before: CloudModel, after: CloudModel, reports?: {before: AuditReport; after: AuditReport}): SnapshotDiff {
  const ra = reports?.before ?? runChecks(before)
  const rb = reports?.after ?? runChecks(after)
  const matched = matchFindings(ra.findings, rb.findings)
  const changes = diffRows(before, after)
  const index = new Map<string, number[]>()
  changes.forEach((c, i) => {
    for (const k of new Set(changeKeys(c))) {
      const l = index.get(k)
      if (l) l.push(i)
      else index.set(k, [i])
    }
  })
  const wrap = (fs: Finding[]): DiffedFinding[] => fs.map((finding) => ({finding, related: relatedTo(finding, index)}))
  const counts = EMPTY_COUNTS()
  for (const c of changes) counts[c.kind]++
  return {
    before: {captured_at: before.snapshot.captured_at, source: before.snapshot.source.description},
    after: {captured_at: after.snapshot.captured_at, source: after.snapshot.source.description},
    findings: {appeared: wrap(matched.appeared), disappeared: wrap(matched.disappeared), persisted: wrap(matched.persisted)},
    counts: {appeared: matched.appeared.length, disappeared: matched.disappeared.length, persisted: matched.persisted.length, changes: counts},
    changes,
    exit_code: matched.appeared.length > 0 ? 3 : 0,
  }
}
