import {Args} from '../../lib/cli/oclif.js'

import {evidenceFlags} from '../../lib/cli/audit-command.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {renderDiff} from '../../lib/output/diff-formatter.js'
import {diffSnapshots, type SnapshotDiff} from '../../lib/snapshot/diff.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export type SnapshotDiffResult = SnapshotDiff

const {snapshot: _snapshot, ...liveFlags} = sourceFlags

export default class SnapshotDiffCommand extends CloudctlCommand<typeof SnapshotDiffCommand> {
  static override listing: ListingSpec = {
    rows: 'changes',
    columns: [
      {key: 'kind'},
      {key: 'instance_uuid'},
      {key: 'consumer_uuid'},
      {key: 'provider'},
      {key: 'resource_class'},
      {key: 'host'},
      {key: 'before'},
      {key: 'after'},
    ],
    more: [
      {key: 'name'},
      {key: 'provider_uuid'},
      {key: 'node'},
      {key: 'cell'},
      {key: 'numa_cell'},
      {key: 'used'},
      {key: 'from'},
      {key: 'to'},
      {key: 'at'},
      {key: 'added'},
      {key: 'removed'},
    ],
    open: ['from', 'to', 'at'],
  }

  static override args = {
    before: Args.string({description: 'The earlier snapshot: a file, or "live" to read the databases.', required: true, ignoreStdin: true}),
    after: Args.string({
      description: 'The later snapshot: a file, or "live" (the usual case: last night\'s file against now).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static override description = `Audit two snapshots of one cloud and compare: the findings that appeared, disappeared or persisted (matched by code and subject), and the rows that changed behind them (instances moved, added or gone; allocations added, removed or changed; providers added or removed; pinned CPUs changed). How to check a repair, an upgrade or last night's maintenance.

Exit 3 when a finding appeared, 0 otherwise (also when findings persist or disappeared).`

  static override examples = [
    '<%= config.bin %> <%= command.id %> /var/lib/cloudctl/snap-2026-11-22.json.gz live --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> before-repair.json.gz after-repair.json.gz',
    '<%= config.bin %> <%= command.id %> yesterday.json.gz today.json.gz --json',
  ]

  static override flags = {...liveFlags, ...evidenceFlags}

  static override summary = 'What changed between two snapshots: findings appeared / disappeared, and the rows behind them.'

  async run(): Promise<SnapshotDiffResult> {
    const load = async (side: string) => {
      const opts = sourceOptionsFrom(this.flags)
      opts.snapshot = side === 'live' ? undefined : side
      return buildModel(await this.readSnapshot(opts))
    }
    const before = await load(this.args.before)
    const after = await load(this.args.after)
    const diff = diffSnapshots(before, after)
    this.out(() => renderDiff(diff))
    process.exitCode = diff.exit_code
    return diff
  }
}
