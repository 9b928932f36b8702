import {Flags} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {applySchedulerFlags, explainFlags, schedulerFlags} from '../../lib/cli/boot-flags.js'
import {bootRequestFromSpec, type RecordedRequest} from '../../lib/cli/boot-request.js'
import {migrateView} from '../../lib/cli/scheduler-view.js'
import {releaseChoice, releaseFlags, schedulerConfigFrom} from '../../lib/cli/scenario-flags.js'
import type {SimulatedReleaseChoice} from '../../lib/domain/release.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {simulateMigration, type MigrationResult} from '../../lib/engine/migrate.js'
import {ConfigError, ExitCode, NotFoundError} from '../../lib/errors.js'
import {renderMigration} from '../../lib/output/migration-formatter.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export type SimulateMigrateResult = MigrationResult & {recorded_request: RecordedRequest; scheduler_release: SimulatedReleaseChoice}

export default class SimulateMigrate extends CloudctlCommand<typeof SimulateMigrate> {
  static override listing: ListingSpec = {
    columns: [
      {key: 'kind'},
      {key: 'instance.uuid'},
      {key: 'instance.host'},
      {key: 'destination.host'},
      {key: 'destination.node'},
      {key: 'no_valid_host'},
      {key: 'summary'},
    ],
    more: [{key: 'instance.node'}, {key: 'instance.cell'}, {key: 'requested_host'}, {key: 'same_host_allowed'}],
  }

  static override description = `Where nova would cold-migrate (or, with --live, live-migrate) an instance, or why it cannot, offline: the checks nova-api and the conductor make first (instance state, source nova-compute up, a --host that is not the source), then the request nova recorded for the instance (nova_api.request_specs) scheduled as a move, stage by stage.

A move is not a boot: the source host is in ignore_hosts (a cold migration keeps it only when its provider reports COMPUTE_SAME_HOST_COLD_MIGRATE), force_hosts are reset, --host is a requested destination that still goes through the filters, only the hosts of the instance's cell are candidates, and the instance's own allocations stay counted on the source (the migration record holds them), never against the destination. A live migration tries again without a host whose hypervisor is of another type or older than the source's, as the conductor does.

Exit 0: a destination; 3: NoValidHost; 2: nova refuses the migration before scheduling.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --instance 0be2dce7-c85b-4354-82ea-c08524382565',
    '<%= config.bin %> <%= command.id %> -s snap.json.gz --instance 0be2dce7-c85b-4354-82ea-c08524382565 --host cmp-07 --why cmp-07',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --instance 0be2dce7-c85b-4354-82ea-c08524382565 --live --explain --json',
  ]

  static override flags = {
    ...sourceFlags,
    instance: Flags.string({summary: 'The instance to move (its request is read from nova_api.request_specs).', required: true}),
    host: Flags.string({
      summary: 'Requested destination host (`openstack server migrate --host`, or a live migration without --force): it still goes through the filters.',
    }),
    live: Flags.boolean({summary: 'A live migration (default: a cold migration).'}),
    ...schedulerFlags,
    ...explainFlags,
    ...releaseFlags,
  }

  static override summary = 'Simulate where nova would migrate an instance (cold or --live), or why it fails with NoValidHost.'

  async run(): Promise<SimulateMigrateResult> {
    const f = this.flags
    const configFor = (release: SimulatedReleaseChoice['release']) => {
      const base = schedulerConfigFrom(f['nova-conf'], release)
      if (f.filters !== undefined)
        base.enabled_filters = f.filters
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      return applySchedulerFlags(base, f)
    }
    // once before the snapshot, so that a bad option is refused without a database
    configFor('zed')
    const uuid = f.instance.trim()
    const snapshot = await this.readSnapshot({...sourceOptionsFrom(f), requestSpecs: true, schedulerView: migrateView(uuid)})
    const release = releaseChoice(snapshot, f.release)
    const cfg = configFor(release.release)
    const model = buildModel(snapshot)
    const {request, recorded} = bootRequestFromSpec(model, uuid)
    const migration = simulateMigration(model, uuid, request, cfg, {
      live: f.live,
      host: f.host ?? null,
      seed: f.seed,
      explain: Boolean(f.explain || f.why?.length),
      topWeighed: f.top,
    })
    const result: SimulateMigrateResult = {...migration, recorded_request: recorded, scheduler_release: release}
    if (f.why?.length && result.simulation) {
      const known = new Set(model.liveComputeNodes.flatMap((cn) => [cn.host, cn.hypervisor_hostname]))
      const missing = f.why.filter((h) => !known.has(h))
      if (missing.length > 0)
        throw new NotFoundError(`host ${missing.join(', ')} is not a compute node of this snapshot`, 'See `cloudctl hosts list` for the hosts.')
      result.simulation.verdicts = result.simulation.verdicts.filter((v) => f.why?.includes(v.host) || f.why?.includes(v.node))
    }
    this.out(`Scheduler of nova ${release.release} (${release.note})\n`)
    this.out((d) => renderMigration(result, d, {explain: f.explain, why: f.why}))
    if (result.refusal) throw new ConfigError(result.refusal.message, result.refusal.hint, 'MigrationRefused')
    this.setExit(result.noValidHost ? ExitCode.FINDINGS : ExitCode.OK)
    return result
  }
}
