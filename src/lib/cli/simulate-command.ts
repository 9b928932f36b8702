import type {Command, Interfaces} from '@oclif/core'

import type {Snapshot} from '../domain/snapshot.js'
import type {SchedulerConfig} from '../engine/index.js'
import type {ScenarioOptions} from '../scenario/index.js'
import {loadSnapshot} from '../snapshot/load.js'
import type {SourceOptions} from '../snapshot/source.js'
import {CloudctlCommand, type CommandFlags} from './base-command.js'
import {stderrProgress} from './progress-printer.js'
import {scenarioFlags, scenarioOptionsFrom, schedulerConfigFrom} from './scenario-flags.js'
import {sourceFlags, sourceOptionsFrom} from './source-flags.js'

/** A simulate command: its flags include sourceFlags and scenarioFlags (checked where it extends SimulateCommand). */
export type SimulateCommandClass = typeof Command & {flags: typeof sourceFlags & typeof scenarioFlags}

/**
 * What `simulate boot` and `simulate capacity` share: the snapshot they read, the scheduler options
 * they start from, and the what-if scenario their flags describe.
 */
export abstract class SimulateCommand<T extends SimulateCommandClass> extends CloudctlCommand<T> {
  // T's flags include both sets (the constraint above), so its parsed flags hold their values.
  protected declare flags: CommandFlags<T> & Interfaces.InferredFlags<typeof sourceFlags & typeof scenarioFlags>

  /** --nova-conf's scheduler options over Zed's defaults; `filters` (a --filters value) replaces enabled_filters. */
  protected schedulerConfig(filters: string | undefined): SchedulerConfig {
    const config = schedulerConfigFrom(this.flags['nova-conf'])
    if (filters !== undefined) config.enabled_filters = filters.split(',').map((s) => s.trim()).filter(Boolean)
    return config
  }

  protected scenarioOptions(): ScenarioOptions {
    return scenarioOptionsFrom(this.flags)
  }

  /** The snapshot file or the live databases, with the progress line while they are read. */
  protected async readSnapshot(extra: Pick<SourceOptions, 'requestSpecs'> = {}): Promise<Snapshot> {
    return loadSnapshot({...sourceOptionsFrom(this.flags), ...extra}, stderrProgress())
  }
}
