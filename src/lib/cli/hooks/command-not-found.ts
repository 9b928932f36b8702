import type {Hook} from '@oclif/core'

import {ExitCode} from '../../errors.js'
import {renderJson} from '../../output/formats.js'
import {humanText} from '../../output/terminal.js'
import {formatFromArgv} from '../format-flags.js'
import {nearest} from '../../util/did-you-mean.js'

/** Damerau-free edit distance: enough to catch a swapped or missing letter in a command name. */
/** The closest command id, if it is close enough to be what was meant. */
export function suggestCommand(id: string, ids: readonly string[]): string | undefined {
  return nearest(id, ids)
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
