/**
 * What a host filter is (filters.ts holds nova's filters and their registry): apart so that the
 * filters in more than one file share it without importing the registry.
 */
import type {SchedulerConfig} from './config.js'
import type {HostState} from './host-state.js'
import type {FittedCell} from './numa.js'
import type {RequestSpec} from './request-spec.js'

export interface Reason {
  /** Short label for the "0/N hosts are available" histogram, e.g. "insufficient free pCPUs". */
  label: string
  /** Full sentence for --why / --explain. */
  message: string
  need?: number
  have?: number
}

export interface FilterContext {
  cfg: SchedulerConfig
  /** Snapshot capture time, as "now" for service liveness. */
  now: Date
  /** Scratch output of NUMATopologyFilter for the claim (host key -> fitted cells). */
  numaFits: Map<string, FittedCell[]>
}

/**
 * What a filter's verdict reads beyond the host's own state. capacity/fast.ts evaluates a filter as
 * rarely as this allows:
 * - 'request': only the request (hints, image, zone, project): one verdict per host for every flavor;
 * - 'flavor': the flavor too, never what the simulation placed: one verdict per host and flavor;
 * - 'counters': the counters consumeHost moves (free RAM and disk, vCPUs used, instances, I/O ops),
 *   only ever stricter as instances land: evaluated on the state after k instances;
 * - 'placed': what exactly was placed (NUMA cells, PCI pools, consumed capability values): stepped
 *   one instance at a time;
 * - 'group': the server group's members on the host (anti-affinity's max_server_per_host).
 */
export type FilterInput = 'request' | 'flavor' | 'counters' | 'placed' | 'group'

export interface HostFilter {
  name: string
  /** nova's run_filter_once_per_request: skipped for the 2nd and later instances of a request. */
  runOncePerRequest: boolean
  /** What the verdict reads for this request beyond the host's own state (capacity's fast path asks). */
  reads(spec: RequestSpec): FilterInput
  hostPasses(hs: HostState, spec: RequestSpec, ctx: FilterContext): Reason | null
}

export const reject = (label: string, message: string, need?: number, have?: number): Reason => ({label, message, need, have})
