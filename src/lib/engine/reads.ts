/**
 * Which instance rows a scheduling request reads, so that a live read can leave the others out
 * (db/read-scheduler.ts). Every filter and weigher that looks at instances asks one question of a
 * host: is instance X on it (HostState.instances)? X is always a member of the request's server
 * group, a same_host / different_host hint, or the instance being moved; the group's hosts
 * (findGroup) come from the members' rows too. NumInstancesFilter and the I/O-ops filters count
 * from compute_nodes.stats, as nova's HostState does, and read no instance rows.
 */
import type {InstanceGroup} from '../domain/snapshot.js'
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
