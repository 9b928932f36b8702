import {existsSync} from 'node:fs'

import {Args} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {DEMO_SNAPSHOT, demoSnapshotPath, sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {renderSummary} from '../../lib/output/snapshot-formatter.js'
import {type SnapshotSummary, summarize} from '../../lib/snapshot/summary.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export type SnapshotShowResult = SnapshotSummary

export default class SnapshotShow extends CloudctlCommand<typeof SnapshotShow> {
  static override listing: ListingSpec = {
    rows: 'cells',
    columns: [
      {key: 'name', label: 'cell'},
      {key: 'uuid'},
      {key: 'status', label: 'state'},
      {key: 'compute_services'},
      {key: 'compute_services_down'},
      {key: 'compute_services_disabled'},
      {key: 'hosts'},
      {key: 'instances'},
      {key: 'instances_deleted', label: 'soft-deleted'},
    ],
    more: [{key: 'disabled'}, {key: 'database'}, {key: 'release'}],
  }

  static override args = {
    source: Args.string({
      description: 'A snapshot file ("-": stdin), "demo" (the demo cloud installed with cloudctl), or "live" to read the databases (the default).',
      required: false,
      ignoreStdin: true,
    }),
  }

  static override description = 'Cells and their state, hosts, instances by state, providers and allocations, with the capture time and the (redacted) source.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> demo',
    '<%= config.bin %> <%= command.id %> live --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> snap.json.gz --json',
  ]

  static override flags = {...sourceFlags}

  static override summary = 'Summarise a snapshot file or the live databases.'

  async run(): Promise<SnapshotShowResult> {
    const opts = sourceOptionsFrom(this.flags)
    if (this.args.source && this.args.source !== 'live')
      opts.snapshot = this.args.source === DEMO_SNAPSHOT && !existsSync(DEMO_SNAPSHOT) ? demoSnapshotPath(this.config.root) : this.args.source
    if (this.args.source === 'live') opts.snapshot = undefined
    const snapshot = await this.readSnapshot(opts)
    const summary = summarize(buildModel(snapshot))
    this.out((d) => renderSummary(summary, d))
    return summary
  }
}
