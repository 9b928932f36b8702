/**
 * Which instance rows a scheduling request reads, so that a live read can leave the others out
 * (db/read-scheduler.ts). Every filter and weigher that looks at instances asks one question of a
 * host: is instance X on it (HostState.instances)? X is always a member of the request's server
 * group, a same_host / different_host hint, or the instance being moved; the group's hosts
 * (findGroup) come from the members' rows too. NumInstancesFilter and the I/O-ops filters count
 * from compute_nodes.stats, as nova's HostState does, and read no instance rows.
 */
import {buildModel} from '../domain/model.js'
import {SHARING_TRAIT} from '../domain/placement-capacity.js'
import {emptySnapshot, type Flavor, type InstanceGroup, type NovaApiTables, type PlacementTables} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {instanceTopologyFor} from './numa-constraints.js'
import {buildRequestSpec, placementRequestFor} from './request.js'
import {runRequestFilters} from './request-filters.js'
import type {BootRequest} from './request-spec.js'

export function instancesRequestReads(groups: readonly InstanceGroup[], request: Pick<BootRequest, 'hints' | 'move'>): string[] {
  const out = new Set<string>()
  const ref = request.hints?.group
  // findGroup takes the first group whose uuid or name matches; every match is read.
  if (ref) for (const g of groups) if (g.uuid === ref || g.name === ref) for (const m of g.members) out.add(m)
  for (const u of request.hints?.same_host ?? []) out.add(u)
  for (const u of request.hints?.different_host ?? []) out.add(u)
  if (request.move) out.add(request.move.instanceUuid)
  return [...out]
}

/**
 * Whether a request can read the hosts' NUMA topologies (compute_nodes.numa_topology, kilobytes per
 * host): NUMATopologyFilter and the claim after it read them only for a request with a NUMA
 * topology (numa_get_constraints of the flavor's extra specs and the image's properties: a
 * dedicated or mixed CPU policy, hw:numa_nodes, a page size, vPMEM...). Every flavor the reference
 * could name is asked, as buildRequestSpec would find it; a flavor found nowhere, or constraints
 * nova-api refuses, count as reading them.
 */
export function requestReadsHostNuma(
  flavors: readonly Flavor[],
  request: Pick<BootRequest, 'flavor' | 'flavorRecord' | 'extraSpecs' | 'imageProperties'>,
): boolean {
  const ref = request.flavor
  const named = request.flavorRecord
    ? [request.flavorRecord]
    : flavors.filter((f) => f.name === ref || f.flavorid === ref || (/^\d+$/.test(ref) && f.id === Number(ref)))
  if (named.length === 0) return true
  return named.some((f) => {
    try {
      return instanceTopologyFor(f.vcpus, f.memory_mb, {...f.extra_specs, ...(request.extraSpecs ?? {})}, {...(request.imageProperties ?? {})}) !== null
    } catch {
      return true
    }
  })
}

/**
 * The traits a boot's placement query can name, for each of `configs` (the scheduler options of
 * every release the snapshot may turn out to be), or null when that cannot be told. The candidate
 * search reads a provider's traits only to ask whether it carries a trait the query names (required,
 * forbidden, any-of, root_required/root_forbidden) or MISC_SHARES_VIA_AGGREGATE, so the other rows
 * of resource_provider_traits (60-100 per real compute) change no answer. The query is the one the
 * engine builds, on a model of nova_api and placement's names alone: the request filters that add
 * traits read nothing else. Whatever fails there (a zone, a host or a group the stand-in cannot
 * know, a refusal) gives null; the real run then decides with every row.
 */
export function requestTraitNames(
  api: NovaApiTables,
  placement: Pick<PlacementTables, 'traits' | 'resource_classes'>,
  request: BootRequest,
  configs: readonly SchedulerConfig[],
): Set<string> | null {
  const stand = emptySnapshot({kind: 'live', description: 'nova_api and placement names'})
  stand.nova_api = api
  stand.placement = {...stand.placement, traits: placement.traits, resource_classes: placement.resource_classes}
  const model = buildModel(stand)
  const out = new Set<string>([SHARING_TRAIT])
  try {
    for (const cfg of configs) {
      const spec = buildRequestSpec(model, request, cfg)
      runRequestFilters(model, spec, cfg)
      const {request: query} = placementRequestFor(model, spec, cfg)
      for (const t of query.rootRequired) out.add(t)
      for (const t of query.rootForbidden) out.add(t)
      for (const g of query.groups) {
        for (const t of g.required) out.add(t)
        for (const t of g.forbidden) out.add(t)
        for (const anyOf of g.requiredAnyOf ?? []) for (const t of anyOf) out.add(t)
      }
    }
  } catch {
    return null
  }
  return out
}
