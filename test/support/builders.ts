/**
 * CloudBuilder: small (or, through the generator, very large) clouds written the way nova and
 * placement would have written them, so that a clean build is fully consistent and every test that
 * wants an inconsistency has to make it explicitly.
 *
 * What "consistent" means here, table by table:
 * - every compute host has a live nova-compute service (up relative to the builder's fixed clock),
 *   a live compute node, a host mapping and a root resource provider with uuid = compute node uuid,
 *   name = hypervisor_hostname and the inventories nova's libvirt driver reports;
 * - every instance has its instance row (+ instance_extra blobs), an instance mapping, a placement
 *   consumer (project, user) and the allocations its flavor asks for, and it is accounted in its
 *   compute node's usage columns, stats and (when pinned) in the host NUMA cell's pinned_cpus;
 * - writes bump provider and consumer generations as placement's API does.
 *
 * Usage columns follow nova's resource tracker (_update_usage / _get_usage_dict): memory_mb_used
 * starts at reserved_host_memory_mb; local_gb_used = int(sum(root_gb + ephemeral_gb) + sum(swap)/1024)
 * with root_gb 0 for volume-backed instances (but counted in full for a migration, which the tracker
 * accounts from the bare flavor); vcpus_used = sum of flavor vcpus, pinned or not; an in-progress
 * migration is counted on both its source and its destination; running_vms and stats count the
 * instances whose host/node is the node.
 *
 * Blobs are written once, in nova's own serialisation (Python json.dumps: ', ' and ': ' separators,
 * ASCII only, floats with '.0'), with the versioned-object wrappers and `nova_object.changes` lists of
 * nova 26.2.2 (see /work/shared/reference/blobs.md). Per-host blobs are written at build() time.
 *
 * The class is assembled by table family in builders/: state.ts (the tables, ids and lookups),
 * placement.ts, nova-api.ts, computes.ts, instances.ts and migrations.ts, each extending the one
 * before; this file adds build() and re-exports the families' types, so tests import from here.
 */
import {type Inventory, type Snapshot, SNAPSHOT_FORMAT_VERSION, type Timestamp} from '../../src/lib/domain/snapshot.js'
import type {CloudBuilderOptions} from './builders/specs.js'
import {MigrationFamily} from './builders/migrations.js'

export {
  DEFAULT_NOW,
  flavorObject,
  formatTs,
  type HostNumaCellSpec,
  type HostNumaCellState,
  hostNumaTopologyBlob,
  instanceFlavorBlob,
  type InstanceNumaCellSpec,
  instanceNumaTopologyBlob,
  parseTs,
  PyFloat,
  pyDumps,
  pyString,
  requestSpecBlob,
  Rng,
} from './builders/blobs.js'
export {dedicatedVcpus, type FlavorResources, flavorResources, parseCpuSet} from './builders/resources.js'
export {
  type AggregateSpec,
  type ChildProviderSpec,
  type CloudBuilderOptions,
  CONSUMER_TYPE_INSTANCE,
  CONSUMER_TYPE_MIGRATION,
  DEFAULT_COMPUTE_TRAITS,
  type FlavorSpec,
  type HostRec,
  type HostSpec,
  type InstanceRec,
  type InstanceSpec,
  type IronicNodeSpec,
  type MigrationRec,
  type MigrationSpec,
  type ProviderRec,
  type ServerGroupSpec,
  type SharingProviderSpec,
  STANDARD_TRAITS,
} from './builders/specs.js'

export class CloudBuilder extends MigrationFamily {
  build(opts: {source?: string} = {}): Snapshot {
    for (const h of this.hosts) if (h.cn.deleted === 0) this.finalizeHost(h)
    const inventories: Inventory[] = []
    const traits: Array<{resource_provider_id: number; trait_id: number}> = []
    const rpAggs: Array<{resource_provider_id: number; aggregate_id: number}> = []
    for (const rp of this.providerList) {
      for (const inv of rp.inventories.values()) inventories.push(inv)
      for (const t of rp.traits) traits.push({resource_provider_id: rp.row.id, trait_id: t})
      for (const a of rp.aggregates) rpAggs.push({resource_provider_id: rp.row.id, aggregate_id: a})
    }
    const allocations: Snapshot['placement']['allocations'] = []
    let allocId = 0
    for (const [consumer, list] of this.allocations) {
      for (const a of list) allocations.push({id: ++allocId, resource_provider_id: a.rp.row.id, consumer_id: consumer, resource_class_id: a.rc, used: a.used})
    }
    const snapshot: Snapshot = {
      format_version: SNAPSHOT_FORMAT_VERSION,
      captured_at: new Date(this.nowMs).toISOString(),
      source: {kind: 'generated', description: opts.source ?? 'cloudctl test builder'},
      cells: this.cells.map((c) => ({...c})),
      nova_api: {
        host_mappings: this.hostMappings,
        instance_mappings: this.instanceMappings,
        flavors: [...this.flavors.values()],
        aggregates: this.aggregates,
        build_requests: [],
        ...(this.requestSpecs ? {request_specs: this.requestSpecRows} : {}),
        instance_groups: this.groups,
      },
      nova: {services: this.services, compute_nodes: this.computeNodes, instances: this.instanceRows, migrations: this.migrationRows},
      placement: {
        resource_providers: this.providerList.map((p) => p.row),
        inventories,
        allocations,
        consumers: [...this.consumers.values()],
        consumer_types: [],
        projects: [...this.projects].map(([external_id, id]) => ({id, external_id})),
        users: [...this.users].map(([external_id, id]) => ({id, external_id})),
        resource_classes: [...this.customRcs].map(([name, id]) => ({id, name})),
        traits: [...this.traitIds].map(([name, id]) => ({id, name})),
        resource_provider_traits: traits,
        placement_aggregates: this.placementAggs,
        resource_provider_aggregates: rpAggs,
      },
    }
    return snapshot
  }
}

/** Shorthand for tests: `cloud({seed: 3}).addCell('cell1')...` */
export function cloud(opts: CloudBuilderOptions = {}): CloudBuilder {
  return new CloudBuilder(opts)
}

export type {Timestamp}

// ---------------------------------------------------------------- builder families
export {CELL1_UUID, CELL2_UUID, F09, F11, sampleSnapshot} from './builders/sample.js'
export {aggregate, filterContext, flavor, hostState, NOW, NOW_DB, numaCell, requestSpec, service, topology} from './builders/engine-values.js'
