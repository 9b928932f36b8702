/**
 * The scenarios played on the releases between the oldest (Zed, test/realnova) and the newest
 * (2026.2): every one of them on those two, this fixed subset on 2025.1 and 2026.1, so a fresh CI
 * machine stays within its budget. The subset holds the scenarios where a release's nova differs
 * (hostname_change: nova 27+ refuses a renamed compute), where its scheduler's verdict is checked
 * (pinned_leak: the blocked boot, simulated and booted again after the repairs), where its
 * nova-manage judges a repair (cell0_duplicate: verify_instance) and a clean cloud.
 * CLOUDCTL_REALNOVA_ALL=1 plays all nine on every release.
 */
export const SUBSET_BETWEEN: string[] | undefined =
  process.env.CLOUDCTL_REALNOVA_ALL === '1' ? undefined : ['healthy', 'hostname_change', 'pinned_leak', 'cell0_duplicate']

/** The nine scenarios of driver.py: what 2026.2 plays (the newest release; Zed plays every one). */
export const DRIVER_NINE = [
  'healthy',
  'in_flight',
  'evacuated_host_down',
  'deleted_while_down',
  'service_deleted',
  'hostname_change',
  'pinned_leak',
  'usage_drift',
  'cell0_duplicate',
]

/**
 * 2025.1 also plays the nested and sharing trees (driver_nested.py), whose suite checks were written
 * against nova 31 too; the other kinds of compute (driver_computes.py) were played on nova 31 by hand
 * (test/realnova/README.md) and run on Zed in CI. CLOUDCTL_REALNOVA_ALL=1 plays everything.
 */
export const SUBSET_2025_1: string[] | undefined = SUBSET_BETWEEN && [...SUBSET_BETWEEN, 'qos_bandwidth', 'vgpu_sharing', 'pci_placement']
