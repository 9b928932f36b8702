import {Flags} from './oclif.js'

import {ConfigError} from '../errors.js'
import {BASE_FORMATS, type ExtraFormat} from '../output/formats.js'

/**
 * The output flags every listing/report command takes, as the `openstack` client spells them:
 * `-f/--format`, `-c/--column` (repeatable), `--max-width`/`--fit-width` and `--noindent`. `--json`
 * (oclif's) stays as the short form of `-f json`.
 *
 * A command that offers a format of its own passes it here and lists it in `extraFormats`:
 *
 *   const formats = [openmetricsFormat]
 *   static override baseFlags = {...CloudctlCommand.baseFlags, ...formatFlags(formats)}
 *   static override extraFormats = formats
 */
export function formatFlags(extra: ReadonlyArray<ExtraFormat<never>> = []) {
  const names = [...BASE_FORMATS, ...extra.map((f) => f.name)]
  return {
    format: Flags.string({
      char: 'f',
      summary: 'Output format (--json is -f json).',
      description: [
        'table: the human report (default); json, yaml: the whole result document; csv, value: the rows of its listing',
        ...extra.map((f) => `${f.name}: ${f.summary}`),
      ].join('; '),
      options: names,
      helpGroup: 'OUTPUT',
    }),
    column: Flags.string({
      char: 'c',
      summary: 'Show only this column of the listing (repeatable, or comma-separated); with json/yaml, the rows themselves.',
      multiple: true,
      helpGroup: 'OUTPUT',
    }),
    'max-width': Flags.integer({
      summary: 'Fit tables into this many columns (0: never wrap). Default: the terminal width, else $COLUMNS, else 120.',
      min: 0,
      helpGroup: 'OUTPUT',
    }),
    'fit-width': Flags.boolean({
      summary: 'Fit tables to the display width (the default; kept for openstack-client habits).',
      helpGroup: 'OUTPUT',
    }),
    noindent: Flags.boolean({summary: 'With -f json, print the document on one line.', helpGroup: 'OUTPUT'}),
  }
}

export interface OutputChoice {
  format: string
  columns: string[] | undefined
  noindent: boolean
  maxWidth: number | undefined
}

/**
 * The output format before or after parsing: `jsonEnabled()` is asked before flags are parsed (and
 * when parsing fails), so argv is read as oclif would (stopping at `--`).
 */
export function formatFromArgv(argv: readonly string[]): string | undefined {
  let found: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') break
    if (a === '--json') found ??= 'json'
    else if (a === '-f' || a === '--format') {
      if (i + 1 < argv.length) found = argv[++i]
    } else if (a.startsWith('--format=')) found = a.slice('--format='.length)
    else if (/^-f[^-]/.test(a)) found = a.slice(2).replace(/^=/, '')
  }
  return found
}

/** `--json` with a different `-f` is a contradiction, not a precedence puzzle. */
export function resolveOutput(flags: Record<string, unknown>): OutputChoice {
  const json = flags.json === true
  const format = flags.format as string | undefined
  if (json && format !== undefined && format !== 'json') {
    throw new ConfigError(`--json and -f ${format} ask for two formats`, '--json is the short form of -f json: keep one.', 'UsageError')
  }
  return {
    format: format ?? (json ? 'json' : 'table'),
    columns: (flags.column as string[] | undefined)?.length ? (flags.column as string[]) : undefined,
    noindent: flags.noindent === true,
    maxWidth: flags['max-width'] as number | undefined,
  }
}
