import {applySchedulerFlags, bootRequestFlags, explainFlags, parseBootFlags, resolveBootRequest, schedulerFlags} from '../../lib/cli/boot-flags.js'
import type {RecordedRequest} from '../../lib/cli/boot-request.js'
import {releaseFlags, scenarioFlags} from '../../lib/cli/scenario-flags.js'
import type {SimulatedReleaseChoice} from '../../lib/domain/release.js'
import {bootView, viewFor} from '../../lib/cli/scheduler-view.js'
import {SimulateCommand} from '../../lib/cli/simulate-command.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {ENGINE_RELEASES} from '../../lib/engine/config.js'
import {ConfigError, ExitCode} from '../../lib/errors.js'
import {renderBootReport} from '../../lib/output/simulation-formatter.js'
import {simulateBootWhatIf, type BootWhatIfResult} from '../../lib/scenario/boot-what-if.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export type {BootScenario} from '../../lib/scenario/boot-what-if.js'
export type SimulateBootResult = BootWhatIfResult & {recorded_request?: RecordedRequest; scheduler_release: SimulatedReleaseChoice}

export default class SimulateBoot extends SimulateCommand<typeof SimulateBoot> {
  static override listing: ListingSpec = {
    rows: 'instances',
    columns: [{key: 'index'}, {key: 'instance_uuid'}, {key: 'host'}, {key: 'node'}],
    more: [{key: 'allocations'}, {key: 'filters'}, {key: 'claim_failures'}],
  }

  static override description = `Runs nova-api's availability-zone check, nova's request filters, placement's allocation-candidate search, the host filters and weighers and the claim, offline, and explains the outcome stage by stage: the placement query, candidates (and how many the limit cut), "Filter X: N -> M hosts", the weighed hosts and the chosen one(s), or a "0/N hosts are available: ..." summary.

Faithful to nova 26 (Zed) / placement 8 or nova 31 (2025.1) / placement 13: the release the snapshot was captured from, or --release; random choices (host_subset_size, shuffle_best_same_weighed_hosts) use --seed. The --json document is the same for the same input and seed.

The what-if flags (--disable-host, --drain, --set-allocation-ratio, --add-hosts/--like, --apply-repairs) change the snapshot in memory first and show the outcome on the snapshot as captured beside it.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo --flavor m1.small',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor m1.pinned --explain',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor m1.large --num-instances 20 --why compute-12 --json',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor 4 --filters ComputeFilter,NUMATopologyFilter --multiplier ram=-1.0',
    '<%= config.bin %> <%= command.id %> -s demo --nova-conf /etc/nova/nova.conf --flavor m1.pinned --apply-repairs',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --instance 0be2dce7-c85b-4354-82ea-c08524382565 --explain',
  ]

  static override flags = {
    ...sourceFlags,
    ...bootRequestFlags,
    ...schedulerFlags,
    ...explainFlags,
    ...releaseFlags,
    ...scenarioFlags,
  }

  static override summary = 'Simulate where nova would boot a flavor, or why it fails with NoValidHost.'

  async run(): Promise<SimulateBootResult> {
    const f = this.flags
    applySchedulerFlags(this.schedulerConfig(f.filters), f)
    const scenario = this.scenarioOptions()
    const parsed = parseBootFlags(f)
    // From live databases, only what this request reads: request_specs and instance rows of the
    // instances it names (a drain or --apply-repairs reads everything).
    // The query's traits are worked out for every release the snapshot may turn out to be (one whose
    // options are refused is refused again below if the snapshot is of it).
    const configs = ENGINE_RELEASES.flatMap((r) => {
      try {
        return [applySchedulerFlags(this.schedulerConfig(f.filters, r), f)]
      } catch {
        return []
      }
    })
    const snapshot = await this.readSnapshot({...sourceOptionsFrom(f), requestSpecs: parsed.instance !== null, ...viewFor(scenario, bootView(parsed, configs))})
    const release = this.simulatedRelease(snapshot)
    const cfg = applySchedulerFlags(this.schedulerConfig(f.filters, release.release), f)
    const model = buildModel(snapshot)
    const {request, recorded} = resolveBootRequest(parsed, model)
    this.phase('simulating the boot')
    const result: SimulateBootResult = Object.assign(
      simulateBootWhatIf(model, request, cfg, {scenario, seed: f.seed, explain: f.explain, why: f.why, topWeighed: f.top}),
      {scheduler_release: release},
    )
    if (recorded) result.recorded_request = recorded
    this.out(`Scheduler of nova ${release.release} (${release.note})\n`)
    this.out((d) => renderBootReport(result, recorded, d, {explain: f.explain, why: f.why}))
    if (result.refusal) throw new ConfigError(result.refusal.message, result.refusal.hint)
    this.setExit(result.noValidHost ? ExitCode.FINDINGS : ExitCode.OK)
    return result
  }
}
