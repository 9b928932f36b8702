/** Why each compute node was not chosen (the placement stage and after), and the one-line summary. */
import type {CloudModel} from '../domain/model.js'
import type {CandidateResult} from './placement-result.js'
import type {ProviderIndex} from './provider-index.js'
import type {RequestSpec} from './request-spec.js'
import type {HostVerdict, SimulationResult} from './result.js'

export function collectPlacementVerdicts(
  model: CloudModel,
  idx: ProviderIndex,
  cands: CandidateResult,
  spec: RequestSpec,
  verdicts: Map<string, HostVerdict>,
): void {
  const keptRoots = new Set<number>()
  for (const a of cands.kept) keptRoots.add(a.anchorRootId)
  const allRoots = new Set<number>()
  for (const a of cands.all) allRoots.add(a.anchorRootId)
  for (const cn of model.liveComputeNodes) {
    const key = `${cn.host ?? ''}\u0000${cn.hypervisor_hostname ?? ''}`
    if (verdicts.has(key)) continue
    const base = {host: cn.host ?? '', node: cn.hypervisor_hostname ?? ''}
    if (!model.isCellAvailable(cn.cell_uuid)) {
      verdicts.set(key, {
        ...base,
        stage: 'host_state',
        reason: `cell ${model.cellLabel(cn.cell_uuid)} could not be read: the host is unknown`,
        label: 'in an unavailable cell (unknown)',
      })
      continue
    }
    const rp = cn.uuid ? idx.byUuid.get(cn.uuid) : undefined
    if (!rp) {
      verdicts.set(key, {...base, stage: 'placement', reason: 'the compute node has no resource provider in placement', label: 'no resource provider'})
      continue
    }
    if (keptRoots.has(rp.rootId)) continue
    if (allRoots.has(rp.rootId)) {
      verdicts.set(key, {
        ...base,
        stage: 'placement',
        reason: `a candidate, but cut by limit=${cands.kept.length} (max_placement_results)`,
        label: 'cut by max_placement_results',
      })
      continue
    }
    const rej = cands.diagnostics.rejectedRoots.get(rp.rootId)
    let label = rej?.label ?? 'not a placement candidate'
    if (label === 'not in requested aggregate' && spec.availabilityZone && spec.requiredAggregates.length > 0) label = `not in AZ ${spec.availabilityZone}`
    verdicts.set(key, {
      ...base,
      stage: 'placement',
      reason: rej?.message ?? cands.diagnostics.stoppedAt ?? 'not returned by placement',
      label,
      need: rej?.need,
      have: rej?.have,
    })
  }
}

/** "0/120 hosts are available: 80 insufficient PCPU (need 4, best has 2), 30 not in AZ az2, 10 disabled." */
export function summarize(model: CloudModel, result: SimulationResult, verdicts: Map<string, HostVerdict>, cands: CandidateResult, spec: RequestSpec): string {
  const placed = result.instances.filter((o) => o.host !== null)
  if (result.placedAll) {
    const hosts = [...new Set(placed.map((o) => o.host))]
    return `${placed.length}/${spec.numInstances} instance(s) placed on ${hosts.length} host(s): ${hosts.slice(0, 5).join(', ')}${hosts.length > 5 ? ', ...' : ''}`
  }
  const total = model.liveComputeNodes.length
  const groups = new Map<string, {n: number; need?: number; best?: number}>()
  {
    for (const v of verdicts.values()) {
      if (v.stage === 'selected') continue
      const g = groups.get(v.label) ?? {n: 0}
      g.n++
      if (v.need !== undefined) g.need = v.need
      if (v.have !== undefined) g.best = Math.max(g.best ?? -Infinity, v.have)
      groups.set(v.label, g)
    }
  }
  const parts = [...groups.entries()]
    .sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1))
    .map(([label, g]) => `${g.n} ${label}${g.need !== undefined ? ` (need ${g.need}, best has ${g.best})` : ''}`)
  const unknown =
    model.unavailableCells.length > 0 ? ` ${model.unavailableCells.map((c) => c.name ?? c.uuid).join(', ')} could not be read: its hosts are unknown.` : ''
  const firstFail = result.instances.find((o) => o.host === null)
  const head =
    placed.length > 0 ? `NoValidHost: only ${placed.length}/${spec.numInstances} instances could be placed (${firstFail?.reason ?? ''}).` : 'NoValidHost.'
  const detail =
    parts.length > 0
      ? ` 0/${total} hosts are available: ${parts.join(', ')}.`
      : cands.all.length === 0
        ? ` Placement returned no allocation candidates: ${cands.diagnostics.stoppedAt ?? 'no provider satisfies the request'}.`
        : firstFail?.reason
          ? ` ${firstFail.reason}.`
          : ''
  return `${head}${detail}${unknown}`
}
