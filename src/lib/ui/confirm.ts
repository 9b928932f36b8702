/** Interactive questions. The only module that imports @inquirer/prompts (lazily: --help stays fast). */
import {CloudctlError, ExitCode} from '../errors.js'

export interface ConfirmApplyOptions {
  /** --yes: automation, no question. */
  yes: boolean
  /** One line per database and kind: 'placement: delete 3 allocations'. */
  summary: string[]
  /** Defaults to process.stdin.isTTY && process.stderr.isTTY. */
  interactive?: boolean
}

/** Resolves true when the operator agreed (or passed --yes); false when they said no. Never asks without a TTY. */
export async function confirmApply(opts: ConfirmApplyOptions): Promise<boolean> {
  if (opts.yes) return true
  const interactive = opts.interactive ?? Boolean(process.stdin.isTTY && process.stderr.isTTY)
  if (!interactive)
    throw new CloudctlError('refusing to apply without confirmation: no terminal to ask on', {
      exitCode: ExitCode.CONFIG,
      code: 'ConfirmationRequired',
      hint: 'Run it in a terminal, or pass --yes to confirm in automation (after reviewing the dry run).',
    })
  const {confirm} = await import('@inquirer/prompts')
  const message = ['Apply these changes?', ...opts.summary.map((s) => `  ${s}`)].join('\n')
  return confirm({message, default: false}, {output: process.stderr})
}
