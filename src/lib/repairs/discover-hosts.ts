/**
 * cells discover-hosts: the nova-manage cell_v2 discover_hosts counterpart, as a guarded plan.
 *
 * It creates host_mappings for compute hosts without one and sets compute_nodes.mapped, like
 * `discover_hosts`; unlike nova it also maps hosts whose nodes already say mapped = 1 (nova skips
 * those forever: "Found 0 unmapped computes"), and with `prune` removes host mappings of hosts that
 * no longer run nova-compute anywhere.
 */
import {runChecks} from '../checks/index.js'
import {type FindingOf, ofCodes} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {CellInfo, HostMapping} from '../domain/snapshot.js'
import {findCell} from './cells.js'
import {type RepairScope, allCellDbs, cellDbOf, subjectOf} from './common.js'
import {type DbKey, NOW, PlanBuilder, type RepairPlan} from './plan.js'

export interface DiscoverHostsOptions extends RepairScope {
  byService?: boolean
  prune?: boolean
  /** At most this many hosts or host-mapping findings per plan; the rest waits for a re-run (exit 6). */
  maxCount?: number
  now?: string
}

export function planDiscoverHosts(model: CloudModel, opts: DiscoverHostsOptions = {}): RepairPlan {
  const b = new PlanBuilder('discover-hosts', opts.now, opts.maxCount)
  const s = model.snapshot
  const cells = (opts.cell ? [findCell(model, opts.cell)].filter((c): c is CellInfo => c !== undefined) : s.cells).filter((c) => !c.is_cell0)
  const mapped = new Map(s.nova_api.host_mappings.map((h) => [h.host, h]))
  const planned = new Set<string>()
  // --host: the audits' filter (a service host, or the hypervisor_hostname of one of its nodes).
  const findings = runChecks(model, {checks: ['cells'], host: opts.host}).findings
  const named = new Set(
    model.liveComputeNodes.filter((cn) => opts.host !== undefined && cn.hypervisor_hostname === opts.host).map((cn) => `${cn.cell_uuid}/${cn.host}`),
  )
  const onHost = (c: CellInfo, host: string) => opts.host === undefined || host === opts.host || named.has(`${c.uuid}/${host}`)

  for (const c of cells) {
    if (c.status !== 'available') {
      b.skip('cell.undecided', `cell=${c.name ?? c.uuid}`, `cell could not be read (${c.error ?? 'unavailable'}): its hosts are left for a later run`)
      continue
    }
    const db = cellDbOf(model, b, c.uuid)
    const hosts = new Set<string>()
    if (opts.byService) {
      for (const svc of s.nova.services) if (svc.cell_uuid === c.uuid && svc.deleted === 0 && svc.binary === 'nova-compute' && svc.host) hosts.add(svc.host)
    } else {
      for (const cn of model.liveComputeNodes) if (cn.cell_uuid === c.uuid && cn.host) hosts.add(cn.host)
    }
    for (const host of [...hosts].sort())
      if (onHost(c, host)) b.unit(() => discoverHost(model, b, {cell: c, db, host, hm: mapped.get(host), planned, byService: opts.byService}))
  }

  for (const f of ofCodes(findings, 'cell.host-mapped-wrong-cell')) {
    const ev = f.evidence
    const expected = ev.expected_cell_id
    if (expected === null || (opts.cell && !cells.some((c) => c.uuid === f.subject.cell_uuid))) continue
    b.unit(() => {
      b.finding(f.code, subjectOf(f), f.message)
      b.about(`compute host ${ev.host_mapping.host}, which runs in cell ${f.subject.cell}`)
      b.add(
        {
          db: 'nova_api',
          table: 'host_mappings',
          op: 'update',
          key: {id: ev.host_mapping.id},
          expect: {host: ev.host_mapping.host, cell_id: ev.host_mapping.cell_id},
          set: {cell_id: expected, updated_at: NOW},
          why: `${f.code}: ${ev.host_mapping.host} runs in ${f.subject.cell}`,
          code: f.code,
        },
        `cell_id ${ev.host_mapping.cell_id} -> ${expected}`,
      )
    })
  }

  for (const f of ofCodes(findings, 'cell.host-mapping-stale')) b.unit(() => pruneHostMapping(model, b, f, opts))
  if (b.findings.length > 0) b.note('nova_api commits first, then each cell (compute_nodes.mapped); if a cell commit fails, a re-run sets the flag left unset.')
  return b.build(['nova_api'])
}

