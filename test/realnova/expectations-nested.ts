import type {Scenario} from './expectations.js'

/**
 * The scenarios of driver_nested.py: nested provider trees (neutron's bandwidth providers, vGPU
 * children) and a sharing DISK_GB provider, each played by nova's own functional bases for them.
 * expectations.ts merges this table into the one both releases read (Zed only, for now).
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
    repairs: [['repair', 'leaks'], ['repair', 'usage']],
    planted: [{note: 'evacuated', key: 'server', code: 'allocation.evacuation-leftover', tree: 'host2', sharing: false, children: 2}],
  },
}
