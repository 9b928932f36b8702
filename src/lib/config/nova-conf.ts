/**
 * nova.conf as oslo.config reads it (oslo_config/iniparser.py), not as a generic INI reader would:
 *  - `key = value` or `key: value`, split at the first '=' or ':'; key and value stripped; a value
 *    wrapped in matching quotes loses them;
 *  - a line starting with '#' or ';' is a comment, but there are no inline comments: '#' inside a value
 *    (a password!) is part of it;
 *  - a line starting with whitespace continues the previous value (joined with '\n'); a blank line
 *    ends it;
 *  - section names are case-insensitive except DEFAULT; a key set twice keeps the last value
 *    (StrOpt), all values are kept for multi-valued options;
 *  - `$name` / `${name}` substitute another option of the same section or [DEFAULT]; `$$` is '$'.
 * The `ini` package does none of continuation, quote stripping or last-wins per oslo, and it treats
 * '[a.b]' as nesting and 'true' as a boolean, hence this small parser.
 */
import {NOVA_DEFAULT_AVAILABILITY_ZONE} from '../domain/availability-zone.js'
import {ConfigError} from '../errors.js'
import {MIB, readBoundedFileSync} from '../util/bounded-read.js'
import {plainName} from '../util/parse-errors.js'
import {registerUrlSecret} from '../util/redact.js'

export interface NovaConf {
  /** The file this was read from ('<string>' for parsed text). */
  path: string
  /** section -> key -> last value (sections lower-cased except DEFAULT). */
  sections: Record<string, Record<string, string>>
  /** section -> key -> every value in file order (for MultiStrOpt options). */
  multi: Record<string, Record<string, string[]>>
}

function normalizeSection(name: string): string {
  return name.toLowerCase() === 'default' ? 'DEFAULT' : name.toLowerCase()
}

function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) return value.slice(1, -1)
  return value
}

/**
 * Errors name the file, the line number, the section and at most an option's name: never the text
 * of a line, which may be a password (a `password Ks7…` missing its '=', an indented `password = …`).
 */
function where(section: string | undefined): string {
  return section === undefined || plainName(section) === undefined ? '' : ` in [${section}]`
}

/** "option 'password' " for an indented `password = …`, when the part before '='/':' is a plain name. */
function indentedName(line: string): string {
  const m = /^\s*([^=:]*)[=:]/.exec(line)
  const name = m ? plainName(m[1]) : undefined
  return name === undefined ? 'the line ' : `option '${name}' `
}

/** Parses nova.conf text. `path` only names the file in errors. */
export function parseNovaConf(text: string, path = '<string>'): NovaConf {
  const sections: Record<string, Record<string, string>> = Object.create(null)
  const multi: Record<string, Record<string, string[]>> = Object.create(null)
  let section: string | undefined
  let key: string | undefined
  let value: string[] = []
  let keyLine = 0
  // The option a blank line just ended: an indented line after it is the usual mistake.
  let lastKey: string | undefined

  const flush = (): void => {
    if (key === undefined) return
    if (section === undefined) {
      throw new ConfigError(
        `${path}:${keyLine}: ${plainName(key) === undefined ? 'an option' : `option '${key}'`} appears before any [section]`,
        'Put options under a section such as [DEFAULT] or [api_database].',
        'BadNovaConf',
      )
    }
    const v = value.join('\n')
    ;(sections[section] ??= Object.create(null) as Record<string, string>)[key] = v
    ;((multi[section] ??= Object.create(null) as Record<string, string[]>)[key] ??= []).push(v)
    key = undefined
    value = []
  }

  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const lineno = i + 1
    const line = lines[i].trimEnd()
    if (line === '') {
      if (key !== undefined) lastKey = key
      flush()
      continue
    }
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (key === undefined) {
        // oslo rejects a continuation without an option; an indented comment is harmless there only
        // after an option, so keep the same rule but tolerate indented comments and blank-ish lines.
        if (/^\s*[#;]/.test(line)) continue
        throw new ConfigError(
          `${path}:${lineno}: ${indentedName(line)}is indented but continues no option${where(section)}${lastKey === undefined || plainName(lastKey) === undefined ? '' : ` (the value of '${lastKey}' ended at the blank line above)`}`,
          'Indented lines continue the value of the option above, up to a blank line; remove the indentation (or the blank line). The line is not shown: it may hold a secret.',
          'BadNovaConf',
        )
      }
      value.push(line.trimStart())
      continue
    }
    flush()
    lastKey = undefined
    if (line.startsWith('[')) {
      const m = /^\[([^\]]*)\]\s*$/.exec(line)
      if (!m || m[1].trim() === '') {
        const name = plainName(line.slice(1).replace(/\].*$/, ''))
        throw new ConfigError(
          `${path}:${lineno}: malformed section header${name === undefined ? '' : ` (section '${name}')`}`,
          'Section headers look like [api_database], alone on their line.',
          'BadNovaConf',
        )
      }
      section = normalizeSection(m[1].trim())
      sections[section] ??= Object.create(null) as Record<string, string>
      multi[section] ??= Object.create(null) as Record<string, string[]>
      continue
    }
    if (line.startsWith('#') || line.startsWith(';')) continue
    const eq = line.indexOf('=')
    const colon = line.indexOf(':')
    const sep = eq === -1 ? colon : colon === -1 ? eq : Math.min(eq, colon)
    if (sep === -1) {
      throw new ConfigError(
        `${path}:${lineno}: the line${where(section)} has no '=' or ':'`,
        "Every option line is 'key = value'. The line is not shown: it may hold a secret.",
        'BadNovaConf',
      )
    }
    const k = line.slice(0, sep).trim()
    if (k === '') throw new ConfigError(`${path}:${lineno}: option without a name`, 'Every option line is key = value.', 'BadNovaConf')
    key = k
    keyLine = lineno
    value = [unquote(line.slice(sep + 1).trim())]
  }
  flush()
  return {path, sections, multi}
}

