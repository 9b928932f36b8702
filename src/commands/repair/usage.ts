import {planUsage} from '../../lib/repairs/host-state.js'
import {hostRowFlags, type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class RepairUsage extends RepairCommand<typeof RepairUsage> {
  static override listing = REPAIR_LISTING

  static override summary = 'Recompute compute node usage columns from the live instances.'

  static override description =
    'Answers usage.node-drift: vcpus_used, memory_mb_used, local_gb_used, free_ram_mb, free_disk_gb and running_vms as update_available_resource would compute them from the live instances. Refuses while the host nova-compute service is up and reporting unless --force.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --host cmp-r2-03 --apply',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    ...hostRowFlags,
  }

  async run(): Promise<RepairOutcome> {
    return this.runHostRowPlan(planUsage)
  }
}
