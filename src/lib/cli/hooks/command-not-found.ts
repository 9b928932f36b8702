import type {Hook} from '@oclif/core'

import {ExitCode} from '../../errors.js'
import {renderJson} from '../../output/formats.js'
import {humanText} from '../../output/terminal.js'
import {formatFromArgv} from '../format-flags.js'

/** Damerau-free edit distance: enough to catch a swapped or missing letter in a command name. */
function distance(a: string, b: string): number {
  const d = Array.from({length: a.length + 1}, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
  }
  return d[a.length][b.length]
}

/** The closest command id, if it is close enough to be what was meant. */
export function suggestCommand(id: string, ids: readonly string[]): string | undefined {
  let best: {id: string; d: number} | undefined
  for (const candidate of ids) {
    const d = distance(id, candidate)
    if (!best || d < best.d) best = {id: candidate, d}
  }
  return best && best.d <= Math.max(2, Math.floor(id.length / 3)) ? best.id : undefined
}

/**
 * `cloudctl audit lekas`: one line naming the command as typed (spaces, not oclif's colons), the
 * nearest command, exit 2; with --json / -f json the error document on stdout like any other error.
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const shown = (id: string) => id.split(':').join(' ')
  const ids = opts.config.commandIDs.filter((c) => !c.startsWith('autocomplete:') || opts.id.startsWith('auto'))
  const suggestion = suggestCommand(opts.id, ids)
  const message = `unknown command \`${opts.config.bin} ${shown(opts.id)}\``
  const hint = suggestion ? `Did you mean \`${opts.config.bin} ${shown(suggestion)}\`?` : `See \`${opts.config.bin} --help\` for the commands.`
  const format = formatFromArgv(opts.argv ?? [])
  process.exitCode = ExitCode.CONFIG
  if (format === 'json') {
    process.stdout.write(`${renderJson({error: {code: 'CommandNotFound', message, hint, exit_code: ExitCode.CONFIG}})}\n`)
  } else {
    process.stderr.write(`Error: ${humanText(message)}\nHint: ${humanText(hint)}\n`)
  }
  this.exit(ExitCode.CONFIG)
}

export default hook
