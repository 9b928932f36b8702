/**
 * nova mirrors every host aggregate into placement under the same uuid, on the providers of the
 * aggregate's hosts' compute nodes (availability zones are aggregates with `availability_zone`
 * metadata, so they are checked the same way). Placement aggregates that nova does not know (shared
 * storage, operator-made) are not nova's to judge. The lookups the aggregate codes share, built once.
 */
import type {Aggregate, ComputeNode} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import type {AuditContext} from '../context.js'

export const REPAIR = 'cloudctl repair aggregates'

export interface AggregateIndex {
  byUuid: Map<string, Aggregate>
  aggregatesByHost: Map<string, Aggregate[]>
  /** Membership as sets: an availability zone aggregate lists thousands of hosts. */
  hostSets: Map<Aggregate, Set<string>>
  liveNodesByHost: Map<string, ComputeNode[]>
}

export function aggregateIndex(ctx: AuditContext): AggregateIndex {
  return ctx.once(aggregateIndex, () => {
    const byUuid = new Map<string, Aggregate>()
    const aggregatesByHost = new Map<string, Aggregate[]>()
    const hostSets = new Map<Aggregate, Set<string>>()
    for (const agg of ctx.model.snapshot.nova_api.aggregates) {
      hostSets.set(agg, new Set(agg.hosts))
      if (agg.uuid) byUuid.set(agg.uuid, agg)
      for (const h of agg.hosts) push(aggregatesByHost, h, agg)
    }
    const liveNodesByHost = new Map<string, ComputeNode[]>()
    for (const cn of ctx.model.liveComputeNodes) if (cn.host !== null) push(liveNodesByHost, cn.host, cn)
    return {byUuid, aggregatesByHost, hostSets, liveNodesByHost}
  })
}

export const aggLabel = (agg: Aggregate): string => agg.name ?? agg.uuid ?? String(agg.id)

export const aggRow = (a: Aggregate) => ({id: a.id, uuid: a.uuid, name: a.name, availability_zone: a.metadata.availability_zone ?? null})
