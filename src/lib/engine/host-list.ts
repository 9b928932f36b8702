/**
 * Stage 5-6: the host states of the candidates (HostManager.get_host_states_by_uuids, database
 * order, only the cells that could be read, only the requested cell of a move) and the hosts
 * get_filtered_hosts keeps before the filters run: the requested destination, ignore_hosts,
 * force_hosts and force_nodes.
 */
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {buildHostState, hostStateBase, type HostState} from './host-state.js'
import type {CandidateResult} from './placement-result.js'
import type {ProviderIndex} from './provider-index.js'
import type {RequestSpec} from './request-spec.js'
import type {HostVerdict, SimulationResult} from './result.js'
import type {EngineState} from './state.js'

const nodeName = (cn: ComputeNode) => `${cn.host ?? '?'}/${cn.hypervisor_hostname ?? '?'}`
const keyOf = (cn: ComputeNode) => `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`

/** Host states for the candidate providers, in database order; fills result.hostStates. */
export function candidateHostStates(
  model: CloudModel,
  idx: ProviderIndex,
  cands: CandidateResult,
  spec: RequestSpec,
  cfg: SchedulerConfig,
  state: EngineState,
  result: SimulationResult,
  verdicts: Map<string, HostVerdict>,
): HostState[] {
  const base = hostStateBase(model, cfg)
  const unavailable = new Map<string, number>()
  const hosts: HostState[] = []
  // Only the candidates' compute nodes, visited in database order (not every node of the cloud).
  const candidateUuids: string[] = []
  for (const id of cands.summaryProviderIds) {
    const uuid = idx.providers.get(id)?.uuid
    if (uuid !== undefined && base.uuidOrder.has(uuid)) candidateUuids.push(uuid)
  }
  candidateUuids.sort((a, b) => (base.uuidOrder.get(a) as number) - (base.uuidOrder.get(b) as number))
  for (const uuid of candidateUuids) {
    for (const cn of base.byUuid.get(uuid) as ComputeNode[]) {
      if (!model.isCellAvailable(cn.cell_uuid)) {
        unavailable.set(cn.cell_uuid, (unavailable.get(cn.cell_uuid) ?? 0) + 1)
        continue
      }
      // A move is limited to the instance's cell: the host manager loads no other cell's nodes.
      if (spec.cellUuid && cn.cell_uuid !== spec.cellUuid) {
        const reason = `in cell ${model.cellLabel(cn.cell_uuid)}, not the instance's cell ${model.cellLabel(spec.cellUuid)} (a move stays in its cell)`
        verdicts.set(keyOf(cn), {host: cn.host ?? '', node: cn.hypervisor_hostname ?? '', stage: 'host_state', reason, label: 'in another cell'})
        continue
      }
      const hs = state.hosts.get(keyOf(cn)) ?? buildHostState(model, cn, cfg, base)
      if (!hs.service) {
        result.hostStates.withoutService.push(nodeName(cn))
        continue
      }
      hosts.push(hs)
    }
  }
  // Candidate providers whose compute node nova cannot see: in a cell we could not read.
  for (const id of cands.summaryProviderIds) {
    const rp = idx.providers.get(id)
    if (!rp || rp.rootId !== rp.id || base.byUuid.has(rp.uuid)) continue
    result.hostStates.withoutComputeNode++
  }
  for (const cell of model.unavailableCells) {
    result.hostStates.unavailableCells.push({cell: cell.name ?? cell.uuid, candidates: unavailable.get(cell.uuid) ?? 0})
  }
  result.hostStates.count = hosts.length
  return hosts
}

/**
 * The requested destination, then host_manager.get_filtered_hosts: ignore_hosts (the source of a
 * move, hosts a reschedule already tried), force_hosts (case-insensitive) and force_nodes.
 */
export function narrowHosts(hosts: HostState[], spec: RequestSpec, verdicts: Map<string, HostVerdict>): HostState[] {
  let list = hosts
  const drop = (keep: (h: HostState) => boolean, reason: string, label: string) => {
    const before = list
    list = list.filter(keep)
    for (const h of before) if (!list.includes(h)) verdicts.set(h.key, {host: h.host, node: h.nodename, stage: 'requested_destination', reason, label})
  }
  const d = spec.requestedDestination
  if (d)
    drop(
      (h) => h.host === d.host && (!d.node || h.nodename === d.node),
      `not the requested destination ${d.host}${d.node ? `/${d.node}` : ''}`,
      'not the requested host',
    )
  if (spec.ignoreHosts.length > 0) {
    const ignore = new Set(spec.ignoreHosts.map((x) => x.toLowerCase()))
    const source = spec.moveSource?.toLowerCase()
    const before = list
    list = list.filter((h) => !ignore.has(h.host.toLowerCase()))
    for (const h of before) {
      if (list.includes(h)) continue
      const isSource = h.host.toLowerCase() === source
      const reason = isSource ? `the source host of the move (nova puts it in ignore_hosts)` : `in ignore_hosts ${spec.ignoreHosts.join(', ')}`
      verdicts.set(h.key, {host: h.host, node: h.nodename, stage: 'requested_destination', reason, label: isSource ? 'the source host' : 'ignored host'})
    }
  }
  if (spec.forceHosts.length > 0) {
    const force = new Set(spec.forceHosts.map((x) => x.toLowerCase()))
    drop((h) => force.has(h.host.toLowerCase()), `not in force_hosts ${spec.forceHosts.join(', ')}`, 'not a forced host')
  }
  if (spec.forceNodes.length > 0) {
    const force = new Set(spec.forceNodes)
    drop((h) => force.has(h.nodename), `not in force_nodes ${spec.forceNodes.join(', ')}`, 'not a forced node')
  }
  return list
}
