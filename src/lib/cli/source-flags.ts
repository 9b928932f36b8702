import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {Flags, type Interfaces} from './oclif.js'

import type {SourceOptions} from '../snapshot/source.js'
import type {NamedPath} from '../util/atomic-file.js'

/**
 * The source a command's flags chose: `snapshot` is always present (undefined: the live databases), so
 * that an options object built by hand ({requestSpecs: true}) cannot pass for one and silently drop
 * the --snapshot / --api-db the operator gave.
 */
export type ChosenSource = SourceOptions & {snapshot: string | undefined}

/**
 * Where a read command takes its data from: a snapshot file, or the live databases.
 * Resolution order for live connections (lib/config/resolve.ts): flags, then environment
 * (CLOUDCTL_API_DB, CLOUDCTL_PLACEMENT_DB, CLOUDCTL_NOVA_CONF, CLOUDCTL_PROFILE), then the profile of
 * the config file, then nova.conf.
 */
export const sourceFlags = {
  snapshot: Flags.string({
    char: 's',
    summary:
      'Read a snapshot file (JSON, YAML or columnar .cloudctl, optionally .gz; - for stdin) instead of the live databases; `demo`: the demo cloud installed with cloudctl.',
    helpGroup: 'SOURCE',
    env: 'CLOUDCTL_SNAPSHOT',
    // The demo cloud travels in every artifact (npm, tarball, .deb) at <root>/examples; a file named
    // `demo` in the working directory still wins, as any path would.
    parse: async (input, context) => (input === DEMO_SNAPSHOT && !existsSync(input) ? demoSnapshotPath(context.config.root) : input),
  }),
  'api-db': Flags.string({summary: 'nova_api database URL (mysql+pymysql://user:pass@host:port/nova_api).', helpGroup: 'SOURCE'}),
  'placement-db': Flags.string({
    summary: 'placement database URL (older clouds: the nova_api URL, where the placement tables live).',
    helpGroup: 'SOURCE',
  }),
  'cell-db': Flags.string({
    summary: 'Override the database URL of one cell: NAME=URL (NAME is the cell name or uuid). Repeatable.',
    multiple: true,
    helpGroup: 'SOURCE',
  }),
  'nova-conf': Flags.string({
    summary: 'nova.conf to read: [api_database]/[placement_database] connection; simulate also takes scheduler options and allocation ratios from it.',
    helpGroup: 'SOURCE',
  }),
  config: Flags.string({summary: 'cloudctl config file (default ~/.config/cloudctl/config.yaml).', helpGroup: 'SOURCE', env: 'CLOUDCTL_CONFIG'}),
  profile: Flags.string({char: 'p', summary: 'Named profile of the config file.', helpGroup: 'SOURCE', env: 'CLOUDCTL_PROFILE'}),
}

export const DEMO_SNAPSHOT = 'demo'

/** The demo cloud of the installed package whose root (oclif's config.root) is `root`. */
export function demoSnapshotPath(root: string): string {
  return join(root, 'examples', 'demo-cloud.yaml')
}

/** The values of sourceFlags as oclif parses them (a command may leave some out: capture has no --snapshot). */
export type SourceFlagValues = Partial<Omit<Interfaces.InferredFlags<typeof sourceFlags>, 'json'>>

export function sourceOptionsFrom(flags: SourceFlagValues): ChosenSource {
  return {
    snapshot: flags.snapshot,
    apiDb: flags['api-db'],
    placementDb: flags['placement-db'],
    cellDb: flags['cell-db'],
    novaConf: flags['nova-conf'],
    config: flags.config,
    profile: flags.profile,
  }
}

/** The files a command reads, by the flag (or variable) that named them: an output must be none of them. */
export function inputFilesOf(flags: SourceFlagValues, env: Record<string, string | undefined> = process.env): NamedPath[] {
  const novaConf = flags['nova-conf'] ?? (env.CLOUDCTL_NOVA_CONF || undefined)
  return [
    {flag: '--snapshot', path: flags.snapshot},
    {flag: flags['nova-conf'] === undefined ? 'CLOUDCTL_NOVA_CONF' : '--nova-conf', path: novaConf},
    {flag: '--config', path: flags.config},
  ]
}
