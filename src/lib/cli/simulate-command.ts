import type {Command, Interfaces} from '@oclif/core'

import type {SimulatedReleaseChoice} from '../domain/release.js'
import type {Snapshot} from '../domain/snapshot.js'
import type {SchedulerConfig} from '../engine/index.js'
import type {ScenarioOptions} from '../scenario/index.js'
import {CloudctlCommand, type CommandFlags} from './base-command.js'
import {releaseChoice, type releaseFlags, scenarioFlags, scenarioOptionsFrom, schedulerConfigFrom} from './scenario-flags.js'
import type {sourceFlags} from './source-flags.js'

/** A simulate command: its flags include sourceFlags, scenarioFlags and releaseFlags (checked where it extends SimulateCommand). */
export type SimulateCommandClass = typeof Command & {flags: typeof sourceFlags & typeof scenarioFlags & typeof releaseFlags}

/**
 * What `simulate boot` and `simulate capacity` share: the scheduler options they start from and the
 * what-if scenario their flags describe.
 */
export abstract class SimulateCommand<T extends SimulateCommandClass> extends CloudctlCommand<T> {
  // T's flags include both sets (the constraint above), so its parsed flags hold their values.
  declare protected flags: CommandFlags<T> & Interfaces.InferredFlags<typeof sourceFlags & typeof scenarioFlags & typeof releaseFlags>

  /**
   * --nova-conf's scheduler options over the release's defaults (Zed's until the snapshot is read:
   * commands read them once before it, so that a bad option is refused without a database);
   * `filters` (a --filters value) replaces enabled_filters.
   */
  protected schedulerConfig(filters: string | undefined, release: SimulatedReleaseChoice['release'] = 'zed'): SchedulerConfig {
    const config = schedulerConfigFrom(this.flags['nova-conf'], release)
    if (filters !== undefined)
      config.enabled_filters = filters
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    return config
  }

  /** The release whose scheduler is simulated: --release, else the snapshot's. */
  protected simulatedRelease(snapshot: Snapshot): SimulatedReleaseChoice {
    return releaseChoice(snapshot, this.flags.release)
  }

  protected scenarioOptions(): ScenarioOptions {
    return scenarioOptionsFrom(this.flags)
  }
}
