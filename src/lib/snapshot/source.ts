/**
 * Where a snapshot comes from and how its read reports progress: the contract between whoever asks
 * for a snapshot (the commands, through src/lib/cli/source-flags.ts) and the readers below
 * (snapshot/load.ts, config/resolve.ts, db/capture.ts, db/repair/targets.ts), which must not reach
 * up into the CLI for it.
 */
import type {NovaApiTables, PlacementTables} from '../domain/snapshot.js'

/**
 * A snapshot file, or the live databases. Resolution order for live connections (config/resolve.ts):
 * these options, then the environment (CLOUDCTL_API_DB, CLOUDCTL_PLACEMENT_DB, CLOUDCTL_NOVA_CONF,
 * CLOUDCTL_PROFILE), then the profile of the config file, then nova.conf.
 */
export interface SourceOptions {
  snapshot?: string
  apiDb?: string
  placementDb?: string
  cellDb?: string[]
  novaConf?: string
  config?: string
  profile?: string
  /** Capture request_specs too (large). */
  requestSpecs?: boolean
  /**
   * From live databases: read what one scheduling question reads, not every row (Snapshot.scope
   * 'scheduler'). Ignored for a snapshot file, which holds every row anyway.
   */
  schedulerView?: SchedulerView
  /**
   * From live databases: leave out the row columns no audit reads (Snapshot.scope 'audit',
   * db/read-cell.ts AUDIT_VIEW). Ignored for a snapshot file and with schedulerView.
   */
  auditView?: boolean
}

/** What a scheduling question names beyond the tables the scheduler always reads. */
export interface SchedulerView {
  /** An instance replayed or moved: its request spec, instance rows and allocations are read. */
  instance?: string
  /**
   * The instances whose rows the question reads, from nova_api as read (its request_specs: only
   * `instance`'s row); engine/reads.ts says which.
   */
  instances(api: NovaApiTables): string[]
  /**
   * Whether the question can read the hosts' NUMA topologies, from nova_api as read; absent: it
   * can. When it cannot, compute_nodes.numa_topology is not read (NULL in the rows).
   */
  hostNumaTopology?(api: NovaApiTables): boolean
  /**
   * The traits whose resource_provider_traits rows the question reads, from nova_api and placement's
   * trait and class names; absent or null: every row.
   */
  providerTraits?(api: NovaApiTables, placement: Pick<PlacementTables, 'traits' | 'resource_classes'>): Set<string> | null
}

/** Progress reports from long reads; commands print them on stderr only when it is a TTY. */
export interface ProgressEvent {
  /** 'nova_api', 'placement', or the cell name */
  database: string
  table: string
  rows: number
  done: boolean
}

export type ProgressSink = (event: ProgressEvent) => void

export const noProgress: ProgressSink = () => {}
