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
