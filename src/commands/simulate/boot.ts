import {Flags} from '@oclif/core'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {bootRequestFromSpec, type RecordedRequest} from '../../lib/cli/boot-request.js'
import {scenarioFlags, scenarioOptionsFrom, schedulerConfigFrom} from '../../lib/cli/scenario-flags.js'
import {MAX_NUM_INSTANCES, NUM_INSTANCES_HELP} from '../../lib/cli/limits.js'
import {stderrProgress} from '../../lib/cli/progress-printer.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {availableZones} from '../../lib/capacity/index.js'
import {buildModel} from '../../lib/domain/model.js'
import {CloudctlError, ConfigError, ExitCode, NotFoundError} from '../../lib/errors.js'
import {parseMultiplier, simulateBoot, type BootRequest, type SchedulerConfig, type SimulationResult} from '../../lib/engine/index.js'
import {renderScenarioChanges} from '../../lib/output/capacity-formatter.js'
import {renderSimulation} from '../../lib/output/simulation-formatter.js'
import {prepareScenario, scenarioIsEmpty, type DrainReport, type RepairEffect, type ScenarioOptions} from '../../lib/scenario/index.js'
import {loadSnapshot} from '../../lib/snapshot/load.js'

/** Present only with what-if flags: what changed, and the outcome on the snapshot as captured. */
export interface BootScenario {
  options: ScenarioOptions
  changes: string[]
  drains: DrainReport[]
  repairs: Omit<RepairEffect, 'snapshot'> | null
  /** The same request on the snapshot as captured. */
  before: {placedAll: boolean; placed: number; summary: string}
}

export type SimulateBootResult = SimulationResult & {scenario?: BootScenario; recorded_request?: RecordedRequest}

function keyValues(list: string[] | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of list ?? []) {
    const i = item.indexOf('=')
    if (i <= 0) throw new ConfigError(`${what} "${item}" is not KEY=VALUE`)
    out[item.slice(0, i)] = item.slice(i + 1)
  }
  return out
}

