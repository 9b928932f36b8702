/** Shapes of `cloudctl simulate capacity` (also its --json document). */
import type {BootRequest, EngineState, SchedulerConfig} from '../engine/index.js'

export interface CapacityOptions {
  /** Flavor names/ids; default: every public, enabled flavor. */
  flavors?: string[]
  /** Request the flavors in this AZ (AvailabilityZoneFilter / member_of) and count only its hosts. */
  availabilityZone?: string | null
  /** Count only hosts of this nova aggregate (name or uuid). */
  aggregate?: string | null
  config?: SchedulerConfig
  /** Start from this engine state (e.g. after a drain); the model's usage otherwise. */
  state?: EngineState
  /** Keep a row per host in the report. */
  perHost?: boolean
  /** Request details shared by every flavor (project, image properties, boot from volume, group hint). */
  request?: Omit<BootRequest, 'flavor' | 'numInstances' | 'availabilityZone' | 'host' | 'node'>
  /** Seed of the engine's random choices (only the affinity-group first pick and --mix depend on it). */
  seed?: number
  /** 'fast' (default): per-host counts; 'engine': boot one after another through simulateBoot. */
  method?: 'fast' | 'engine'
  /** Mix: flavor -> share (any positive numbers; normalised). */
  mix?: Array<{flavor: string; weight: number}>
  /** Stop the engine paths (mix, fallback) after this many instances. */
  maxInstances?: number
  /** Keep the placement usage of every host in scope (for the HTML report's utilisation charts). */
  hostUsage?: boolean
}

export interface HostCapacity {
  host: string
  node: string
  az: string
  aggregates: string[]
  /** Additional instances of the flavor that fit on this host, through the whole pipeline. */
  fits: number
  /** Free placement capacity divided by the flavor, per resource class, minimum. */
  naive: number
  /** What stops the next instance here ("PCPU exhausted", "NUMA: ...", "ComputeFilter: disabled"). */
  limit: string
}

export interface GroupCapacity {
  name: string
  hosts: number
  fits: number
  naive: number
}

export interface FlavorCapacity {
  flavor: string
  vcpus: number
  memory_mb: number
  disk_gb: number
  /** The merged placement request of one instance, resource class -> amount. */
  resources: Record<string, number>
  fits: number
  naive: number
  /** naive - fits: how far the division overestimates. */
  overestimate: number
  method: 'fast' | 'engine'
  /** Limiting reason -> number of hosts, most frequent first. */
  limits: Array<{reason: string; hosts: number; fits: number}>
  byAz: GroupCapacity[]
  byAggregate: GroupCapacity[]
  hosts?: HostCapacity[]
  notes: string[]
  /** Set when the flavor cannot be requested at all (the API would refuse it). */
  error?: string
}

export interface MixCapacity {
  mix: Array<{flavor: string; share: number}>
  total: number
  byFlavor: Array<{flavor: string; fits: number}>
  /** The flavor whose instance could not be placed, ending the run. */
  stoppedBy: string | null
  stopReason: string | null
  truncated: boolean
  byAz: Array<{name: string; byFlavor: Record<string, number>}>
}

export interface ZoneUsage {
  name: string
  kind: 'az' | 'aggregate'
  hosts: number
  /** Capacity (placement, with allocation ratio) and usage per resource class. */
  resources: Record<string, {capacity: number; used: number}>
}

export interface HostUsage {
  host: string
  node: string
  az: string
  aggregates: string[]
  /** Capacity (placement, with allocation ratio) and usage per resource class; empty without a provider. */
  resources: Record<string, {capacity: number; used: number}>
}

export interface CapacityReport {
  captured_at: string
  scope: {availabilityZone: string | null; aggregate: string | null; hosts: number}
  enabled_filters: string[]
  flavors: FlavorCapacity[]
  mix: MixCapacity | null
  zones: ZoneUsage[]
  /** Per host in scope, with `hostUsage`. */
  hostUsage?: HostUsage[]
  notes: string[]
  timings: {totalMs: number}
}
