import type {Scenario} from './expectations.js'

/**
 * The scenarios of driver_computes.py (ComputeClouds: nova's ProviderUsageBaseTestCase, fake virt
 * driver, two cells): baremetal nodes, cross-cell resize, soft delete / shelve / rebuild, and a leaked
 * migration allocation. Kept apart from expectations.ts's table so other play modules add theirs the
 * same way; expectations.ts spreads it into SCENARIOS.
 */
export const COMPUTE_SCENARIOS: Record<string, Scenario> = {
  // Two ironic-driver services with three nodes each (one compute node and one provider per node):
  // a deployed node's one unit of its custom class is reserved while an instance is on it (total 1,
  // reserved 1, used 1); flavors ask for the custom class only (resources:VCPU/MEMORY_MB/DISK_GB=0).
  baremetal: {codes: [], repairs: [], driver: 'driver_computes'},
  // Cross-cell resizes (one host per cell): one confirmed, one reverted, one left in VERIFY_RESIZE
  // (hidden copy on the source in cell1, migration row in both cells).
  cross_cell_resize: {codes: [], repairs: [], driver: 'driver_computes'},
  // Soft delete ([DEFAULT]reclaim_instance_interval) and restore, servers left SOFT_DELETED (they keep
  // their allocations and their place on the node), shelve/offload/unshelve, shelved on the host and
  // shelved offloaded, a rebuild with another image.
  lifecycle: {codes: [], repairs: [], driver: 'driver_computes'},
  // The confirm's removal of the migration allocation gets a 409 from placement, the server goes to
  // ERROR and is deleted: the migration row is soft-deleted with it and its allocation on the source
  // is leaked. cloudctl names it as that migration's; repair leaks removes it.
  migration_leak: {codes: ['allocation.migration-finished'], repairs: [['repair', 'leaks']], driver: 'driver_computes'},
}
