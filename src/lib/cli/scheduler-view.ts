/**
 * What each simulate command names beyond the tables the scheduler always reads, for a live
 * scheduler-view read (db/read-scheduler.ts): the instance it replays or moves, and the instances
 * whose hosts its request asks about (engine/reads.ts), found from nova_api before the cells are read.
 */
import type {SchedulerConfig} from '../engine/config.js'
import {instancesRequestReads, requestReadsHostNuma, requestTraitNames} from '../engine/reads.js'
import type {ScenarioOptions} from '../scenario/index.js'
import type {SchedulerView} from '../snapshot/source.js'
import type {ParsedBootFlags} from './boot-flags.js'
import {recordedHints} from './boot-request.js'

/**
 * `simulate boot`: the flags' request, or the recorded one of --instance with the flags' hints over
 * it. `configs`: the scheduler options of every release the snapshot may be (the query's traits
 * depend on them); none: every trait row is read.
 */
export function bootView(parsed: ParsedBootFlags, configs: readonly SchedulerConfig[] = []): SchedulerView {
  const instance = parsed.instance
  if (instance === null) {
    return {
      instances: (api) => instancesRequestReads(api.instance_groups, parsed.request),
      // Only NUMATopologyFilter reads them (and the claim, after it): without it in any release's
      // options, not even a request with a NUMA topology does.
      hostNumaTopology: (api) =>
        (configs.length === 0 || configs.some((c) => c.enabled_filters.includes('NUMATopologyFilter'))) && requestReadsHostNuma(api.flavors, parsed.request),
      ...(configs.length > 0 ? {providerTraits: (api, placement) => requestTraitNames(api, placement, parsed.request, configs)} : {}),
    }
  }
  return {instance, instances: (api) => instancesRequestReads(api.instance_groups, {hints: parsed.overrides.hints ?? recordedHints(api, instance)})}
}

/** `simulate capacity`: its only hint is a server group. */
export function capacityView(group: string | undefined): SchedulerView {
  return {instances: (api) => instancesRequestReads(api.instance_groups, {hints: group === undefined ? {} : {group}})}
}

/** `simulate migrate`: the instance moved, with its recorded hints. */
export function migrateView(instance: string): SchedulerView {
  return {instance, instances: (api) => instancesRequestReads(api.instance_groups, {hints: recordedHints(api, instance)})}
}

/**
 * A drain re-places every instance of a host (their rows, allocations and request specs) and the
 * repairs run the audits over every row: those scenarios read everything.
 */
export function viewFor(scenario: ScenarioOptions, view: SchedulerView): {schedulerView?: SchedulerView} {
  return scenario.applyRepairs || (scenario.drainHosts?.length ?? 0) > 0 ? {} : {schedulerView: view}
}
