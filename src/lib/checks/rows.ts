/** Row shapes and phrases several checks put in their findings (repairs guard on these fields). */
import type {ResourceProvider} from '../domain/snapshot.js'

export const providerRow = (rp: ResourceProvider) => ({id: rp.id, uuid: rp.uuid, name: rp.name, generation: rp.generation})

/** Said of a node row whose nova-compute is down: no resource tracker has run since it went down. */
export const DOWN_HOST_NOTE = 'nova-compute on this host is down: its resource tracker recomputes the row when nova-compute starts'
