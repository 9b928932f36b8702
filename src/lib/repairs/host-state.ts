/**
 * repair pinning / repair usage / repair aggregates: what nova-compute's update_available_resource
 * and nova's aggregate API would have written, had they run.
 *
 * pinning and usage rewrite compute_nodes columns that the running nova-compute owns: they refuse
 * while that service is up and reporting (it would overwrite them, or race us) unless `force`.
 */
import {runChecks} from '../checks/index.js'
import {holdsResources} from '../checks/context.js'
import type {Finding, FindingOf} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import {pinnedHostCpus} from '../domain/nova-objects.js'
import {serviceUp} from '../domain/service-state.js'
import type {ComputeNode} from '../domain/snapshot.js'
import {cpuRanges} from '../util/cpu-ranges.js'
import {type RepairScope, cellDbOf, subjectOf} from './common.js'
import {NOW, PlanBuilder, type RepairPlan} from './plan.js'
import {unreadCellReason} from './unread-cells.js'

export {SERVICE_DOWN_TIME_S, serviceUp} from '../domain/service-state.js'

type PinFinding = FindingOf<'pinning.leaked' | 'pinning.unaccounted'>

export interface HostRepairOptions extends RepairScope {
  /** Write even while nova-compute on the host is up and reporting. */
  force?: boolean
  /** At most this many compute nodes (pinning) or findings (usage) per plan; the rest waits (exit 6). */
  maxCount?: number
  now?: string
}

/** A `*.undecided` finding: the cell's rows were not examined, which is never "nothing to do". */
function skipUnread(b: PlanBuilder, f: Finding): void {
  const error = (f.evidence as {cell_error?: string | null}).cell_error
  b.skip(f.code, subjectOf(f), unreadCellReason(error), f.severity)
}

function guardService(model: CloudModel, b: PlanBuilder, f: Finding, cn: ComputeNode, opts: HostRepairOptions): boolean {
  const svc = model.serviceOf(cn)
  if (serviceUp(svc, model.snapshot.captured_at)) {
    if (!opts.force) {
      b.skip(
        f.code,
        subjectOf(f),
        `nova-compute on ${cn.host} is up and reporting: it owns this row (restart it to recompute, or stop it and re-run; --force writes anyway)`,
      )
      return false
    }
    b.note(`--force: nova-compute on ${cn.host} is up; restart it afterwards so that its resource tracker reloads the row.`)
  }
  return true
}

const pinText = (cpus: number[]) => (cpus.length === 0 ? 'none' : cpuRanges([...cpus].sort((x, y) => x - y)))

/** 'compute node cmp-r1-04 (host cmp-r1-04, cell cell1)': the plain-words subject of a host-row repair. */
function nodeSubject(model: CloudModel, cn: ComputeNode): string {
  const host = cn.host !== null && cn.host !== cn.hypervisor_hostname ? `host ${cn.host}, ` : ''
  return `compute node ${cn.hypervisor_hostname ?? cn.id} (${host}cell ${model.cellLabel(cn.cell_uuid)})`
}

function lockResidents(model: CloudModel, b: PlanBuilder, cn: ComputeNode, code: string): void {
  const db = cellDbOf(model, b, cn.cell_uuid)
  const rows = model.trackedOnNode(cn).sort((x, y) => x.id - y.id)
  b.add({
    db,
    table: 'instances',
    op: 'check',
    where: {host: cn.host, node: cn.hypervisor_hostname, deleted: 0},
    rows: rows.map((i) => ({id: i.id, uuid: i.uuid, vm_state: i.vm_state, task_state: i.task_state})),
    why: `${code}: the live instances on ${cn.hypervisor_hostname} are those audited`,
  })
}

/**
 * Replaces the `pinned_cpus` array of each NUMA cell in nova's JSON text, leaving every other byte
 * (object versions, field order, spacing) as nova wrote it. Undefined when the text has not one
 * pinned_cpus array per cell.
 */
export function rewritePinnedCpus(text: string, pinnedByCell: number[][]): string | undefined {
  const re = /("pinned_cpus"\s*:\s*)\[([^\]]*)\]/g
  const matches = [...text.matchAll(re)]
  if (matches.length !== pinnedByCell.length) return undefined
  let i = 0
  return text.replace(re, (_m, head: string, body: string) => {
    const sep = body.trim() === '' || body.includes(', ') ? ', ' : ','
    const list = pinnedByCell[i++]
    if (/\n/.test(body)) {
      // indented style: keep the indentation nova's dumps used
      const indent = body.match(/\n(\s*)\d/)?.[1] ?? ''
      const close = body.match(/\n(\s*)$/)?.[1] ?? ''
      return list.length === 0 ? `${head}[]` : `${head}[\n${list.map((n) => `${indent}${n}`).join(`,\n`)}\n${close}]`
    }
    return `${head}[${list.join(sep)}]`
  })
}

