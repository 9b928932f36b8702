/**
 * What each finding code means beyond its one-line summary: how nova gets there and what the repair
 * does. Keyed by the codes of FINDING_CODES (a test holds the two, and docs/checks.md, together), so
 * `cloudctl explain` and the docs cannot drift apart.
 */
import type {CheckName, Severity} from '../domain/finding.js'
import {FINDING_CODES} from './index.js'

export interface CodeExplanation {
  /** How nova (or an operator) leaves the databases in this state. */
  cause: string
  /** What to run and what it changes; the command first. */
  repair: string
  /** A runbook page that walks through the incident, repo-relative. */
  runbook?: string
}

const UNDECIDED: CodeExplanation = {
  cause: 'A cell database could not be read (unreachable, wrong credentials, a schema cloudctl cannot read). Rows that may live there are unknown, so nothing is concluded from their absence: an outage is never taken for an empty cell.',
  repair: 'Make the cell database reachable (check `cloudctl cells list` for its error) and audit again. Every repair refuses to write what depends on that cell until then.',
}

const RB = (page: string) => `docs/runbooks/${page}.md`

export const CODE_EXPLANATIONS: Record<string, CodeExplanation> = {
  'allocation.consumer-deleted': {
    cause: 'nova deletes an instance in its cell and then asks placement to drop its allocations; when nova-compute is down (the host died, LP 1679750) or the call fails, the row is soft-deleted but placement keeps the allocation, which the resource tracker of a dead host never cleans up. The host looks full to the scheduler.',
    repair: '`cloudctl repair leaks` deletes the allocations of that consumer on the provider tree the finding names (guarded by the consumer and provider generations), and the consumer when nothing is left.',
    runbook: RB('leak-after-host-death'),
  },
  'allocation.consumer-unknown': {
    cause: 'The consumer is in no readable cell, no migration and no build request: an instance archived or purged (`nova-manage db archive_deleted_rows`) before placement let go of it, or a consumer written by hand or another service.',
    repair: '`cloudctl repair leaks` deletes its allocations on that provider tree. Check first that no other service (cinder, neutron, cyborg) owns the consumer.',
  },
  'allocation.migration-finished': {
    cause: 'During a move nova holds the source allocation under the migration uuid; confirm/revert hands it back or drops it. A confirm that failed, a revert interrupted by a restart, or an errored migration leaves the migration consumer holding resources after the move is over.',
    repair: '`cloudctl repair leaks` deletes the allocations of that migration consumer.',
  },
  'allocation.wrong-provider': {
    cause: 'The instance holds resources on a provider that is not its node and no migration explains it: a move whose allocation swap did not finish, an evacuation that rebuilt elsewhere, or `instances.host/node` edited by hand.',
    repair: '`cloudctl repair leaks` removes the rows on the wrong provider when the instance also holds its own host; `repair leaks --heal` moves them to its host when it holds nothing there (it never leaves an instance without an allocation).',
  },
  'allocation.evacuation-leftover': {
    cause: 'Evacuation allocates on the destination and leaves the source allocation until the source nova-compute starts again and cleans it up; a source host that never comes back (or was deleted) keeps it forever.',
    repair: '`cloudctl repair leaks` deletes the leftover rows on the evacuation source.',
    runbook: RB('stale-provider-after-service-delete'),
  },
  'allocation.missing': {
    cause: 'The instance is live on a host but holds nothing in placement: an allocation deleted by hand or by an over-eager cleanup, or an instance from before placement tracked it. The scheduler counts the host as emptier than it is.',
    repair: '`cloudctl repair leaks --heal` creates the allocation from the flavor, as `nova-manage placement heal_allocations` would.',
  },
  'allocation.amount-mismatch': {
    cause: 'The amounts held differ from what the flavor asks (nova ResourceRequest rules: resources:RC overrides, dedicated CPU as PCPU, boot-from-volume without DISK_GB): a resize that did not swap allocations, a flavor changed in place, or a hand-made allocation.',
    repair: '`cloudctl repair leaks --heal` rewrites the amounts from the flavor.',
  },
  'allocation.consumer-incomplete': {
    cause: 'Placement allocations without a consumers row, or with no project/user: written before placement tracked consumers (pre-Rocky) or by hand.',
    repair: 'Reported only: `nova-manage placement heal_allocations` fills project and user from the instance.',
  },
  'allocation.undecided': UNDECIDED,
  'provider.stale': {
    cause: '`openstack compute service delete` (or a deleted compute node) on a host whose provider could not be removed because allocations were still on it; or a host decommissioned without deleting its service. The provider keeps inventory and allocations nova no longer tracks.',
    repair: '`cloudctl repair providers` removes its leaked allocations and then the provider tree (traits, aggregates, inventories, provider), refused while a live instance is still placed on it.',
    runbook: RB('stale-provider-after-service-delete'),
  },
  'provider.uuid-mismatch': {
    cause: "A hypervisor renamed itself or its compute node was re-created: nova-compute made a new compute node uuid but placement already has a provider with that name under the old uuid, so every periodic fails with ResourceProviderCreationFailed and the host's inventory is never updated.",
    repair: '`cloudctl repair providers --strategy rekey` gives the provider the compute node uuid (children, inventories, allocations follow by id); `--strategy move` builds a new provider and moves the live allocations to it. Then restart nova-compute on the host.',
    runbook: RB('uuid-mismatch-after-hostname-change'),
  },
  'provider.missing': {
    cause: 'A live compute node has no provider: nova-compute has not reported since it started, or its provider was deleted by hand. The scheduler cannot place anything there.',
    repair: 'Restart nova-compute on the host (its resource tracker creates the provider); `cloudctl repair providers` lists the case.',
  },
  'provider.duplicate-name': {
    cause: 'A hypervisor changed its name (short name to FQDN): nova-compute made a node and provider under the new name and deleted the old node as an orphan, but the old provider stayed, with the servers still placed on it.',
    repair: "`cloudctl repair providers` moves the old node's servers to the host's live node, moves their allocations to its provider and removes the old tree (refused for several live nodes or a move in progress).",
  },
  'provider.over-capacity': {
    cause: 'Usage is above (total - reserved) x allocation_ratio: an allocation ratio or reserved amount lowered after instances were placed, an inventory shrunk (hardware change), or allocations written around placement.',
    repair: 'Reported only: migrate instances off the provider or restore the ratio; `cloudctl simulate capacity` shows the headroom.',
  },
  'provider.inventory-drift': {
    cause: "The provider's VCPU / MEMORY_MB / DISK_GB totals differ from the compute node's vcpus / memory_mb / local_gb: nova-compute is down, failing to report (see uuid-mismatch), or the host's hardware changed since it last reported.",
    repair: 'Reported only: restart nova-compute on the host; its periodic rewrites the inventory.',
  },
  'provider.undecided': UNDECIDED,
  'cell.instance-unmapped': {
    cause: 'The instance lives in a cell but nova_api has no instance_mapping: a boot interrupted between the cell write and the mapping, or a cell added without `nova-manage cell_v2 map_instances`. The API answers 404 for it.',
    repair: '`cloudctl cells map-instances` creates the mapping to the cell the instance lives in.',
  },
  'cell.instance-mapped-wrong-cell': {
    cause: "The mapping's cell_id is NULL (a boot still in the conductor, or one that failed before scheduling) or another cell than the instance's: a cross-cell move interrupted, or a database restored in one cell only.",
    repair: '`cloudctl cells map-instances` points the mapping at the cell the instance lives in.',
  },
  'cell.instance-duplicate': {
    cause: 'The same uuid is live in two cells: typically an ERROR copy buried in cell0 by a failed schedule and the real instance in cell1 after a retry or a cross-cell move that did not clean up.',
    repair: '`cloudctl cells map-instances` keeps the copy that is live and not in ERROR, points the mapping at it and soft-deletes the other as nova does; when no single copy qualifies it is left to the operator.',
    runbook: RB('instance-in-cell0-and-cell1'),
  },
  'cell.instance-mapping-stale': {
    cause: 'The cell never archives deleted instances: their instance_mappings stay in nova_api long after the deletion (one finding per cell, the uuids in the evidence).',
    repair: '`nova-manage db archive_deleted_rows --before DATE --purge` (the date is in the finding) removes the old rows and their mappings.',
  },
  'cell.build-request-stale': {
    cause: 'A build_request stays after the instance was created in a cell: the conductor failed to delete it. The API may list the instance twice or as still building.',
    repair: 'Reported only: delete the build_request row once the instance is confirmed in its cell (`cloudctl cells verify-instance UUID`).',
  },
  'cell.host-unmapped': {
    cause: 'A nova-compute host has no host_mapping: `nova-manage cell_v2 discover_hosts` was not run after the host was added (and discover_hosts_in_cells_interval is off). The scheduler never selects it.',
    repair: '`cloudctl cells discover-hosts` creates the mapping and sets compute_nodes.mapped (also for nodes marked mapped whose mapping is missing).',
  },
  'cell.host-mapping-stale': {
    cause: 'The host_mapping outlived its nova-compute service (deleted or decommissioned host); a new host reusing the name in another cell would be mis-routed.',
    repair: '`cloudctl cells discover-hosts --prune` deletes the mapping.',
    runbook: RB('stale-provider-after-service-delete'),
  },
  'cell.host-mapped-wrong-cell': {
    cause: 'The host moved to another cell (re-installed, database restored) but its host_mapping still points at the old one: nova routes its instances to the wrong cell.',
    repair: '`cloudctl cells discover-hosts` points the mapping at the cell where the host’s service lives.',
  },
  'cell.undecided': UNDECIDED,
  'pinning.leaked': {
    cause: "compute_nodes.numa_topology keeps pCPUs in pinned_cpus that no live instance pins: an instance deleted or moved while nova-compute was down, so the resource tracker never freed them. NUMATopologyFilter then returns 0 hosts for pinned flavors.",
    repair: '`cloudctl repair pinning` rewrites pinned_cpus from the live instances (only that array, byte for byte otherwise); refused while nova-compute is up unless `--force`, as the tracker would overwrite it. Restarting nova-compute recomputes it too.',
    runbook: RB('pinned-cpus-stuck-full'),
  },
  'pinning.unaccounted': {
    cause: "Live instances pin pCPUs that the host's pinned_cpus does not record: a tracker that missed an instance (stalled periodic, a move in flight). The scheduler may pin a second guest onto them.",
    repair: '`cloudctl repair pinning` adds them from the live instances (same guard as pinning.leaked).',
  },
  'pinning.overlap': {
    cause: 'Two instances pin the same pCPU: a race between two claims or a live migration without NUMA-aware migration (pre-Train behaviour), or instance NUMA topologies edited by hand.',
    repair: 'Reported only: migrate one of the instances (a new claim re-pins it).',
  },
  'pinning.outside-dedicated-set': {
    cause: "Pins lie outside the host cell's pcpuset: cpu_dedicated_set was changed on a host with pinned guests still running.",
    repair: 'Reported only: restore cpu_dedicated_set or migrate the instances.',
  },
  'pinning.placement-drift': {
    cause: 'Placement PCPU usage on the provider differs from the pCPUs its live instances pin: a PCPU allocation leaked by a deleted or moved instance, or one missing or short for a pinned guest.',
    repair: '`cloudctl repair leaks` removes leaked PCPU allocations; `repair leaks --heal` creates missing ones or fixes the amounts from the flavor.',
  },
  'pinning.undecided': UNDECIDED,
  'usage.node-drift': {
    cause: "The compute node's *_used / free_* / running_vms columns differ from what its live instances add up to: the resource tracker did not run since instances were deleted or moved (nova-compute down or stuck).",
    repair: '`cloudctl repair usage` recomputes the columns as the tracker would; refused while nova-compute is up unless `--force`. Restarting nova-compute does the same.',
    runbook: RB('negative-free-resources'),
  },
  'usage.negative-free': {
    cause: 'free_ram_mb / free_disk_gb are negative: normal with an allocation ratio above 1 (overcommit, info); beyond the ratio the host holds more than placement should have allowed (warning).',
    repair: 'Nothing when info. Beyond the ratio: migrate instances off the node or raise its allocation ratios.',
    runbook: RB('negative-free-resources'),
  },
  'usage.undecided': UNDECIDED,
  'aggregate.missing-in-placement': {
    cause: "nova mirrors each host aggregate into placement on the host's provider; adding a host while placement was unreachable, or a provider re-created later, leaves the link missing and aggregate-based filters/prefilters ignore the host.",
    repair: '`cloudctl repair aggregates` creates the placement aggregate link on the provider.',
  },
  'aggregate.extra-in-placement': {
    cause: 'A host removed from a nova aggregate while placement was unreachable keeps the placement link: member_of requests still match it.',
    repair: '`cloudctl repair aggregates --prune` removes the link.',
  },
  'aggregate.host-not-found': {
    cause: 'The aggregate still lists a host that was decommissioned or renamed.',
    repair: 'Reported only: `openstack aggregate remove host AGG HOST`.',
  },
  'aggregate.az-conflict': {
    cause: 'The host sits in two aggregates with different availability_zone metadata (the API refuses this, but direct edits and old releases allow it): its AZ is ambiguous.',
    repair: 'Reported only: remove the host from one of the aggregates.',
  },
  'aggregate.no-uuid': {
    cause: 'An aggregate row without a uuid (created before aggregates had uuids and never migrated): it cannot be mirrored into placement.',
    repair: 'Reported only: run `nova-manage db online_data_migrations`.',
  },
  'aggregate.undecided': UNDECIDED,
  'snapshot.unreadable-blob': {
    cause: 'A JSON column nova wrote (flavor, numa_topology, request spec...) cannot be parsed: truncated by a column size limit, written by hand, or of a newer release.',
    repair: 'Reported only: checks that need the blob skip the row rather than guess; fix or restore the row.',
  },
}

export interface ExplainedCode extends CodeExplanation {
  code: string
  check: CheckName
  severity: Severity | 'info|warning'
  summary: string
  docs: string
}

export function explainCode(code: string): ExplainedCode | undefined {
  const base = FINDING_CODES[code]
  const ex = CODE_EXPLANATIONS[code]
  if (!base || !ex) return undefined
  return {code, check: base.check, severity: base.severity, summary: base.summary, ...ex, docs: `docs/checks.md#${base.check}`}
}
