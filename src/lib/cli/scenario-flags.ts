import {Flags, type Interfaces} from './oclif.js'

import {defaultAvailabilityZone, readNovaConf} from '../config/nova-conf.js'
import {simulatedRelease, type SimulatedRelease, type SimulatedReleaseChoice, type SnapshotRelease} from '../domain/release.js'
import {applyNovaConf, defaultSchedulerConfig, ENGINE_RELEASES, type SchedulerConfig} from '../engine/index.js'
import {ConfigError} from '../errors.js'
import {ADD_HOSTS_HELP, MAX_ADD_HOSTS} from './limits.js'
import {parseAllocationRatio, type ScenarioOptions} from '../scenario/index.js'

/**
 * What-if flags shared by `simulate boot` and `simulate capacity`; the transforms themselves are
 * pure (src/lib/scenario).
 */
export const scenarioFlags = {
  'disable-host': Flags.string({summary: "What if this host's nova-compute were disabled. Repeatable.", multiple: true, helpGroup: 'WHAT-IF'}),
  drain: Flags.string({
    summary:
      'What if this host were drained: it is disabled and its instances re-placed through the engine first (those that cannot be are reported). Repeatable.',
    multiple: true,
    helpGroup: 'WHAT-IF',
  }),
  'set-allocation-ratio': Flags.string({
    summary: 'What if RC=RATIO[@AGGREGATE], e.g. VCPU=4.0 or MEMORY_MB=1.0@gpu. Repeatable.',
    multiple: true,
    helpGroup: 'WHAT-IF',
  }),
  // The pairing is checked in scenarioOptionsFrom: oclif's dependsOn error is several lines long.
  'add-hosts': Flags.integer({summary: ADD_HOSTS_HELP, min: 1, max: MAX_ADD_HOSTS, helpGroup: 'WHAT-IF'}),
  like: Flags.string({summary: 'The host --add-hosts copies.', helpGroup: 'WHAT-IF'}),
  'apply-repairs': Flags.boolean({
    summary: "Simulate on the snapshot as it would be after cloudctl's planned repairs of leaked allocations and stuck pinned CPUs.",
    helpGroup: 'WHAT-IF',
  }),
}

/** `--release`: whose scheduler defaults `simulate boot` and `simulate capacity` use. */
export const releaseFlags = {
  release: Flags.string({
    summary:
      "Simulate this nova release's scheduler defaults (filters, weighers and multipliers, placement options, NUMA rules); default: the release the snapshot's databases were written by (Zed when unknown). --nova-conf and the flags still override.",
    options: [...ENGINE_RELEASES],
  }),
}

/** The release a simulation of this snapshot stands for (the flag wins over the detected one). */
export function releaseChoice(snapshot: {release?: SnapshotRelease}, flag: string | undefined): SimulatedReleaseChoice {
  return simulatedRelease(snapshot.release, flag as SimulatedRelease | undefined)
}

/** The values of scenarioFlags as oclif parses them. */
export type ScenarioFlagValues = Omit<Interfaces.InferredFlags<typeof scenarioFlags>, 'json'>

export function scenarioOptionsFrom(flags: ScenarioFlagValues): ScenarioOptions {
  const count = flags['add-hosts']
  const like = flags.like
  if ((count === undefined) !== (like === undefined)) throw new ConfigError('--add-hosts and --like go together', 'Example: --add-hosts 10 --like compute-01')
  return {
    disableHosts: flags['disable-host'] ?? [],
    drainHosts: flags.drain ?? [],
    allocationRatios: (flags['set-allocation-ratio'] ?? []).map(parseAllocationRatio),
    addHosts: count !== undefined && like !== undefined ? {count, like} : null,
    applyRepairs: Boolean(flags['apply-repairs']),
  }
}

/**
 * The scheduler configuration `simulate boot` and `simulate capacity` start from: the release's
 * defaults, overlaid with the [filter_scheduler], [scheduler], [placement] and allocation-ratio
 * options of --nova-conf (read as oslo.config reads it; every [pci] alias line kept, it is a
 * multi-valued option).
 */
export function schedulerConfigFrom(novaConf: string | undefined, release: SimulatedRelease = 'zed'): SchedulerConfig {
  const cfg = defaultSchedulerConfig(release)
  if (!novaConf) return cfg
  const conf = readNovaConf(novaConf)
  const aliases = conf.multi.pci?.alias
  // default_availability_zone has one reader (with oslo's substitution), shared with `hosts list`.
  return {
    ...applyNovaConf(cfg, aliases ? {...conf.sections, pci: {...conf.sections.pci, alias: aliases}} : conf.sections),
    default_availability_zone: defaultAvailabilityZone(conf),
  }
}
