/**
 * `simulate boot` / `simulate migrate` flags -> a BootRequest and the scheduler configuration.
 * One path for both kinds of request: flags alone (--flavor ...), or the request nova recorded for an
 * instance (--instance UUID, boot-request.ts) with the request flags given beside it layered over.
 */
import {Flags} from './oclif.js'

import type {CloudModel} from '../domain/model.js'
import {parseMultiplier, type BootRequest, type SchedulerConfig} from '../engine/index.js'
import {CloudctlError, ConfigError, ExitCode} from '../errors.js'
import {bootRequestFromSpec, type RecordedRequest} from './boot-request.js'
import {MAX_COUNT, MAX_NUM_INSTANCES, NUM_INSTANCES_HELP} from './limits.js'

/** The flags that describe what is asked for (a new boot, or changes to a recorded one). */
export const bootRequestFlags = {
  flavor: Flags.string({summary: 'Flavor name, flavorid or id (or --instance).', exclusive: ['instance']}),
  instance: Flags.string({
    summary:
      'Replay the boot nova recorded for this instance (nova_api.request_specs): its flavor as it was then, image, AZ, hints, server group, forced/requested destination, project/user, num_instances. Request flags given beside it override.',
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
}

/** The scheduler options a run may change from --nova-conf, and the seed of its random choices. */
export const schedulerFlags = {
  filters: Flags.string({summary: 'Comma-separated enabled_filters (default: nova.conf, else Zed defaults).'}),
  weigher: Flags.string({summary: 'Weigher class name to use (repeatable; default: all weighers).', multiple: true}),
  multiplier: Flags.string({
    summary: 'Weight multiplier NAME=VALUE (ram, cpu, disk, io_ops, pci, soft_affinity, soft_anti_affinity, build_failure, cross_cell_move). Repeatable.',
    multiple: true,
  }),
  'host-subset-size': Flags.integer({summary: '[filter_scheduler] host_subset_size.', min: 1, max: MAX_COUNT}),
  'max-placement-results': Flags.integer({summary: '[scheduler] max_placement_results.', min: 1, max: MAX_COUNT}),
  'shuffle-best-same-weighed-hosts': Flags.boolean({summary: '[filter_scheduler] shuffle_best_same_weighed_hosts.', allowNo: true}),
  seed: Flags.integer({summary: 'Seed of the random choices (printed in the output).', default: 42}),
}

/** How much of the decision to show. */
export const explainFlags = {
  explain: Flags.boolean({summary: 'Show the stage and reason for every host.'}),
  why: Flags.string({summary: 'Show the stage and reason for this host (name or node). Repeatable.', multiple: true}),
  top: Flags.integer({summary: 'How many weighed hosts to show.', default: 5, min: 1}),
}

export interface SchedulerFlagValues {
  weigher?: string[]
  multiplier?: string[]
  'host-subset-size'?: number
  'max-placement-results'?: number
  'shuffle-best-same-weighed-hosts'?: boolean
}

export interface BootFlagValues {
  flavor?: string
  instance?: string
  'extra-spec'?: string[]
  'image-property'?: string[]
  'image-id'?: string
  'image-disk-format'?: string
  'availability-zone'?: string
  'num-instances': number
  hint?: string[]
  project?: string
  user?: string
  'boot-from-volume'?: boolean
  host?: string
  node?: string
}

/** The scheduler flags over a configuration (--nova-conf's, else Zed's defaults; --filters already applied). */
export function applySchedulerFlags(cfg: SchedulerConfig, f: SchedulerFlagValues): SchedulerConfig {
  if (f.weigher?.length) cfg.weight_classes = f.weigher
  for (const m of f.multiplier ?? []) {
    const r = parseMultiplier(m)
    if ('error' in r)
      throw new ConfigError(
        `--multiplier ${r.error}`,
        'Give --multiplier NAME=NUMBER, e.g. --multiplier ram_weight_multiplier=2.0 or --multiplier ram=-1 (the names are in --help).',
      )
    ;(cfg as unknown as Record<string, number>)[r.option] = r.value
  }
  if (f['host-subset-size'] !== undefined) cfg.host_subset_size = f['host-subset-size']
  if (f['max-placement-results'] !== undefined) cfg.max_placement_results = f['max-placement-results']
  if (f['shuffle-best-same-weighed-hosts'] !== undefined) cfg.shuffle_best_same_weighed_hosts = f['shuffle-best-same-weighed-hosts']
  return cfg
}

/** How each KEY=VALUE flag is written, for the hint of a value without '='. */
const KEY_VALUE_EXAMPLES: Record<string, string> = {
  hint: '--hint group=UUID, --hint same_host=UUID or --hint different_host=UUID',
  'extra spec': '--extra-spec hw:cpu_policy=dedicated',
  'image property': '--image-property hw_architecture=x86_64',
}

export function keyValues(list: string[] | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of list ?? []) {
    const i = item.indexOf('=')
    if (i <= 0) throw new ConfigError(`${what} "${item}" is not KEY=VALUE`, `Give it as KEY=VALUE, e.g. ${KEY_VALUE_EXAMPLES[what] ?? `${what} KEY=VALUE`}.`)
    out[item.slice(0, i)] = item.slice(i + 1)
  }
  return out
}

export function parseHints(list: string[] | undefined): NonNullable<BootRequest['hints']> {
  const hints: NonNullable<BootRequest['hints']> = {}
  for (const [k, v] of Object.entries(keyValues(list, 'hint'))) {
    if (k === 'group') hints.group = v
    else if (k === 'same_host') hints.same_host = [...(hints.same_host ?? []), v]
    else if (k === 'different_host') hints.different_host = [...(hints.different_host ?? []), v]
    else throw new ConfigError(`unknown scheduler hint "${k}"`, 'Supported hints: group, same_host, different_host.')
  }
  return hints
}

/** The flags read before anything is loaded: a bad value fails before the databases are read. */
export interface ParsedBootFlags {
  instance: string | null
  /** The request the flags alone describe (a new boot). */
  request: BootRequest
  /** Only the fields a request flag set: laid over a recorded request. */
  overrides: Partial<BootRequest>
}

export function parseBootFlags(f: BootFlagValues): ParsedBootFlags {
  const hints = parseHints(f.hint)
  if (!f.flavor && !f.instance) {
    throw new CloudctlError('Missing required flag flavor', {
      exitCode: ExitCode.CONFIG,
      code: 'UsageError',
      hint: 'See `cloudctl simulate boot --help`; --instance UUID replays the boot nova recorded for an instance instead.',
    })
  }
  const request: BootRequest = {
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
    validateZone: true,
  }
  const o: Partial<BootRequest> = {}
  if (f['extra-spec']?.length) o.extraSpecs = request.extraSpecs
  if (f['image-property']?.length) o.imageProperties = request.imageProperties
  if (f['image-id'] !== undefined) o.imageId = request.imageId
  if (f['image-disk-format'] !== undefined) o.imageDiskFormat = request.imageDiskFormat
  if (f['availability-zone'] !== undefined) o.availabilityZone = request.availabilityZone
  if (f.host !== undefined || f.node !== undefined) Object.assign(o, {host: request.host, node: request.node})
  if (f.hint?.length) o.hints = hints
  if (f.project !== undefined) o.projectId = request.projectId
  if (f.user !== undefined) o.userId = request.userId
  if (f['boot-from-volume']) o.bootFromVolume = true
  return {instance: f.instance?.trim() ?? null, request, overrides: o}
}

/**
 * The request to simulate: the flags' own, or the one nova recorded for --instance with the flags
 * given beside it over it (what if it had asked for...); image properties add to the recorded ones.
 */
export function resolveBootRequest(parsed: ParsedBootFlags, model: CloudModel): {request: BootRequest; recorded?: RecordedRequest} {
  if (parsed.instance === null) return {request: parsed.request}
  const replay = bootRequestFromSpec(model, parsed.instance)
  const o = parsed.overrides
  const request: BootRequest = {...replay.request, ...o, validateZone: false}
  if (o.imageProperties) request.imageProperties = {...replay.request.imageProperties, ...o.imageProperties}
  return {request, recorded: replay.recorded}
}
