import {Flags} from '../../lib/cli/oclif.js'

import {CloudctlError, ExitCode} from '../../lib/errors.js'
import {findCell, planMapInstances} from '../../lib/repairs/cells.js'
import {type RepairOutcome, RepairCommand, repairFlags, scopeFlags} from '../../lib/cli/repair-command.js'
import {MAX_COUNT} from '../../lib/cli/limits.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class CellsMapInstances extends RepairCommand<typeof CellsMapInstances> {
  static override listing = REPAIR_LISTING

  static override summary = 'Create missing instance mappings, fix NULL/wrong cell ids, resolve instances live in two cells.'

  static override description = `The counterpart of \`nova-manage cell_v2 map_instances\`: every instance row of a cell without an instance_mapping gets one (deleted instances too, oldest first, project and user from the instance), as nova-manage creates them. Also points NULL or wrong cell ids at the cell where the instance lives, and for an instance live in two cells keeps the copy that is live and not in ERROR and soft-deletes the other as nova does (deleted = id, deleted_at).

--cell and --host work as on every repair: --host H maps only the instances whose host or node is H (deleted ones too).

Batching: --max-count N handles at most N instances per run. nova-manage exits 1 while there is more to do and 0 when done; cloudctl exits 6 (partial) while there is more to do, 4 after applying the last batch, and 0 once nothing is left, so "run until it exits 0" works the same. No marker row is written: each run re-plans from the databases.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --cell cell1',
    '<%= config.bin %> <%= command.id %> --host cmp-r1-04',
    '<%= config.bin %> <%= command.id %> --max-count 500 --apply --yes',
  ]

  static override flags = {
    ...repairFlags,
    ...scopeFlags,
    'max-count': Flags.integer({summary: 'Handle at most this many instances per run (then exit 6: run again).', min: 1, max: MAX_COUNT}),
  }

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    // --cell and --host as every repair checks them: a name the cloud does not know is exit 2.
    const scope = this.planOptions(snapshot)
    const cell = scope.cell === undefined ? undefined : findCell(model, scope.cell)
    if (cell && cell.status !== 'available')
      throw new CloudctlError(`cell ${scope.cell} could not be read: ${cell.error ?? 'unavailable'}`, {
        exitCode: ExitCode.CONFIG,
        code: 'CellUnavailable',
        hint: 'An unreachable cell is never treated as empty.',
      })
    return this.runPlan(planMapInstances(model, {...scope, maxCount: this.flags['max-count']}), snapshot)
  }
}