/** nova's full sample config, every option commented, is under 1 MiB: 16 MiB is no nova.conf. */
export const MAX_NOVA_CONF_BYTES = 16 * MIB

/** Reads and parses a nova.conf file; a missing, unreadable, non-regular or oversized file is a ConfigError. */
export function readNovaConf(path: string): NovaConf {
  const text = readBoundedFileSync(
    path,
    MAX_NOVA_CONF_BYTES,
    (why, errno) =>
      new ConfigError(
        `cannot read nova.conf ${path}: ${why}`,
        errno?.code === 'EACCES'
          ? 'Run as a user that can read it (often root or the nova group), or pass --api-db / --placement-db.'
          : errno === undefined
            ? 'Give --nova-conf (or CLOUDCTL_NOVA_CONF / the profile) the path of nova.conf itself, a regular file.'
            : 'Check the --nova-conf path (or CLOUDCTL_NOVA_CONF / the profile).',
        'NovaConfUnreadable',
      ),
  )
  return parseNovaConf(text, path)
}

/**
 * An option's value with oslo's substitution: `$name` / `${name}` from the same section, then
 * [DEFAULT]; `$group.name` from that group; `$$` and `\\$` are '$' (oslo.config's Template and
 * StrSubWrapper). Undefined when the section or option is absent. oslo also substitutes the defaults
 * of options the file does not set, which a reader of the file alone cannot know: such a reference
 * is left as written.
 */
export function getOption(conf: NovaConf, section: string, key: string): string | undefined {
  const s = normalizeSection(section)
  const raw = conf.sections[s]?.[key]
  if (raw === undefined) return undefined
  return interpolate(conf, s, raw, new Set([`${s}.${key}`]))
}

// oslo's idpattern, case-insensitive as string.Template's: a dot names a group.
const REFERENCE = /\\\$|\$(?:\$|\{([A-Za-z_][A-Za-z0-9_.]*)\}|([A-Za-z_][A-Za-z0-9_.]*))/g

function interpolate(conf: NovaConf, section: string, raw: string, seen: Set<string>): string {
  return raw.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => {
    if (whole === '$$' || whole === '\\$') return '$'
    const name = (braced ?? bare) as string
    const dot = name.indexOf('.')
    const places: Array<[string, string]> =
      dot === -1
        ? [
            [section, name],
            ['DEFAULT', name],
          ]
        : [[normalizeSection(name.slice(0, dot)), name.slice(dot + 1)]]
    for (const [sec, opt] of places) {
      const v = conf.sections[sec]?.[opt]
      if (v !== undefined && !seen.has(`${sec}.${opt}`)) return interpolate(conf, sec, v, new Set([...seen, `${sec}.${opt}`]))
    }
    // oslo would fail here; leaving the text lets the URL parser report something readable.
    return whole
  })
}

/**
 * [DEFAULT] default_availability_zone as nova reads it (with substitution): the zone of a host in no
 * aggregate with availability_zone metadata. The one reader, for `hosts list` and the scheduler
 * configuration alike. Set but empty is an empty zone name, as nova has it; unset is nova's default.
 */
export function defaultAvailabilityZone(conf: NovaConf): string {
  return getOption(conf, 'DEFAULT', 'default_availability_zone') ?? NOVA_DEFAULT_AVAILABILITY_ZONE
}

/** `[section] connection`, or a ConfigError naming the file and section. */
export function requireConnection(conf: NovaConf, section: 'api_database' | 'placement_database' | 'database', hint?: string): string {
  const v = optionalConnection(conf, section)
  if (v === undefined) {
    throw new ConfigError(
      `${conf.path} has no [${section}] connection`,
      hint ?? `Add 'connection = mysql+pymysql://USER:PASSWORD@HOST/DB' under [${section}], or pass the URL with a flag.`,
      'NovaConfMissingSection',
    )
  }
  return v
}

export function optionalConnection(conf: NovaConf, section: 'api_database' | 'placement_database' | 'database'): string | undefined {
  const v = getOption(conf, section, 'connection')
  if (v === undefined || v.trim() === '') return undefined
  registerUrlSecret(v)
  return v.trim()
}