/** One compute host of a cell: its host mapping when it has none, and compute_nodes.mapped of its nodes. */
function discoverHost(
  model: CloudModel,
  b: PlanBuilder,
  h: {cell: CellInfo; db: DbKey; host: string; hm: HostMapping | undefined; planned: Set<string>; byService?: boolean},
): void {
  const {cell: c, db, host, hm} = h
  const s = model.snapshot
  const nodes = model.liveComputeNodes.filter((cn) => cn.cell_uuid === c.uuid && cn.host === host)
  const hostSubject = `compute host ${host} (cell ${c.name ?? c.uuid})`
  if (!hm && !h.planned.has(host)) {
    const elsewhere = s.nova.services.filter((x) => x.host === host && x.binary === 'nova-compute' && x.deleted === 0 && x.cell_uuid !== c.uuid)
    if (elsewhere.length > 0) {
      b.skip(
        'cell.host-unmapped',
        `host=${host}`,
        `nova-compute runs on ${host} in several cells (${[c.uuid, ...elsewhere.map((x) => x.cell_uuid)].map((u) => model.cellLabel(u)).join(', ')}): decide by hand`,
      )
      return
    }
    h.planned.add(host)
    b.about(hostSubject)
    b.finding('cell.host-unmapped', `cell=${c.name ?? c.uuid} host=${host}`, `Compute host ${host} has no host_mapping.`)
    b.add(
      {
        db: 'nova_api',
        table: 'host_mappings',
        op: 'insert',
        unique: {host},
        values: {created_at: NOW, updated_at: null, cell_id: c.id, host},
        why: `cell.host-unmapped: map ${host} to ${c.name ?? c.uuid}`,
        code: 'cell.host-unmapped',
      },
      `to cell ${c.name ?? c.uuid}`,
    )
  }
  if (h.byService) return // nova's --by_service path does not touch compute_nodes.mapped
  if (hm && hm.cell_id !== c.id) return // mapped elsewhere: reported as host-mapped-wrong-cell
  for (const cn of nodes) {
    if (cn.mapped === 1) continue
    b.about(hostSubject)
    b.add(
      {
        db,
        table: 'compute_nodes',
        op: 'update',
        key: {id: cn.id},
        expect: {host, deleted: 0, mapped: cn.mapped},
        set: {mapped: 1, updated_at: NOW},
        why: `compute node ${cn.hypervisor_hostname ?? cn.id} of ${host} is mapped (as discover_hosts records it)`,
      },
      `${cn.hypervisor_hostname ?? cn.id}: mapped = 1`,
    )
  }
}

/** cell.host-mapping-stale with --prune: the mapping goes once no cell runs nova-compute on the host. */
function pruneHostMapping(model: CloudModel, b: PlanBuilder, f: FindingOf<'cell.host-mapping-stale'>, opts: DiscoverHostsOptions): void {
  const hm = f.evidence.host_mapping
  if (!opts.prune) return void b.skip(f.code, subjectOf(f), 'pass --prune to remove host mappings of hosts without nova-compute')
  if (!model.allCellsAvailable) return void b.skip(f.code, subjectOf(f), 'a cell could not be read: the host may run there')
  b.finding(f.code, subjectOf(f), f.message)
  b.about(`host ${hm.host}, which runs nova-compute in no cell`)
  for (const {db} of allCellDbs(model, b))
    if (db !== 'cell:00000000-0000-0000-0000-000000000000')
      b.add({
        db,
        table: 'services',
        op: 'check',
        where: {host: hm.host, binary: 'nova-compute', deleted: 0},
        rows: [],
        why: `${f.code}: still no nova-compute on ${hm.host}`,
      })
  b.add({
    db: 'nova_api',
    table: 'host_mappings',
    op: 'delete',
    key: {id: hm.id},
    expect: {host: hm.host, cell_id: hm.cell_id},
    why: `${f.code}: no nova-compute runs on ${hm.host} in any cell`,
    code: f.code,
  })
}
