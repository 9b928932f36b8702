import {Flags} from '../../lib/cli/oclif.js'

import {planLeaks} from '../../lib/repairs/leaks.js'
import {type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {requireKnownConsumer} from '../../lib/cli/require-known.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class RepairLeaks extends RepairCommand<typeof RepairLeaks> {
  static override listing = REPAIR_LISTING

  static override summary = 'Remove leaked placement allocations (and with --heal create missing ones).'

  static override description = `Answers the leak findings of \`cloudctl audit leaks\`: allocation.consumer-deleted, consumer-unknown, migration-finished, evacuation-leftover and wrong-provider. Only the rows on the provider tree a finding names are removed; a consumer keeps its allocations elsewhere and its consumers row goes only when nothing is left. With --heal, live instances without allocations get them from their flavor and amount mismatches are corrected (what nova-manage placement heal_allocations does).

Dry run by default (exit 3 when there is something to do, 0 when not). --apply executes after confirmation (--yes in automation): every finding is re-checked on locked rows, writes are guarded by observed values and placement generations, an undo file is written before commit (cloudctl repair undo FILE), exit 4.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> --apply',
    '<%= config.bin %> <%= command.id %> --heal --apply --yes --json',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    heal: Flags.boolean({summary: 'Also create missing allocations from the flavor and fix amount mismatches.'}),
    consumer: Flags.string({summary: 'Only this consumer (instance or migration uuid).'}),
  }

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    requireKnownConsumer(model, this.flags.consumer)
    return this.runPlan(planLeaks(model, {...this.planOptions(snapshot), heal: this.flags.heal, consumer: this.flags.consumer}), snapshot)
  }
}
