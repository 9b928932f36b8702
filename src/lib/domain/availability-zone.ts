/**
 * A host's availability zone, as nova's availability_zones.get_host_availability_zone answers it:
 * the availability_zone metadata of the host's first aggregate (by id) that has one, else
 * [DEFAULT] default_availability_zone. The one copy: the scheduler's zone check, the capacity
 * planner's zones and `hosts list` all ask here.
 */
import type {Aggregate} from './snapshot.js'

/** [DEFAULT] default_availability_zone when nova.conf does not set it. */
export const NOVA_DEFAULT_AVAILABILITY_ZONE = 'nova'

/** host -> its zone, for every host of the aggregates; `defaultZone` for any other host (and for null). */
export function hostZones(aggregates: readonly Aggregate[], defaultZone: string): (host: string | null) => string {
  const az = new Map<string, string>()
  for (const a of [...aggregates].sort((x, y) => x.id - y.id)) {
    const zone = a.metadata.availability_zone
    if (zone !== undefined) for (const h of a.hosts) if (!az.has(h)) az.set(h, zone)
  }
  return (host) => (host !== null ? az.get(host) : undefined) ?? defaultZone
}
