import {Flags} from '../../lib/cli/oclif.js'

import {CloudctlError, ExitCode} from '../../lib/errors.js'
import {findCell, planMapInstances} from '../../lib/repairs/cells.js'
import {type RepairOutcome, RepairCommand, repairFlags} from '../../lib/cli/repair-command.js'
import {MAX_COUNT} from '../../lib/cli/limits.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

export default class CellsMapInstances extends RepairCommand<typeof CellsMapInstances> {
  static override listing = REPAIR_LISTING

  static override summary = 'Create missing instance mappings, fix NULL/wrong cell ids, resolve instances live in two cells.'

  static override description = `The counterpart of \`nova-manage cell_v2 map_instances\`: every instance row of a cell without an instance_mapping gets one (deleted instances too, oldest first, project and user from the instance), as nova-manage creates them. Also points NULL or wrong cell ids at the cell where the instance lives, and for an instance live in two cells keeps the copy that is live and not in ERROR and soft-deletes the other as nova does (deleted = id, deleted_at).

Batching: --max-count N handles at most N instances per run. nova-manage exits 1 while there is more to do and 0 when done; cloudctl exits 6 (partial) while there is more to do, 4 after applying the last batch, and 0 once nothing is left, so "run until it exits 0" works the same. No marker row is written: each run re-plans from the databases.`

  static override examples = ['<%= config.bin %> <%= command.id %> --cell cell1', '<%= config.bin %> <%= command.id %> --max-count 500 --apply --yes']

  static override flags = {
    ...repairFlags,
    cell: Flags.string({summary: 'Only this cell (name or uuid); default every cell.'}),
    'max-count': Flags.integer({summary: 'Handle at most this many instances per run (then exit 6: run again).', min: 1, max: MAX_COUNT}),
  }

  async run(): Promise<RepairOutcome> {
    const {snapshot, model} = await this.loadModel()
    if (this.flags.cell) {
      const cell = findCell(model, this.flags.cell)
      if (!cell) throw new CloudctlError(`no cell named ${this.flags.cell}`, {exitCode: ExitCode.CONFIG, code: 'NotFoundError', hint: 'See cloudctl cells list.'})
      if (cell.status !== 'available') throw new CloudctlError(`cell ${this.flags.cell} could not be read: ${cell.error ?? 'unavailable'}`, {exitCode: ExitCode.CONFIG, code: 'CellUnavailable', hint: 'An unreachable cell is never treated as empty.'})
    }
    return this.runPlan(planMapInstances(model, {cell: this.flags.cell, maxCount: this.flags['max-count']}), snapshot)
  }
}
