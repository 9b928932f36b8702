import {Flags} from '../../lib/cli/oclif.js'

import {planDiscoverHosts} from '../../lib/repairs/discover-hosts.js'
import {type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class CellsDiscoverHosts extends RepairCommand<typeof CellsDiscoverHosts> {
  static override listing = REPAIR_LISTING

  static override summary = 'Create host mappings for unmapped compute hosts and set compute_nodes.mapped.'

  static override description = `The counterpart of \`nova-manage cell_v2 discover_hosts\`: a host_mapping for every compute host without one (by live compute node, or with --by-service by live nova-compute service), and compute_nodes.mapped = 1. Unlike nova-manage, hosts whose nodes already say mapped = 1 but have no host mapping are mapped too (nova-manage reports "Found 0 unmapped computes" for them forever). Host mappings pointing at the wrong cell are corrected; with --prune, host mappings of hosts running nova-compute in no cell are removed. --cell and --host work as on every repair: --host H plans only the host mapping of H (with --prune, a stale one named H).`

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --host cmp-r1-04 --prune',
    '<%= config.bin %> <%= command.id %> --by-service --apply',
    '<%= config.bin %> <%= command.id %> --prune --apply --yes',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    'by-service': Flags.boolean({summary: 'Discover by nova-compute services instead of compute nodes (ironic).'}),
    prune: Flags.boolean({summary: 'Also remove host mappings of hosts that run nova-compute in no cell.'}),
  }

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    // --cell and --host as every repair checks them: a name the cloud does not know is exit 2.
    return this.runPlan(planDiscoverHosts(model, {...this.planOptions(snapshot), byService: this.flags['by-service'], prune: this.flags.prune}), snapshot)
  }
}
