/**
 * Where the live databases are. Each setting is taken from the first of:
 *   flags (--api-db, --placement-db, --cell-db, --nova-conf)
 *   environment (CLOUDCTL_API_DB, CLOUDCTL_PLACEMENT_DB, CLOUDCTL_NOVA_CONF)
 *   the profile (--profile / CLOUDCTL_PROFILE / default_profile of the config file)
 *   nova.conf ([api_database] / [placement_database] connection)
 * Cell databases come from nova_api.cell_mappings, unless overridden per cell (--cell-db, profile).
 */
import type {SourceOptions} from '../snapshot/source.js'
import {ConfigError} from '../errors.js'
import {registerUrlSecret} from '../util/redact.js'
import {type CloudctlConfig, type Env, loadConfigFile, selectProfile} from './file.js'
import {getOption, type NovaConf, optionalConnection, readNovaConf} from './nova-conf.js'

export interface ResolvedConnections {
  /** nova_api URL (with its password: never print it; use displayDbUrl). */
  apiDb: string
  /** placement URL; the nova_api URL on clouds that keep the placement tables there. */
  placementDb: string
  /** Per-cell overrides: cell name or uuid -> URL. */
  cellDb: Record<string, string>
  /** Where each value came from, for messages: '--api-db', 'CLOUDCTL_API_DB', "profile 'prod'", '/etc/nova/nova.conf [api_database]'. */
  origin: {apiDb: string; placementDb: string; cellDb: Record<string, string>}
  /** [database] connection of nova.conf, when one was read: fills templated cell_mappings URLs. */
  novaConfDatabase?: string
  /** The parsed nova.conf, when one was read (the scheduler engine reads its options). */
  novaConf?: NovaConf
  /**
   * oslo.db's mysql_wsrep_sync_wait of nova.conf, as written, per section: [api_database] for
   * nova_api, [placement_database] for placement, [database] for the cells (db/session.ts reads it).
   */
  wsrepSyncWait: {api?: ConfOption; placement?: ConfOption; cell?: ConfOption}
  profile?: string
  configPath?: string
}

/** One nova.conf option as written, and where: '/etc/nova/nova.conf [database] mysql_wsrep_sync_wait'. */
export interface ConfOption {
  raw: string
  origin: string
}

const WAYS =
  'Pass --api-db URL --placement-db URL, or --nova-conf /etc/nova/nova.conf, or set CLOUDCTL_API_DB / CLOUDCTL_PLACEMENT_DB / CLOUDCTL_NOVA_CONF, or add a profile to ~/.config/cloudctl/config.yaml (--profile / CLOUDCTL_PROFILE); or work offline with --snapshot FILE.'

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

function syncWaitOptions(conf: NovaConf): ResolvedConnections['wsrepSyncWait'] {
  const opt = (section: string): ConfOption | undefined => {
    const raw = getOption(conf, section, 'mysql_wsrep_sync_wait')
    return raw === undefined ? undefined : {raw, origin: `${conf.path} [${section}] mysql_wsrep_sync_wait`}
  }
  return {api: opt('api_database'), placement: opt('placement_database'), cell: opt('database')}
}

/** Parses --cell-db NAME=URL values. */
export function parseCellDbFlags(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>
  for (const v of values ?? []) {
    const eq = v.indexOf('=')
    const name = eq === -1 ? '' : v.slice(0, eq).trim()
    const url = eq === -1 ? '' : v.slice(eq + 1).trim()
    if (name === '' || url === '' || name.includes('://')) {
      // The value is not echoed: without a recognisable NAME= it may be a bare URL with a password.
      const what = eq === -1 || name.includes('://') ? 'a value without NAME=' : url === '' ? `'${name}=' with no URL` : 'an empty NAME'
      throw new ConfigError(
        `--cell-db expects NAME=URL, got ${what}`,
        'e.g. --cell-db cell1=mysql+pymysql://nova:PASS@db2/nova_cell1 (NAME is the cell name or uuid).',
        'BadCellDbFlag',
      )
    }
    registerUrlSecret(url)
    out[name] = url
  }
  return out
}

/**
 * Resolves the connection URLs. Synchronous: it reads at most one YAML file and one nova.conf.
 * Throws ConfigError (exit 2) when nothing is configured or a source is broken.
 */
