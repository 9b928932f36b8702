import {planPinning} from '../../lib/repairs/host-state.js'
import {hostRowFlags, type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class RepairPinning extends RepairCommand<typeof RepairPinning> {
  static override listing = REPAIR_LISTING

  static override summary = 'Rewrite pinned_cpus of each host NUMA cell from the live instances.'

  static override description =
    'Answers pinning.leaked and pinning.unaccounted (pinned_cpus stuck full: NUMATopologyFilter returns 0 hosts). Only the pinned_cpus arrays of compute_nodes.numa_topology change; every other field and the object versions stay byte for byte. Refuses while the host nova-compute service is up and reporting (it owns the row) unless --force.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo --force',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --host cmp-r1-04 --apply',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    ...hostRowFlags,
  }

  async run(): Promise<RepairOutcome> {
    return this.runHostRowPlan(planPinning)
  }
}
