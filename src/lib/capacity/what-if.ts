/**
 * Capacity under a what-if scenario (src/lib/scenario), beside the capacity of the snapshot as it
 * is, so that an operator sees what the change costs or recovers per flavor. Pure.
 */
import {buildModel} from '../domain/model.js'
import type {Snapshot} from '../domain/snapshot.js'
import {defaultSchedulerConfig} from '../engine/index.js'
import {prepareScenario, scenarioIsEmpty, type DrainReport, type ScenarioOptions, type ScenarioResult} from '../scenario/index.js'
import {capacityFor} from './index.js'
import type {CapacityOptions, CapacityReport} from './types.js'

export interface FlavorDelta {
  flavor: string
  /** Additional instances that fit in the snapshot as it is. */
  before: number
  /** ... and under the scenario. */
  after: number
  change: number
  naiveBefore: number
  naiveAfter: number
}

export interface ScenarioCapacity {
  /** The flags, as understood. */
  options: ScenarioOptions
  changes: string[]
  drains: DrainReport[]
  repairs: ScenarioResult['repairs']
  /** Per flavor, the snapshot as it is against the scenario. */
  flavors: FlavorDelta[]
  /** The mix total before and after (--mix). */
  mix: {before: number; after: number; change: number} | null
  /** Scope of the unchanged snapshot (added hosts change the count). */
  hostsBefore: number
}

export interface WhatIfCapacityReport {
  report: CapacityReport
  scenario: ScenarioCapacity | null
}

/**
 * capacityFor on the snapshot transformed by `scenario` (drained instances re-placed first), and,
 * when the scenario changes anything, on the snapshot as it is, for the comparison.
 */
export function capacityWhatIf(snapshot: Snapshot, scenario: ScenarioOptions, opts: CapacityOptions = {}): WhatIfCapacityReport {
  const config = opts.config ?? defaultSchedulerConfig()
  if (scenarioIsEmpty(scenario)) return {report: capacityFor(buildModel(snapshot), {...opts, config}), scenario: null}
  // The scenario first: an unknown host or aggregate in the flags fails before any counting.
  const prepared = prepareScenario(snapshot, scenario, config, {seed: opts.seed})
  const report = capacityFor(prepared.model, {...opts, config, state: prepared.state})
  const before = capacityFor(buildModel(snapshot), {...opts, config, perHost: false, hostUsage: false})
  const old = new Map(before.flavors.map((f) => [f.flavor, f]))
  const flavors = report.flavors.map((f) => {
    const b = old.get(f.flavor)
    return {flavor: f.flavor, before: b?.fits ?? 0, after: f.fits, change: f.fits - (b?.fits ?? 0), naiveBefore: b?.naive ?? 0, naiveAfter: f.naive}
  })
  const mix = report.mix && before.mix ? {before: before.mix.total, after: report.mix.total, change: report.mix.total - before.mix.total} : null
  report.timings.totalMs += before.timings.totalMs
  return {
    report,
    scenario: {options: scenario, changes: prepared.changes, drains: prepared.drains, repairs: prepared.repairs, flavors, mix, hostsBefore: before.scope.hosts},
  }
}

/** What `cloudctl simulate capacity` returns (its --json document). */
export type CapacityResult = CapacityReport & {
  seed: number
  scenario: ScenarioCapacity | null
  /** The --html file written, if any. */
  html?: string
}
