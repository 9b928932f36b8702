import {Flags} from '../../lib/cli/oclif.js'

import {parseMix} from '../../lib/capacity/index.js'
import {capacityWhatIf, type CapacityResult} from '../../lib/capacity/what-if.js'
import {releaseFlags, scenarioFlags} from '../../lib/cli/scenario-flags.js'
import type {SimulatedReleaseChoice} from '../../lib/domain/release.js'
import {capacityView, viewFor} from '../../lib/cli/scheduler-view.js'
import {SimulateCommand} from '../../lib/cli/simulate-command.js'
import {inputFilesOf, sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {ConfigError} from '../../lib/errors.js'
import {renderCapacityHtml} from '../../lib/output/capacity-html.js'
import {renderCapacity} from '../../lib/output/capacity-formatter.js'
import {refuseCollidingPaths, writeFileAtomic} from '../../lib/util/atomic-file.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export type SimulateCapacityResult = CapacityResult & {scheduler_release?: SimulatedReleaseChoice}

export default class SimulateCapacity extends SimulateCommand<typeof SimulateCapacity> {
  static override listing: ListingSpec = {
    rows: 'flavors',
    columns: [
      {key: 'flavor'},
      {key: 'vcpus', label: 'vCPU'},
      {key: 'memory_mb', label: 'RAM MB'},
      {key: 'disk_gb', label: 'disk GB'},
      {key: 'fits'},
      {key: 'naive', label: 'naive ÷'},
      {key: 'overestimate'},
      {key: 'limits', label: 'limited by (hosts)'},
    ],
    more: [{key: 'resources'}, {key: 'method'}, {key: 'by_az'}, {key: 'by_aggregate'}, {key: 'notes'}, {key: 'error'}],
    open: ['resources'],
  }

  static override description = `For each flavor (default: every public, enabled flavor), how many more instances fit, counted with the scheduler engine and consumption (filters, NUMA pinning, server groups, traits, max_unit, allocation ratios), not by division; the naive division figure is shown beside it. Broken down per availability zone and aggregate, per host with --per-host (with what refuses the next instance there).

The what-if flags change the snapshot in memory first (nothing is written anywhere) and show the capacity beside the snapshot's: --apply-repairs shows what leaked allocations and stuck pinned CPUs cost.

Scheduler options (enabled_filters, allocation ratios, max_placement_results...) come from --nova-conf, else Zed's defaults. See docs/capacity.md.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor m1.large --flavor m1.pinned --per-host',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --availability-zone az1 --mix m1.small=70%,m1.large=30%',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --apply-repairs --html capacity.html',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --drain cmp-12 --set-allocation-ratio VCPU=8.0@batch --json',
  ]

  static override flags = {
    ...sourceFlags,
    flavor: Flags.string({summary: 'Flavor name, flavorid or id (repeatable; default: every public, enabled flavor).', multiple: true}),
    'availability-zone': Flags.string({summary: 'Request the flavors in this availability zone and count only its hosts.'}),
    aggregate: Flags.string({summary: 'Count only the hosts of this nova aggregate (name or uuid).'}),
    'per-host': Flags.boolean({summary: 'Show every host: what fits there and what refuses the next instance.'}),
    mix: Flags.string({
      summary: 'Capacity for flavors booted in proportion, e.g. m1.small=50%,m1.large=50%.',
      description: 'Percentages must add up to 100%; plain numbers without % are weights (m1.small=5,m1.large=4 is 5:4).',
    }),
    filters: Flags.string({summary: 'Comma-separated enabled_filters (default: --nova-conf, else Zed defaults).'}),
    project: Flags.string({summary: 'Project id of the requests (tenant isolation, AggregateMultiTenancyIsolation).'}),
    hint: Flags.string({summary: 'Scheduler hint group=UUID (count what the group still admits).'}),
    seed: Flags.integer({summary: 'Seed of the random choices (first member of an affinity group, --mix, --drain).', default: 42}),
    html: Flags.string({summary: 'Also write a standalone HTML report (charts per AZ, no network needed) to this file.'}),
    ...releaseFlags,
    ...scenarioFlags,
  }

  static override summary = 'How many more instances of each flavor fit, and where (with what-if scenarios).'

  async run(): Promise<SimulateCapacityResult> {
    const f = this.flags
    this.schedulerConfig(f.filters)
    const scenario = this.scenarioOptions()
    const mix = f.mix === undefined ? undefined : parseMix(checkMixShares(f.mix))
    let group: string | undefined
    if (f.hint !== undefined) {
      const m = /^group=(.+)$/.exec(f.hint)
      if (!m) throw new ConfigError(`--hint "${f.hint}" is not group=UUID`, 'simulate capacity takes the group hint only; see simulate boot for the others.')
      group = m[1]
    }
    await refuseCollidingPaths([{flag: '--html', path: f.html}], inputFilesOf(f))
    const snapshot = await this.readSnapshot({...sourceOptionsFrom(f), ...viewFor(scenario, capacityView(group))})
    const release = this.simulatedRelease(snapshot)
    const config = this.schedulerConfig(f.filters, release.release)
    this.phase('counting capacity')
    const {report, scenario: compared} = capacityWhatIf(snapshot, scenario, {
      config,
      flavors: f.flavor,
      availabilityZone: f['availability-zone'] ?? null,
      aggregate: f.aggregate ?? null,
      perHost: f['per-host'],
      hostUsage: f.html !== undefined || f['per-host'],
      mix,
      seed: f.seed,
      request: {projectId: f.project, ...(group ? {hints: {group}} : {})},
    })
    const result: SimulateCapacityResult = {...report, seed: f.seed, scenario: compared, scheduler_release: release}
    if (f.html !== undefined) {
      // The writer of every other file: no dangling symlink followed, no file rewritten in place.
      const file = await writeFileAtomic(f.html, renderCapacityHtml(result), 'HTML report', '--html')
      result.html = file
      if (this.jsonEnabled()) this.note(`HTML report written to ${file}`)
    }
    // The per-host usage feeds the HTML charts; --json carries it only with --per-host.
    if (!f['per-host']) delete result.hostUsage
    this.out(`Scheduler of nova ${release.release} (${release.note})\n`)
    this.out((d) => renderCapacity(result, d, {bars: Boolean(process.stdout.isTTY)}))
    return result
  }
}

/**
 * Percentages that do not add up to 100 were rescaled silently (50%+40% read as 55.6%/44.4%): a typo
 * then changes the answer. Shares in % must total 100; plain numbers stay weights, as documented.
 */
function checkMixShares(text: string): string {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
  const pct = parts.filter((p) => p.endsWith('%'))
  if (pct.length === 0) return text
  const example = 'e.g. --mix m1.small=60%,m1.large=40%, or weights without %: --mix m1.small=3,m1.large=2'
  if (pct.length !== parts.length) throw new ConfigError(`--mix "${text}" mixes percentages and weights`, `Use one or the other: ${example}`)
  const total = pct.reduce((sum, p) => sum + Number(p.slice(p.lastIndexOf('=') + 1, -1)), 0)
  if (Number.isFinite(total) && Math.abs(total - 100) > 0.01)
    throw new ConfigError(`--mix shares add up to ${Number(total.toFixed(2))}%, not 100%`, `Give shares that total 100% (${example}).`)
  return text
}
