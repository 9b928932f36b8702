import {Flags} from '../../lib/cli/oclif.js'

import {planAggregates} from '../../lib/repairs/host-state.js'
import {type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class RepairAggregates extends RepairCommand<typeof RepairAggregates> {
  static override listing = REPAIR_LISTING

  static override summary = 'Add missing placement aggregate links of nova host aggregates (--prune removes extra ones).'

  static override description =
    "Answers aggregate.missing-in-placement (and with --prune aggregate.extra-in-placement) the way nova's aggregate API writes placement: the provider joins (or leaves) the placement aggregate of the same uuid, and its generation is bumped."

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --prune --apply',
  ]

  static override flags = {...repairFlags, ...scopeFlags, prune: Flags.boolean({summary: 'Also remove provider aggregate links nova does not know.'})}

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    return this.runPlan(planAggregates(model, {...this.planOptions(snapshot), prune: this.flags.prune}), snapshot)
  }
}
