/** Where each host is (availability zone, aggregates) and what each zone and aggregate holds. */
import {hostZones} from '../domain/availability-zone.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode} from '../domain/snapshot.js'
import type {EngineState, SchedulerConfig} from '../engine/index.js'
import type {ProviderIndex} from '../engine/provider-index.js'
import type {HostUsage, ZoneUsage} from './types.js'

export interface HostPlaces {
  /** host -> AZ (first aggregate, by id, with availability_zone metadata; else default_availability_zone). */
  azOf(host: string | null): string
  /** host -> names of its aggregates without availability_zone metadata. */
  aggregatesOf(host: string | null): string[]
}

export function hostPlaces(model: CloudModel, cfg: SchedulerConfig): HostPlaces {
  const aggs = new Map<string, string[]>()
  for (const a of [...model.snapshot.nova_api.aggregates].sort((x, y) => x.id - y.id)) {
    if (a.metadata.availability_zone !== undefined) continue
    for (const h of a.hosts) {
      const l = aggs.get(h) ?? []
      l.push(a.name ?? a.uuid ?? `aggregate-${a.id}`)
      aggs.set(h, l)
    }
  }
  return {
    azOf: hostZones(model.snapshot.nova_api.aggregates, cfg.default_availability_zone),
    aggregatesOf: (h) => (h === null ? [] : (aggs.get(h) ?? [])),
  }
}

const ZONE_CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']

export function zoneUsage(
  model: CloudModel,
  idx: ProviderIndex,
  state: EngineState,
  nodes: ComputeNode[],
  places: HostPlaces,
  perHost: boolean,
): {zones: ZoneUsage[]; hosts: HostUsage[] | null} {
  const usage = state.usageView(idx)
  const zones = new Map<string, ZoneUsage>()
  const hosts: HostUsage[] | null = perHost ? [] : null
  const classes = ZONE_CLASSES.flatMap((rc) => {
    const rcId = model.rc.id(rc)
    return rcId === undefined ? [] : [{rc, rcId}]
  })
  const seen = new Set<number>()
  for (const cn of nodes) {
    const az = places.azOf(cn.host)
    const aggs = places.aggregatesOf(cn.host)
    const rp = cn.uuid ? idx.byUuid.get(cn.uuid) : undefined
    // Two compute nodes on one provider (a uuid clash) must not count its inventory twice.
    const counted = rp !== undefined && !seen.has(rp.id)
    if (rp) seen.add(rp.id)
    const resources: Record<string, {capacity: number; used: number}> = {}
    if (rp && counted) {
      for (const {rc, rcId} of classes) {
        const inv = rp.inventories.get(rcId)
        if (inv) resources[rc] = {capacity: inv.summaryCapacity, used: usage.used(rp.id, rcId)}
      }
    }
    hosts?.push({host: cn.host ?? '', node: cn.hypervisor_hostname ?? '', az, aggregates: aggs, resources})
    for (const [name, kind] of [[az, 'az'], ...aggs.map((a) => [a, 'aggregate'])] as Array<[string, 'az' | 'aggregate']>) {
      const key = `${kind}/${name}`
      let z = zones.get(key)
      if (!z) zones.set(key, (z = {name, kind, hosts: 0, resources: {}}))
      z.hosts++
      for (const [rc, r] of Object.entries(resources)) {
        const t = (z.resources[rc] ??= {capacity: 0, used: 0})
        t.capacity += r.capacity
        t.used += r.used
      }
    }
  }
  const list = [...zones.values()].sort((a, b) => (a.kind === b.kind ? (a.name < b.name ? -1 : 1) : a.kind === 'az' ? -1 : 1))
  return {zones: list, hosts}
}
