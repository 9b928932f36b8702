import {Args} from '../../lib/cli/oclif.js'

import {CloudctlError, ExitCode} from '../../lib/errors.js'
import {planUndo, validateUndoFile} from '../../lib/repairs/undo.js'
import {type RepairOutcome, RepairCommand, repairFlags} from '../../lib/cli/repair-command.js'
import {MIB, readBoundedFileSync} from '../../lib/util/bounded-read.js'
import {jsonErrorText} from '../../lib/util/parse-errors.js'
import {REPAIR_LISTING} from '../../lib/output/listings.js'

/** V8's longest string is just under 512 MiB: a larger file could not be parsed as one JSON text anyway. */
const MAX_UNDO_FILE_BYTES = 512 * MIB - 64

export default class RepairUndo extends RepairCommand<typeof RepairUndo> {
  static override listing = REPAIR_LISTING

  static override summary = 'Put back every row an applied repair changed, from its undo file.'

  static override description = `Each row is restored only if it still holds the values the repair left (its after-image); a row already at its before-image is left alone, so undo also finishes a repair that was only partly committed. Dry run by default; --apply executes it with the same lock, confirmation, guards and audit log as every repair (and writes its own undo file).`

  static override args = {
    file: Args.string({description: 'Undo file written by a repair (~/.local/state/cloudctl/undo/...).', required: true, ignoreStdin: true}),
  }

  static override examples = [
    '<%= config.bin %> <%= command.id %> ~/.local/state/cloudctl/undo/20261124T101500-leaks-4242.json --nova-conf /etc/nova/nova.conf',
    '<%= config.bin %> <%= command.id %> FILE --nova-conf /etc/nova/nova.conf --apply --yes',
  ]

  static override flags = {...repairFlags}

  async run(): Promise<RepairOutcome> {
    // A re-run re-plans from the file, not from the databases: it could not tell the rows a first
    // batch restored from those still waiting, so undo is one plan, whole.
    if (this.flags['max-count'] !== undefined)
      throw new CloudctlError('repair undo restores a whole undo file: --max-count does not apply', {
        exitCode: ExitCode.CONFIG,
        code: 'UsageError',
        hint: 'Drop --max-count; undo is guarded row by row and can be re-run if it stops.',
      })
    // The undo file is the limit: it restores exactly the rows one repair changed.
    if (this.flags['max-delete'] !== undefined)
      throw new CloudctlError('repair undo restores a whole undo file: --max-delete does not apply', {
        exitCode: ExitCode.CONFIG,
        code: 'UsageError',
        hint: 'Drop --max-delete; undo puts back only the rows the repair changed.',
      })
    const file = this.args.file
    const text = readBoundedFileSync(
      file,
      MAX_UNDO_FILE_BYTES,
      (why) =>
        new CloudctlError(`cannot read undo file ${file}: ${why}`, {
          exitCode: ExitCode.CONFIG,
          code: 'UndoFile',
          hint: "Give the undo file a repair wrote (its path is in the repair's output and the audit log).",
        }),
    )
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch (error) {
      throw new CloudctlError(`cannot read undo file ${file}: ${jsonErrorText(error, text)}`, {
        exitCode: ExitCode.CONFIG,
        code: 'UndoFile',
        hint: "Give the undo file a repair wrote (its path is in the repair's output and the audit log).",
      })
    }
    let plan
    try {
      plan = planUndo(validateUndoFile(data))
    } catch (error) {
      throw new CloudctlError(`${this.args.file}: ${(error as Error).message}`, {exitCode: ExitCode.CONFIG, code: 'UndoFile'})
    }
    // Undo always acts on the live databases: no snapshot to plan from, the guards are the after-images.
    if (this.flags.snapshot)
      throw new CloudctlError('repair undo works on the live databases, not a snapshot file', {exitCode: ExitCode.CONFIG, code: 'RepairNeedsLiveSource'})
    return this.runPlan(plan, null)
  }
}
