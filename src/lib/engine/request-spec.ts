/**
 * The shapes of a scheduling request: the boot (or move) request as given, and the RequestSpec
 * nova-api and the conductor hand the scheduler. Types only, so that the request filters, the
 * filters and the weighers read them without importing the code that builds them (request.ts).
 */
import type {ComputeNode, Flavor} from '../domain/snapshot.js'
import type {PciAlias} from './config.js'
import type {InstanceTopologyRequest} from './numa.js'

export interface BootRequest {
  /** Flavor name, flavorid, or numeric id. */
  flavor: string
  /** Extra specs layered over the flavor's (for what-if runs). */
  extraSpecs?: Record<string, string>
  imageProperties?: Record<string, string>
  imageId?: string | null
  imageDiskFormat?: string | null
  availabilityZone?: string | null
  numInstances?: number
  hints?: {group?: string; same_host?: string[]; different_host?: string[]}
  projectId?: string
  userId?: string
  bootFromVolume?: boolean
  host?: string | null
  node?: string | null
  /** The flavor as a RequestSpec recorded it (replaces the lookup of `flavor`: it may since be deleted or changed). */
  flavorRecord?: Flavor
  /** RequestSpec ignore_hosts / force_hosts / force_nodes (host_manager.get_filtered_hosts). */
  ignoreHosts?: string[]
  forceHosts?: string[]
  forceNodes?: string[]
  /**
   * nova-api checks the zone of a new boot (400 when no enabled host is in it); a replay or a move
   * does not (false: say so in the trace; unset: a library caller, no trace line).
   */
  validateZone?: boolean
  /** A move (cold or live migration) of an existing instance: it is scheduled itself, alone. */
  move?: MoveRequest
}

/** What select_destinations is told about the instance a migration moves. */
export interface MoveRequest {
  instanceUuid: string
  /** instance.host: nova puts it in ignore_hosts (unless a same-host cold migration is allowed). */
  sourceHost: string
  /** requested_destination.cell: the host manager loads only this cell's compute nodes. */
  cellUuid: string | null
}

export interface ServerGroupSpec {
  uuid: string
  name: string | null
  policy: string | null
  rules: Record<string, number>
  /** Member instance uuids (the instances being booted are added as members, as nova-api does). */
  members: Set<string>
  /** Hosts of the members, growing as instances of this request are placed. */
  hosts: string[]
}

export interface PciRequest {
  alias: string
  count: number
  spec: PciAlias
}

export interface RequestSpec {
  flavor: Flavor
  extraSpecs: Record<string, string>
  image: {id: string | null; diskFormat: string | null; properties: Record<string, string>}
  projectId: string
  userId: string
  availabilityZone: string | null
  numInstances: number
  hints: {group?: string; same_host?: string[]; different_host?: string[]}
  group: ServerGroupSpec | null
  isBfv: boolean
  requestedDestination: {host: string; node: string | null; nodes: ComputeNode[]} | null
  ignoreHosts: string[]
  forceHosts: string[]
  forceNodes: string[]
  vcpus: number
  memoryMb: number
  rootGb: number
  ephemeralGb: number
  swap: number
  numaTopology: InstanceTopologyRequest | null
  pciRequests: PciRequest[]
  /** Set by request filters (Destination.require_aggregates / append_forbidden_aggregates). */
  requiredAggregates: string[][]
  forbiddenAggregates: Set<string>
  rootRequired: Set<string>
  rootForbidden: Set<string>
  /** nova-api's zone check (BootRequest.validateZone). */
  validateZone?: boolean
  /** Set for a move: the instance being scheduled, its source host and cell. */
  instanceUuid?: string | null
  moveSource?: string | null
  cellUuid?: string | null
}

export interface PrefilterTrace {
  name: string
  ran: boolean
  effect: string
}

export const SIMULATED_PROJECT = 'simulated-project'
export const SIMULATED_USER = 'simulated-user'
