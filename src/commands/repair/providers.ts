import {Flags} from '../../lib/cli/oclif.js'

import {PROVIDER_STRATEGIES, planProviders} from '../../lib/repairs/providers.js'
import {type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {requireKnownProvider} from '../../lib/cli/require-known.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class RepairProviders extends RepairCommand<typeof RepairProviders> {
  static override listing = REPAIR_LISTING

  static override summary = 'Remove stale resource providers; fix provider uuid mismatches (--strategy rekey|move).'

  static override description = `Answers provider.stale: the provider's leaked allocations are removed first (re-checked as \`repair leaks\` does), then, leaves first, its trait links, aggregate links, inventories and the provider rows. A provider holding allocations that are not leaks (a live instance placed there, a move in progress) is refused and left whole.

Answers provider.uuid-mismatch (after a hostname change nova-compute fails with ResourceProviderCreationFailed) with the strategy chosen by --strategy:
  rekey  the provider takes the compute node's uuid; children, inventories and allocations follow (they refer to it by id)
  move   a new provider with the compute node's uuid and name gets the old root's inventories, traits and aggregate links, the live allocations move to it, the old tree is removed
Restart nova-compute on that host afterwards (the plan says so).

Dry run by default (exit 3 when there is something to do, 0 when not). --apply executes after confirmation (--yes in automation): guarded by the observed rows and provider generations, undo file before commit, exit 4; exit 5 when anything changed under us.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> --strategy rekey --apply',
    '<%= config.bin %> <%= command.id %> --strategy move --provider compute9.example.com --apply --yes',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    strategy: Flags.string({
      summary: 'How to fix provider.uuid-mismatch: rekey (change the provider uuid) or move (new provider, allocations moved).',
      options: [...PROVIDER_STRATEGIES],
    }),
    provider: Flags.string({summary: 'Only the finding of this provider (uuid) or host/node name.'}),
  }

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    requireKnownProvider(model, this.flags.provider)
    const strategy = this.flags.strategy as (typeof PROVIDER_STRATEGIES)[number] | undefined
    return this.runPlan(planProviders(model, {...this.planOptions(snapshot), strategy, provider: this.flags.provider}), snapshot)
  }
}