export function planPinning(model: CloudModel, opts: HostRepairOptions = {}): RepairPlan {
  const b = new PlanBuilder('pinning', opts.now, opts.maxCount)
  const findings = runChecks(model, {checks: ['pinning'], cell: opts.cell, host: opts.host}).findings
  const byNode = new Map<number, {cn: ComputeNode; fs: PinFinding[]}>()
  for (const f of findings) {
    if (f.code !== 'pinning.leaked' && f.code !== 'pinning.unaccounted') {
      if (f.code === 'pinning.undecided') skipUnread(b, f)
      else
        b.skip(
          f.code,
          subjectOf(f),
          f.code === 'pinning.placement-drift'
            ? 'placement PCPU allocations: see cloudctl repair leaks --heal'
            : 'needs an operator: two instances (or a CPU outside the dedicated set) cannot be fixed by rewriting pinned_cpus',
        )
      continue
    }
    const id = f.evidence.compute_node.id
    const node = byNode.get(id)
    if (node) node.fs.push(f)
    else {
      const cn = model.liveComputeNodes.find((x) => x.id === id && x.cell_uuid === f.subject.cell_uuid)
      if (cn) byNode.set(id, {cn, fs: [f]})
    }
  }
  for (const {cn, fs} of byNode.values()) b.unit(() => planNodePins(model, b, cn, fs, findings, opts))
  return b.build([])
}

/** One compute node's pinned_cpus rewritten from the instances on it, for the findings `fs` of that node. */
function planNodePins(model: CloudModel, b: PlanBuilder, cn: ComputeNode, fs: PinFinding[], findings: Finding[], opts: HostRepairOptions): void {
  if (findings.some((f) => f.code === 'pinning.overlap' && f.subject.cell_uuid === cn.cell_uuid && f.subject.node === cn.hypervisor_hostname)) {
    for (const f of fs) b.skip(f.code, subjectOf(f), 'the node also has overlapping pins: resolve those first')
    return
  }
  if (!guardService(model, b, fs[0], cn, opts)) {
    for (const f of fs.slice(1)) b.skip(f.code, subjectOf(f), 'nova-compute is up (see above)')
    return
  }
  const topo = model.hostNumaTopology(cn)
  if (!topo.ok || !topo.value || cn.numa_topology === null) return
  const pins = new Map<number, Set<number>>()
  let readable = true
  for (const inst of model.trackedOnNode(cn).filter(holdsResources)) {
    const t = model.instanceNumaTopology(inst)
    if (!t.ok) readable = false
    if (!t.ok || !t.value) continue
    for (const c of t.value.cells) {
      const set = pins.get(c.id) ?? new Set<number>()
      for (const p of pinnedHostCpus(c)) set.add(p)
      pins.set(c.id, set)
    }
  }
  if (!readable) {
    for (const f of fs) b.skip(f.code, subjectOf(f), 'an instance NUMA topology on the node cannot be read')
    return
  }
  const wanted = topo.value.cells.map((c) => [...(pins.get(c.id) ?? [])].sort((x, y) => x - y))
  const text = rewritePinnedCpus(cn.numa_topology, wanted)
  if (text === undefined || text === cn.numa_topology) {
    for (const f of fs) b.skip(f.code, subjectOf(f), 'numa_topology does not hold one pinned_cpus list per cell')
    return
  }
  for (const f of fs) b.finding(f.code, subjectOf(f), f.message)
  b.about(nodeSubject(model, cn))
  lockResidents(model, b, cn, fs[0].code)
  b.add(
    {
      db: cellDbOf(model, b, cn.cell_uuid),
      table: 'compute_nodes',
      op: 'update',
      key: {id: cn.id},
      expect: {deleted: 0, numa_topology: cn.numa_topology},
      set: {numa_topology: text},
      why: `${fs.map((f) => f.code).join(', ')}: pinned_cpus per NUMA cell = ${wanted.map((w, i) => `cell ${topo.value!.cells[i].id}: [${w.join(',')}]`).join('; ')} (every other field and the object versions kept)`,
      code: fs[0].code,
    },
    `pinned_cpus ${topo.value.cells.flatMap((c, i) => (pinText(c.pinned_cpus) === pinText(wanted[i]) ? [] : [`NUMA cell ${c.id}: ${pinText(c.pinned_cpus)} -> ${pinText(wanted[i])}`])).join('; ')}`,
  )
  b.note(`Restart nova-compute on ${cn.host} when it is back so that its resource tracker starts from the repaired row.`)
}

export function planUsage(model: CloudModel, opts: HostRepairOptions = {}): RepairPlan {
  const b = new PlanBuilder('usage', opts.now, opts.maxCount)
  for (const f of runChecks(model, {checks: ['usage'], cell: opts.cell, host: opts.host}).findings) {
    if (f.code !== 'usage.node-drift') {
      if (f.code === 'usage.negative-free') b.skip(f.code, subjectOf(f), 'the row matches its live instances: overcommit, not drift', f.severity)
      else if (f.code === 'usage.undecided') skipUnread(b, f)
      continue
    }
    b.unit(() => planNodeUsage(model, b, f, opts))
  }
  return b.build([])
}

