/**
 * aggregates: nova mirrors every host aggregate into placement under the same uuid, on the
 * providers of the aggregate's hosts' compute nodes (availability zones are aggregates with
 * `availability_zone` metadata, so they are checked the same way). Placement aggregates that nova
 * does not know (shared storage, operator-made) are not nova's to judge.
 */
import type {Finding} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Aggregate, ComputeNode, ResourceProvider} from '../domain/snapshot.js'
import {AuditContext, push} from './context.js'

const REPAIR = 'cloudctl repair aggregates'

export function checkAggregates(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const findings: Finding[] = []
  const aggregates = model.snapshot.nova_api.aggregates
  const byUuid = new Map<string, Aggregate>()
  const aggregatesByHost = new Map<string, Aggregate[]>()
  // Membership as sets: an availability zone aggregate lists thousands of hosts.
  const hostSets = new Map<Aggregate, Set<string>>()
  for (const agg of aggregates) {
    hostSets.set(agg, new Set(agg.hosts))
    if (agg.uuid) byUuid.set(agg.uuid, agg)
    for (const h of agg.hosts) push(aggregatesByHost, h, agg)
  }
  const liveNodesByHost = new Map<string, ComputeNode[]>()
  for (const cn of model.liveComputeNodes) if (cn.host !== null) push(liveNodesByHost, cn.host, cn)
  const providerRow = (rp: ResourceProvider) => ({id: rp.id, uuid: rp.uuid, name: rp.name, generation: rp.generation})
  const aggRow = (a: Aggregate) => ({id: a.id, uuid: a.uuid, name: a.name, availability_zone: a.metadata.availability_zone ?? null})
  let undecidedHosts = 0

  for (const agg of aggregates) {
    const label = agg.name ?? agg.uuid ?? String(agg.id)
    if (!agg.uuid) {
      findings.push({
        check: 'aggregates',
        code: 'aggregate.no-uuid',
        severity: 'warning',
        subject: {aggregate: label},
        message: `Host aggregate ${label} has no uuid: nova cannot mirror it into placement.`,
        evidence: {aggregate: aggRow(agg)},
        repair: REPAIR,
      })
      continue
    }
    for (const host of agg.hosts) {
      const nodes = liveNodesByHost.get(host) ?? []
      if (nodes.length === 0) {
        const mapped = ctx.hostMappingsByHost.get(host) ?? []
        if (!model.allCellsAvailable && !mapped.every((hm) => ctx.cellById(hm.cell_id)?.status === 'available')) {
          undecidedHosts++
          continue
        }
        if (!model.allCellsAvailable && mapped.length === 0) {
          undecidedHosts++
          continue
        }
        findings.push({
          check: 'aggregates',
          code: 'aggregate.host-not-found',
          severity: 'warning',
          subject: {aggregate: label, host},
          message: `Host aggregate ${label} lists ${host}, which has no live compute node in any cell.`,
          evidence: {aggregate: aggRow(agg), host},
          repair: REPAIR,
        })
        continue
      }
      for (const cn of nodes) {
        const rp = ctx.providerOf(cn)
        if (!rp) continue // provider.missing says it
        if (model.aggregatesOf(rp.id).has(agg.uuid)) continue
        findings.push({
          check: 'aggregates',
          code: 'aggregate.missing-in-placement',
          severity: 'warning',
          subject: {...ctx.nodeSubject(cn), aggregate: label, provider_uuid: rp.uuid},
          message: `${host} is in host aggregate ${label}${agg.metadata.availability_zone ? ` (availability zone ${agg.metadata.availability_zone})` : ''} but its provider ${rp.name ?? rp.uuid} is not in placement aggregate ${agg.uuid}: member_of / AZ prefiltering skips it.`,
          evidence: {aggregate: aggRow(agg), provider: providerRow(rp), provider_aggregates: [...model.aggregatesOf(rp.id)].sort()},
          repair: REPAIR,
        })
      }
    }
  }

  // The other direction: compute node providers in a nova aggregate that does not list their host.
  for (const cn of model.liveComputeNodes) {
    const rp = ctx.providerOf(cn)
    if (!rp || cn.host === null) continue
    for (const aggUuid of model.aggregatesOf(rp.id)) {
      const agg = byUuid.get(aggUuid)
      if (!agg || hostSets.get(agg)?.has(cn.host)) continue
      findings.push({
        check: 'aggregates',
        code: 'aggregate.extra-in-placement',
        severity: 'warning',
        subject: {...ctx.nodeSubject(cn), aggregate: agg.name ?? aggUuid, provider_uuid: rp.uuid},
        message: `Provider ${rp.name ?? rp.uuid} is in placement aggregate ${aggUuid} (${agg.name ?? 'unnamed'}) but ${cn.host} is not a member of that host aggregate.`,
        evidence: {aggregate: aggRow(agg), provider: providerRow(rp), aggregate_hosts: agg.hosts},
        repair: REPAIR,
      })
    }
  }

  // A host in two availability zones: nova refuses to create this, a direct DB edit does not.
  for (const [host, aggs] of aggregatesByHost) {
    const zones = new Map<string, Aggregate[]>()
    for (const a of aggs) if (a.metadata.availability_zone) push(zones, a.metadata.availability_zone, a)
    if (zones.size < 2) continue
    findings.push({
      check: 'aggregates',
      code: 'aggregate.az-conflict',
      severity: 'error',
      subject: {host, aggregate: aggs.map((a) => a.name ?? a.uuid ?? a.id).join(',')},
      message: `${host} is in ${zones.size} availability zones (${[...zones.keys()].sort().join(', ')}): AZ filtering and instance AZs become unpredictable.`,
      evidence: {host, zones: Object.fromEntries([...zones].map(([z, list]) => [z, list.map(aggRow)]))},
      repair: REPAIR,
    })
  }

  findings.push(...ctx.undecided('aggregates', 'aggregate.undecided', 'aggregate membership of its hosts is', {undecided_hosts: undecidedHosts}))
  return findings
}
