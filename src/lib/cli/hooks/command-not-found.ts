import type {Hook} from '@oclif/core'

import {ExitCode} from '../../errors.js'
import {renderJson} from '../../output/formats.js'
import {humanText} from '../../output/terminal.js'
import {formatFromArgv} from '../format-flags.js'
import {nearest} from '../../util/did-you-mean.js'

/** Damerau-free edit distance: enough to catch a swapped or missing letter in a command name. */
// A word that reads as a snapshot file name (what snapshot capture -o writes) or a path.
const SNAPSHOT_FILE = /(?:\.(?:json|ya?ml|cloudctl)(?:\.gz)?|\.gz)$|\//

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
  // `cloudctl audit all snap.json`: a command followed by a file, which oclif reads as a longer command
  // id. The file is meant as the snapshot.
  const parts = opts.id.split(':')
  const head = parts.slice(0, -1).join(':')
  const file = parts.at(-1) ?? ''
  const asSnapshot = ids.includes(head) && SNAPSHOT_FILE.test(file) ? `Did you mean \`${opts.config.bin} ${shown(head)} --snapshot ${file}\`?` : undefined
  const hint = asSnapshot ?? (suggestion ? `Did you mean \`${opts.config.bin} ${shown(suggestion)}\`?` : `See \`${opts.config.bin} --help\` for the commands.`)
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
