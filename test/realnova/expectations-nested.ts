import type {Scenario} from './expectations.js'

/**
 * The scenarios of driver_nested.py: nested provider trees (neutron's bandwidth providers, vGPU and
 * PCI children) and a sharing DISK_GB provider, each played by nova's own functional bases for them.
 * expectations.ts merges this table into the one both releases read; nova 31's harness plays them the same.
 */
export const NESTED_SCENARIOS: Record<string, Scenario> = {
  // A server with a plain, an OVS QoS and an SR-IOV QoS port was migrated host1 -> host2 and
  // confirmed, then host2 died and it was evacuated back to host1: host2's tree keeps the instance's
  // source allocations on its root and on two neutron-owned children (the OVS bridge and the PF),
  // until host2's nova-compute starts again (LP 1679750). The leftover is one finding holding all
  // seven rows; its repair bumps all three providers. host2's row still counts the server (info).
  qos_bandwidth: {
    driver: 'driver_nested',
    codes: ['allocation.evacuation-leftover'],
    repairs: [
      ['repair', 'leaks'],
      ['repair', 'usage'],
    ],
    planted: [{note: 'evacuated', key: 'server', code: 'allocation.evacuation-leftover', tree: 'host2', sharing: false, children: 2}],
  },
  // vGPU children and a DISK_GB sharing provider (every root disk there): resizes confirmed and
  // reverted and a cold migration audit clean (no usage.negative-free for the nodes' tiny local disk:
  // the resource tracker counts shared disks in local_gb_used). A confirm whose migration allocation
  // placement refused leaves the migration (status error) holding the source root, its vGPU child and
  // DISK_GB on the sharing provider: one finding for the tree, one for the sharing provider, removed
  // in one unit. An evacuation from dead host3 leaves its root's part (its DISK_GB is shared).
  vgpu_sharing: {
    driver: 'driver_nested',
    codes: ['allocation.evacuation-leftover', 'allocation.migration-finished'],
    repairs: [
      ['repair', 'leaks'],
      ['repair', 'usage'],
    ],
    planted: [
      {note: 'leaked_migration', key: 'migration', code: 'allocation.migration-finished', tree: 'host2', sharing: true, children: 1},
      {note: 'evacuated', key: 'server', code: 'allocation.evacuation-leftover', tree: 'host3', sharing: false, children: 0},
    ],
    // nova-manage placement audit calls the live servers' DISK_GB on shared-disk orphaned, and
    // heal_allocations stops at the first vGPU guest (HealvGPUAllocationNotSupported, exit 8).
    manageWrong: {sharing: true, heal: {exit: 8, message: /with vGPU resource request is not supported/}},
  },
  // Zed's [pci]report_in_placement: a PCI guest migrated and confirmed, one deleted, one evacuated
  // from dead host3: the leftover holds host3's root and the device's child provider, whose only
  // class is CUSTOM_PCI_8086_1533 -- the part nova-manage placement audit never names.
  pci_placement: {
    driver: 'driver_nested',
    codes: ['allocation.evacuation-leftover'],
    repairs: [
      ['repair', 'leaks'],
      ['repair', 'usage'],
    ],
    planted: [{note: 'evacuated', key: 'server', code: 'allocation.evacuation-leftover', tree: 'host3', sharing: false, children: 1, manageBlind: 1}],
  },
}
