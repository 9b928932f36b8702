/**
 * Which instance rows a scheduling request reads, so that a live read can leave the others out
 * (db/read-scheduler.ts). Every filter and weigher that looks at instances asks one question of a
 * host: is instance X on it (HostState.instances)? X is always a member of the request's server
 * group, a same_host / different_host hint, or the instance being moved; the group's hosts
 * (findGroup) come from the members' rows too. NumInstancesFilter and the I/O-ops filters count
 * from compute_nodes.stats, as nova's HostState does, and read no instance rows.
 */
import type {Flavor, InstanceGroup} from '../domain/snapshot.js'
import {instanceTopologyFor} from './numa-constraints.js'
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
export function requestReadsHostNuma(flavors: readonly Flavor[], request: Pick<BootRequest, 'flavor' | 'flavorRecord' | 'extraSpecs' | 'imageProperties'>): boolean {
  const ref = request.flavor
  const named = request.flavorRecord ? [request.flavorRecord] : flavors.filter((f) => f.name === ref || f.flavorid === ref || (/^\d+$/.test(ref) && f.id === Number(ref)))
  if (named.length === 0) return true
  return named.some((f) => {
    try {
      return instanceTopologyFor(f.vcpus, f.memory_mb, {...f.extra_specs, ...(request.extraSpecs ?? {})}, {...(request.imageProperties ?? {})}) !== null
    } catch {
      return true
    }
  })
}
