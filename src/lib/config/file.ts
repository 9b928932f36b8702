/**
 * cloudctl's own config file (YAML) with named profiles:
 *
 *   default_profile: prod
 *   profiles:
 *     prod:
 *       api_db: mysql+pymysql://nova:PASS@db1/nova_api
 *       placement_db: mysql+pymysql://placement:PASS@db1/placement
 *       cell_db: {cell1: mysql+pymysql://nova:PASS@db2/nova_cell1}
 *       nova_conf: /etc/nova/nova.conf
 *
 * Location: --config, else CLOUDCTL_CONFIG, else $XDG_CONFIG_HOME/cloudctl/config.yaml, else
 * ~/.config/cloudctl/config.yaml. Only an explicitly named file must exist.
 */
import {homedir} from 'node:os'
import {join} from 'node:path'

import {ConfigError} from '../errors.js'
import {yamlLib} from '../util/lazy-yaml.js'
import {MIB, readBoundedFileSync} from '../util/bounded-read.js'
import {plainName, yamlErrorText} from '../util/parse-errors.js'
import {registerUrlSecret} from '../util/redact.js'

export interface Profile {
  api_db?: string
  placement_db?: string
  /** cell name or uuid -> URL */
  cell_db?: Record<string, string>
  nova_conf?: string
}

export interface CloudctlConfig {
  /** The file read, or undefined when no config file exists. */
  path?: string
  default_profile?: string
  profiles: Record<string, Profile>
}

export type Env = Record<string, string | undefined>

export function defaultConfigPath(env: Env = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(env.HOME && env.HOME !== '' ? env.HOME : homedir(), '.config')
  return join(base, 'cloudctl', 'config.yaml')
}

const PROFILE_KEYS = new Set(['api_db', 'placement_db', 'cell_db', 'nova_conf'])

function bad(path: string, what: string): ConfigError {
  return new ConfigError(
    `${path}: ${what}`,
    'Expected profiles: {NAME: {api_db: URL, placement_db: URL, cell_db: {CELL: URL}, nova_conf: PATH}} and optionally default_profile: NAME.',
    'BadConfigFile',
  )
}

/**
 * A key as the error shows it: a plain name quoted, anything else not at all (a URL typed where a
 * key belongs, `{cell1=mysql://nova:PASS@db/nova}`, is a key holding a password).
 */
function shown(key: string): string {
  return plainName(key) === undefined ? '(a key that is not a plain name, not shown)' : `'${key}'`
}

/** Validates the parsed YAML document. */
export function parseConfigText(text: string, path: string): CloudctlConfig {
  let doc: unknown
  try {
    // logLevel 'error': the library's warnings (an unknown tag or directive) print the source line to stderr.
    doc = yamlLib().parse(text, {logLevel: 'error'})
  } catch (error) {
    throw new ConfigError(
      `${path} is not valid YAML: ${yamlErrorText(error)}`,
      "Fix the YAML (a linter such as yamllint shows the line). The file's text is not shown: it may hold a password.",
      'BadConfigFile',
    )
  }
  if (doc === null || doc === undefined) return {path, profiles: Object.create(null) as Record<string, Profile>}
  if (typeof doc !== 'object' || Array.isArray(doc)) throw bad(path, 'the top level must be a mapping')
  const top = doc as Record<string, unknown>
  for (const k of Object.keys(top)) if (k !== 'profiles' && k !== 'default_profile') throw bad(path, `unknown key ${shown(k)}`)
  // No prototype: a profile or cell named 'constructor' or '__proto__' is only ever a name.
  const profiles: Record<string, Profile> = Object.create(null) as Record<string, Profile>
  if (top.profiles !== undefined && top.profiles !== null) {
    if (typeof top.profiles !== 'object' || Array.isArray(top.profiles)) throw bad(path, "'profiles' must be a mapping of profile names")
    for (const [name, raw] of Object.entries(top.profiles as Record<string, unknown>)) {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(path, `profile ${shown(name)} must be a mapping`)
      const p: Profile = {}
      for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
        if (!PROFILE_KEYS.has(k)) throw bad(path, `profile ${shown(name)} has unknown key ${shown(k)}`)
        if (k === 'cell_db') {
          if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(path, `profile ${shown(name)}: cell_db must map cell names or uuids to URLs`)
          const cells: Record<string, string> = Object.create(null) as Record<string, string>
          for (const [cell, url] of Object.entries(v as Record<string, unknown>)) {
            if (typeof url !== 'string' || url.trim() === '') throw bad(path, `profile ${shown(name)}: cell_db ${shown(cell)} must be a URL`)
            registerUrlSecret(url)
            cells[cell] = url.trim()
          }
          p.cell_db = cells
        } else {
          if (typeof v !== 'string' || v.trim() === '') throw bad(path, `profile ${shown(name)}: ${k} must be a non-empty string`)
          if (k !== 'nova_conf') registerUrlSecret(v)
          ;(p as Record<string, string>)[k] = v.trim()
        }
      }
      profiles[name] = p
    }
  }
  let defaultProfile: string | undefined
  if (top.default_profile !== undefined && top.default_profile !== null) {
    if (typeof top.default_profile !== 'string') throw bad(path, 'default_profile must be a profile name')
    defaultProfile = top.default_profile
  }
  return {path, default_profile: defaultProfile, profiles}
}

/** A profile file is a few lines; 1 MiB is already a mistake, not a config. */
const MAX_CONFIG_BYTES = 1 * MIB

/**
 * Loads the config file. `explicit` (from --config or CLOUDCTL_CONFIG) must exist; the default
 * location may be absent (empty config).
 */
export function loadConfigFile(explicit: string | undefined, env: Env = process.env): CloudctlConfig {
  const chosen = explicit ?? (env.CLOUDCTL_CONFIG && env.CLOUDCTL_CONFIG !== '' ? env.CLOUDCTL_CONFIG : undefined)
  const path = chosen ?? defaultConfigPath(env)
  const absent = new Error('absent')
  let text: string
  try {
    text = readBoundedFileSync(path, MAX_CONFIG_BYTES, (why, errno) => {
      if (chosen === undefined && errno?.code === 'ENOENT') return absent
      return new ConfigError(
        `cannot read config file ${path}: ${why}`,
        errno === undefined ? 'Give --config / CLOUDCTL_CONFIG the path of a regular YAML file.' : 'Check --config / CLOUDCTL_CONFIG.',
        'ConfigFileUnreadable',
      )
    })
  } catch (error) {
    if (error === absent) return {profiles: Object.create(null) as Record<string, Profile>}
    throw error
  }
  return parseConfigText(text, path)
}

/**
 * The profile to use: the named one (flag or CLOUDCTL_PROFILE), else default_profile, else none.
 * An unknown name lists the known ones.
 */
export function selectProfile(config: CloudctlConfig, name: string | undefined): {name: string; profile: Profile} | undefined {
  const chosen = name ?? config.default_profile
  if (chosen === undefined) return undefined
  const profile = Object.hasOwn(config.profiles, chosen) ? config.profiles[chosen] : undefined
  if (profile === undefined) {
    const known = Object.keys(config.profiles)
    const where = config.path ?? defaultConfigPath()
    throw new ConfigError(
      `unknown profile ${name === undefined ? `${shown(chosen)} (default_profile)` : `'${chosen}'`} in ${config.path ?? `${where} (file not found)`}`,
      known.length > 0
        ? `Known profiles: ${known.map((k) => plainName(k) ?? '(not shown)').join(', ')}.`
        : `No profiles are defined; add one under 'profiles:' in ${where}.`,
      'UnknownProfile',
    )
  }
  return {name: chosen, profile}
}