export function resolveConnections(opts: SourceOptions, env: Env = process.env): ResolvedConnections {
  // The config file is optional unless named; a named profile must exist.
  const profileName = nonEmpty(opts.profile) ?? nonEmpty(env.CLOUDCTL_PROFILE)
  const configNamed = nonEmpty(opts.config) ?? nonEmpty(env.CLOUDCTL_CONFIG)
  const config: CloudctlConfig = loadConfigFile(configNamed, env)
  const selected = selectProfile(config, profileName)
  const profile = selected?.profile
  const profileLabel = selected ? `profile '${selected.name}'` : ''

  const novaConfPath = nonEmpty(opts.novaConf) ?? nonEmpty(env.CLOUDCTL_NOVA_CONF) ?? profile?.nova_conf
  const novaConfOrigin = nonEmpty(opts.novaConf) ? '--nova-conf' : nonEmpty(env.CLOUDCTL_NOVA_CONF) ? 'CLOUDCTL_NOVA_CONF' : profileLabel

  let apiDb = nonEmpty(opts.apiDb)
  let apiOrigin = '--api-db'
  if (apiDb === undefined && nonEmpty(env.CLOUDCTL_API_DB)) [apiDb, apiOrigin] = [nonEmpty(env.CLOUDCTL_API_DB), 'CLOUDCTL_API_DB']
  if (apiDb === undefined && profile?.api_db) [apiDb, apiOrigin] = [profile.api_db, profileLabel]

  let placementDb = nonEmpty(opts.placementDb)
  let placementOrigin = '--placement-db'
  if (placementDb === undefined && nonEmpty(env.CLOUDCTL_PLACEMENT_DB))
    [placementDb, placementOrigin] = [nonEmpty(env.CLOUDCTL_PLACEMENT_DB), 'CLOUDCTL_PLACEMENT_DB']
  if (placementDb === undefined && profile?.placement_db) [placementDb, placementOrigin] = [profile.placement_db, profileLabel]

  registerUrlSecret(apiDb)
  registerUrlSecret(placementDb)

  // nova.conf is read whenever one is configured: it fills what is still missing, and its
  // [database] connection and scheduler options are useful even when the URLs came from flags.
  let novaConf: NovaConf | undefined
  let novaConfDatabase: string | undefined
  if (novaConfPath !== undefined) {
    novaConf = readNovaConf(novaConfPath)
    novaConfDatabase = optionalConnection(novaConf, 'database')
    if (apiDb === undefined) {
      apiDb = optionalConnection(novaConf, 'api_database')
      apiOrigin = `${novaConf.path} [api_database]`
      if (apiDb === undefined) {
        throw new ConfigError(
          `${novaConf.path} has no [api_database] connection${novaConfOrigin ? ` (nova.conf from ${novaConfOrigin})` : ''}`,
          'Use the nova.conf of a controller (nova-api / nova-conductor / nova-scheduler host), or pass --api-db URL.',
          'NovaConfMissingSection',
        )
      }
    }
    if (placementDb === undefined) {
      placementDb = optionalConnection(novaConf, 'placement_database')
      placementOrigin = `${novaConf.path} [placement_database]`
      if (placementDb === undefined) {
        throw new ConfigError(
          `${novaConf.path} has no [placement_database] connection`,
          'Since Stein placement has its own config (/etc/placement/placement.conf [placement_database]): pass --placement-db URL. Older clouds keep the placement tables in nova_api: pass --placement-db with the nova_api URL.',
          'NovaConfMissingSection',
        )
      }
    }
  }

  if (apiDb === undefined && placementDb === undefined) {
    throw new ConfigError('no database configured: cloudctl does not know where nova_api and placement are', WAYS, 'NoSource')
  }
  if (apiDb === undefined) {
    throw new ConfigError('no nova_api database configured', `Pass --api-db URL (or CLOUDCTL_API_DB, a profile's api_db, or --nova-conf). ${WAYS}`, 'NoApiDb')
  }
  if (placementDb === undefined) {
    throw new ConfigError(
      'no placement database configured',
      'Pass --placement-db URL (or CLOUDCTL_PLACEMENT_DB, or placement_db in the profile). Clouds older than Stein keep the placement tables in nova_api: pass the nova_api URL.',
      'NoPlacementDb',
    )
  }

  // No prototype: capture looks cells up by name, and a cell may be named 'constructor'.
  const cellDb: Record<string, string> = Object.create(null) as Record<string, string>
  const cellOrigin: Record<string, string> = Object.create(null) as Record<string, string>
  for (const [k, v] of Object.entries(profile?.cell_db ?? {})) [cellDb[k], cellOrigin[k]] = [v, profileLabel]
  for (const [k, v] of Object.entries(parseCellDbFlags(opts.cellDb))) [cellDb[k], cellOrigin[k]] = [v, '--cell-db']

  return {
    apiDb,
    placementDb,
    cellDb,
    origin: {apiDb: apiOrigin, placementDb: placementOrigin, cellDb: cellOrigin},
    novaConfDatabase,
    novaConf,
    wsrepSyncWait: novaConf ? syncWaitOptions(novaConf) : {},
    profile: selected?.name,
    configPath: config.path,
  }
}