export default class SimulateBoot extends CloudctlCommand<typeof SimulateBoot> {
  static override description = `Runs nova's request filters, placement's allocation-candidate search, the host filters and weighers and the claim, offline, and explains the outcome: the placement query, candidates (and how many the limit cut), "Filter X: N -> M hosts", the weighed hosts and the chosen one(s), or a "0/N hosts are available: ..." summary.

Faithful to nova 26 (Zed) / placement 8 by default; random choices (host_subset_size, shuffle_best_same_weighed_hosts) use --seed.

The what-if flags (--disable-host, --drain, --set-allocation-ratio, --add-hosts/--like, --apply-repairs) change the snapshot in memory first and show the outcome on the snapshot as captured beside it.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot examples/demo-cloud.yaml --flavor m1.small',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor m1.pinned --explain',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor m1.large --num-instances 20 --why compute-12 --json',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --flavor 4 --filters ComputeFilter,NUMATopologyFilter --multiplier ram=-1.0',
    '<%= config.bin %> <%= command.id %> -s examples/demo-cloud.yaml --nova-conf examples/nova.conf --flavor m1.pinned --apply-repairs',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --instance 0be2dce7-c85b-4354-82ea-c08524382565 --explain',
  ]

  static override flags = {
    ...sourceFlags,
    flavor: Flags.string({summary: 'Flavor name, flavorid or id (or --instance).', exclusive: ['instance']}),
    instance: Flags.string({
      summary: 'Replay the boot nova recorded for this instance (nova_api.request_specs): its flavor as it was then, image, AZ, hints, server group, forced/requested destination, project/user, num_instances. Request flags given beside it override.',
      exclusive: ['flavor'],
    }),
    'extra-spec': Flags.string({summary: 'Override or add a flavor extra spec: KEY=VALUE. Repeatable.', multiple: true}),
    'image-property': Flags.string({summary: 'Image property KEY=VALUE (hw_architecture, hw_cpu_policy, trait:NAME=required...). Repeatable.', multiple: true}),
    'image-id': Flags.string({summary: 'Image id (for IsolatedHostsFilter).'}),
    'image-disk-format': Flags.string({summary: 'Image disk_format (for query_placement_for_image_type_support).'}),
    'availability-zone': Flags.string({summary: 'Requested availability zone.'}),
    'num-instances': Flags.integer({summary: NUM_INSTANCES_HELP, default: 1, min: 1, max: MAX_NUM_INSTANCES}),
    hint: Flags.string({summary: 'Scheduler hint group=UUID|same_host=UUID|different_host=UUID. Repeatable.', multiple: true}),
    project: Flags.string({summary: 'Project id of the request (tenant isolation, AggregateMultiTenancyIsolation).'}),
    user: Flags.string({summary: 'User id of the request.'}),
    'boot-from-volume': Flags.boolean({summary: 'Boot from volume: no root disk is requested from placement.'}),
    host: Flags.string({summary: 'Requested destination host (API 2.74).'}),
    node: Flags.string({summary: 'Requested destination node (API 2.74).'}),
    filters: Flags.string({summary: 'Comma-separated enabled_filters (default: nova.conf, else Zed defaults).'}),
    weigher: Flags.string({summary: 'Weigher class name to use (repeatable; default: all weighers).', multiple: true}),
    multiplier: Flags.string({summary: 'Weight multiplier NAME=VALUE (ram, cpu, disk, io_ops, pci, soft_affinity, soft_anti_affinity, build_failure, cross_cell_move). Repeatable.', multiple: true}),
    'host-subset-size': Flags.integer({summary: '[filter_scheduler] host_subset_size.', min: 1}),
    'max-placement-results': Flags.integer({summary: '[scheduler] max_placement_results.', min: 1}),
    'shuffle-best-same-weighed-hosts': Flags.boolean({summary: '[filter_scheduler] shuffle_best_same_weighed_hosts.', allowNo: true}),
    seed: Flags.integer({summary: 'Seed of the random choices (printed in the output).', default: 42}),
    explain: Flags.boolean({summary: 'Show the stage and reason for every host.'}),
    why: Flags.string({summary: 'Show the stage and reason for this host (name or node). Repeatable.', multiple: true}),
    top: Flags.integer({summary: 'How many weighed hosts to show.', default: 5, min: 1}),
    ...scenarioFlags,
  }

  static override summary = 'Simulate where nova would boot a flavor, or why it fails with NoValidHost.'

  async run(): Promise<SimulateBootResult> {
    const f = this.flags
    const cfg = this.schedulerConfig()
    const scenario = scenarioOptionsFrom(f)
    const hints: BootRequest['hints'] = {}
    for (const [k, v] of Object.entries(keyValues(f.hint, 'hint'))) {
      if (k === 'group') hints.group = v
      else if (k === 'same_host') hints.same_host = [...(hints.same_host ?? []), v]
      else if (k === 'different_host') hints.different_host = [...(hints.different_host ?? []), v]
      else throw new ConfigError(`unknown scheduler hint "${k}"`, 'Supported hints: group, same_host, different_host.')
    }
    if (!f.flavor && !f.instance) {
      throw new CloudctlError('Missing required flag flavor', {exitCode: ExitCode.CONFIG, code: 'UsageError', hint: 'See `cloudctl simulate boot --help`; --instance UUID replays the boot nova recorded for an instance instead.'})
    }
    let request: BootRequest = {
      flavor: f.flavor ?? '',
      extraSpecs: keyValues(f['extra-spec'], 'extra spec'),
      imageProperties: keyValues(f['image-property'], 'image property'),
      imageId: f['image-id'] ?? null,
      imageDiskFormat: f['image-disk-format'] ?? null,
      availabilityZone: f['availability-zone'] ?? null,
      numInstances: f['num-instances'],
      hints,
      projectId: f.project,
      userId: f.user,
      bootFromVolume: f['boot-from-volume'],
      host: f.host ?? null,
      node: f.node ?? null,
    }
    // request_specs are read from live databases only when a replay needs them (large).
    const snapshot = await loadSnapshot({...sourceOptionsFrom(f), requestSpecs: Boolean(f.instance)}, stderrProgress())
    let model = buildModel(snapshot)
    let recorded: RecordedRequest | undefined
    if (f.instance) {
      const replay = bootRequestFromSpec(model, f.instance.trim())
      recorded = replay.recorded
      request = overrideRecorded(replay.request, request, f)
    }
    if (request.availabilityZone && !recorded) {
      const zones = availableZones(model, cfg)
      if (!zones.includes(request.availabilityZone)) {
        throw new ConfigError(`availability zone "${request.availabilityZone}" is not available: nova-api refuses the request before scheduling`, `Zones with an enabled nova-compute: ${zones.join(', ') || '(none)'}`)
      }
    }
    let result: SimulateBootResult
    const options = {seed: f.seed, explain: Boolean(f.explain || f.why?.length), topWeighed: f.top}
    if (scenarioIsEmpty(scenario)) {
      result = simulateBoot(model, request, cfg, options)
    } else {
      const prepared = prepareScenario(snapshot, scenario, cfg, {seed: f.seed})
      const before = simulateBoot(model, request, cfg, {seed: f.seed})
      model = prepared.model
      result = simulateBoot(model, request, cfg, {...options, state: prepared.state})
      result.scenario = {
        options: scenario,
        changes: prepared.changes,
        drains: prepared.drains,
        repairs: prepared.repairs,
        before: {placedAll: before.placedAll, placed: before.instances.filter((o) => o.host !== null).length, summary: before.summary},
      }
    }
    if (f.why?.length) {
      const known = new Set(model.liveComputeNodes.flatMap((cn) => [cn.host, cn.hypervisor_hostname]))
      const missing = f.why.filter((h) => !known.has(h))
      if (missing.length > 0) throw new NotFoundError(`host ${missing.join(', ')} is not a compute node of this snapshot`, 'See `cloudctl snapshot show` for the hosts.')
      if (this.jsonEnabled()) result.verdicts = result.verdicts.filter((v) => f.why?.includes(v.host) || f.why?.includes(v.node))
    }
    if (recorded) {
      result.recorded_request = recorded
      this.out(renderRecorded(recorded))
    }
    if (result.scenario) {
      const sc = result.scenario
      this.out([...renderScenarioChanges(sc), `  on the snapshot as captured: ${sc.before.summary}`, ''].join('\n'))
    }
    this.out(renderSimulation(result, {explain: f.explain, why: f.why}))
    this.setExit(result.noValidHost ? ExitCode.FINDINGS : ExitCode.OK)
    return result
  }

  private schedulerConfig(): SchedulerConfig {
    const f = this.flags
    const cfg = schedulerConfigFrom(f['nova-conf'])
    if (f.filters !== undefined) cfg.enabled_filters = f.filters.split(',').map((s) => s.trim()).filter(Boolean)
    if (f.weigher?.length) cfg.weight_classes = f.weigher
    for (const m of f.multiplier ?? []) {
      const r = parseMultiplier(m)
      if ('error' in r) throw new ConfigError(`--multiplier ${r.error}`)
      ;(cfg as unknown as Record<string, number>)[r.option] = r.value
    }
    if (f['host-subset-size'] !== undefined) cfg.host_subset_size = f['host-subset-size']
    if (f['max-placement-results'] !== undefined) cfg.max_placement_results = f['max-placement-results']
    if (f['shuffle-best-same-weighed-hosts'] !== undefined) cfg.shuffle_best_same_weighed_hosts = f['shuffle-best-same-weighed-hosts']
    return cfg
  }
}

/** Request flags given beside --instance change the recorded request (what if it had asked for...). */
function overrideRecorded(recorded: BootRequest, fromFlags: BootRequest, f: {'extra-spec'?: string[]; 'image-property'?: string[]; 'availability-zone'?: string; host?: string; node?: string; hint?: string[]; project?: string; user?: string; 'boot-from-volume'?: boolean; 'image-id'?: string; 'image-disk-format'?: string}): BootRequest {
  const out: BootRequest = {...recorded}
  if (f['extra-spec']?.length) out.extraSpecs = {...fromFlags.extraSpecs}
  if (f['image-property']?.length) out.imageProperties = {...recorded.imageProperties, ...fromFlags.imageProperties}
  if (f['image-id'] !== undefined) out.imageId = fromFlags.imageId
  if (f['image-disk-format'] !== undefined) out.imageDiskFormat = fromFlags.imageDiskFormat
  if (f['availability-zone'] !== undefined) out.availabilityZone = fromFlags.availabilityZone
  if (f.host !== undefined || f.node !== undefined) {
    out.host = fromFlags.host
    out.node = fromFlags.node
  }
  if (f.hint?.length) out.hints = fromFlags.hints
  if (f.project !== undefined) out.projectId = fromFlags.projectId
  if (f.user !== undefined) out.userId = fromFlags.userId
  if (f['boot-from-volume']) out.bootFromVolume = true
  return out
}

function renderRecorded(r: RecordedRequest): string {
  const fl = r.flavor
  const specs = Object.entries(fl.extra_specs).map(([k, v]) => `${k}=${v}`)
  const props = Object.entries(r.image.properties).map(([k, v]) => `${k}=${v}`)
  const hints = Object.entries(r.scheduler_hints).map(([k, v]) => `${k}=${v.join(',')}`)
  const lines = [
    `Replaying the request nova recorded for instance ${r.instance_uuid} (nova_api.request_specs):`,
    `  flavor ${fl.name ?? fl.flavorid ?? '?'} as recorded: ${fl.vcpus} vCPU, ${fl.memory_mb} MB RAM, root ${fl.root_gb} GB, ephemeral ${fl.ephemeral_gb} GB, swap ${fl.swap} MB${specs.length ? `; ${specs.join(' ')}` : ''}`,
    `  image ${r.image.id ?? '(none: boot from volume)'}${props.length ? `; ${props.join(' ')}` : ''}`,
    `  availability zone ${r.availability_zone ?? '(any)'}, project ${r.project_id ?? '?'}, user ${r.user_id ?? '?'}, num_instances ${r.num_instances}`,
  ]
  if (hints.length || r.instance_group) lines.push(`  scheduler hints ${hints.join(' ') || '(none)'}${r.instance_group ? `; server group ${r.instance_group}` : ''}`)
  if (r.requested_destination) lines.push(`  requested destination ${r.requested_destination.host ?? '*'}${r.requested_destination.node ? `/${r.requested_destination.node}` : ''}`)
  if (r.force_hosts.length || r.force_nodes.length) lines.push(`  forced to ${[...r.force_hosts, ...r.force_nodes].join(', ')} (filters skipped, as nova does)`)
  if (r.ignore_hosts.length) lines.push(`  ignore_hosts ${r.ignore_hosts.join(', ')}`)
  if (r.not_simulated.length) lines.push(`  not simulated: ${r.not_simulated.join('; ')}`)
  if (r.holds_allocations_on.length) lines.push(`  note: the instance still holds allocations on ${r.holds_allocations_on.join(', ')}; the replay counts them as used`)
  return `${lines.join('\n')}\n`
}