/** usage.node-drift: the compute node's usage columns as its live instances add up. */
function planNodeUsage(model: CloudModel, b: PlanBuilder, f: FindingOf<'usage.node-drift'>, opts: HostRepairOptions): void {
  const ev = f.evidence
  const cn = model.liveComputeNodes.find((x) => x.id === ev.compute_node.id && x.cell_uuid === ev.compute_node.cell_uuid)
  if (!cn || !guardService(model, b, f, cn, opts)) return
  b.finding(f.code, subjectOf(f), f.message)
  b.about(nodeSubject(model, cn))
  lockResidents(model, b, cn, f.code)
  const set: Record<string, number | typeof NOW> = {}
  for (const [k, v] of Object.entries(ev.expected)) if (ev.recorded[k] !== null && ev.recorded[k] !== v) set[k] = v
  b.add(
    {
      db: cellDbOf(model, b, cn.cell_uuid),
      table: 'compute_nodes',
      op: 'update',
      key: {id: cn.id},
      expect: {deleted: 0, ...ev.recorded},
      set,
      why: `${f.code}: ${Object.keys(set)
        .map((k) => `${k} ${ev.recorded[k]} -> ${ev.expected[k]}`)
        .join(', ')} from the live instances`,
      code: f.code,
    },
    Object.keys(set)
      .map((k) => `${k} ${ev.recorded[k]} -> ${ev.expected[k]}`)
      .join(', '),
  )
}

export interface AggregatesOptions extends RepairScope {
  prune?: boolean
  /** At most this many findings per plan; the rest waits for a re-run (exit 6). */
  maxCount?: number
  now?: string
}

export function planAggregates(model: CloudModel, opts: AggregatesOptions = {}): RepairPlan {
  const b = new PlanBuilder('aggregates', opts.now, opts.maxCount)
  const pAggs = new Map(model.snapshot.placement.placement_aggregates.map((a) => [a.uuid, a.id]))
  let nextAggId = model.snapshot.placement.placement_aggregates.reduce((m, a) => Math.max(m, a.id), 0) + 1
  const linked = new Set<string>()
  for (const f of runChecks(model, {checks: ['aggregates'], cell: opts.cell, host: opts.host}).findings)
    b.unit(() => {
      if (f.code === 'aggregate.missing-in-placement' && f.evidence.aggregate.uuid) {
        const uuid = f.evidence.aggregate.uuid
        const rp = model.providersById.get(f.evidence.provider.id)
        if (!rp || linked.has(`${rp.id}/${uuid}`)) return
        linked.add(`${rp.id}/${uuid}`)
        b.finding(f.code, subjectOf(f), f.message)
        b.about(`resource provider ${rp.name ?? rp.uuid}, in nova aggregate ${f.subject.aggregate ?? uuid}`)
        let aggId = pAggs.get(uuid)
        if (aggId === undefined) {
          aggId = nextAggId++
          pAggs.set(uuid, aggId)
          b.add(
            {
              db: 'placement',
              table: 'placement_aggregates',
              op: 'insert',
              unique: {uuid},
              values: {id: aggId, created_at: NOW, updated_at: null, uuid},
              why: `${f.code}: placement does not know aggregate ${uuid} yet`,
              code: f.code,
            },
            uuid,
          )
        }
        b.add(
          {
            db: 'placement',
            table: 'resource_provider_aggregates',
            op: 'insert',
            unique: {resource_provider_id: rp.id, aggregate_id: aggId},
            values: {created_at: NOW, updated_at: null, resource_provider_id: rp.id, aggregate_id: aggId},
            why: `${f.code}: ${rp.name ?? rp.uuid} joins aggregate ${uuid}`,
            code: f.code,
          },
          uuid,
        )
        b.bumpProvider(rp, 'aggregates changed')
      } else if (f.code === 'aggregate.extra-in-placement' && f.evidence.aggregate.uuid) {
        const uuid = f.evidence.aggregate.uuid
        if (!opts.prune) {
          b.skip(f.code, subjectOf(f), 'pass --prune to remove placement aggregate links nova does not know')
          return
        }
        const rp = model.providersById.get(f.evidence.provider.id)
        const aggId = pAggs.get(uuid)
        if (!rp || aggId === undefined) return
        b.finding(f.code, subjectOf(f), f.message)
        b.about(`resource provider ${rp.name ?? rp.uuid}, in no nova aggregate of uuid ${uuid}`)
        b.add(
          {
            db: 'placement',
            table: 'resource_provider_aggregates',
            op: 'delete',
            key: {resource_provider_id: rp.id, aggregate_id: aggId},
            expect: {},
            why: `${f.code}: ${rp.name ?? rp.uuid} leaves aggregate ${uuid}`,
            code: f.code,
          },
          uuid,
        )
        b.bumpProvider(rp, 'aggregates changed')
      } else if (f.code === 'aggregate.undecided') skipUnread(b, f)
      else b.skip(f.code, subjectOf(f), 'not a placement link: fix it in nova (openstack aggregate ...)')
    })
  // Nova's aggregate API checks membership in nova_api while it writes placement: lock the membership rows we rely on.
  return b.build(['placement'])
}
