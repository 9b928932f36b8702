/**
 * Whether and how a connection uses TLS, decided as nova's driver decides it. SQLAlchemy 1.4's
 * pymysql dialect moves ssl_ca, ssl_key, ssl_cert, ssl_capath, ssl_cipher and ssl_check_hostname
 * from the URL query into PyMySQL's `ssl` dict (ssl_check_hostname as a boolean); ssl_disabled,
 * ssl_verify_cert and ssl_verify_identity reach PyMySQL 1.0 as keyword arguments, still strings.
 * A read_default_file's [client] ssl-ca, ssl-capath, ssl-cert, ssl-key, ssl-cipher fill the dict.
 * PyMySQL 1.0 then:
 *  - ssl_disabled, any non-empty string (even 'false'): no TLS at all;
 *  - ssl_verify_cert or ssl_verify_identity non-empty: TLS with a new dict that drops every other
 *    ssl_* value (CA, client certificate); the certificate is checked against the system store
 *    only when ssl_verify_cert says so, the host name never;
 *  - otherwise a non-empty dict means TLS; with a CA (ssl_ca or ssl_capath) the certificate is
 *    verified and, unless ssl_check_hostname is false, the host name (IP SANs for an address);
 *    without one nothing is verified.
 * Where following PyMySQL would mean silently dropping what the operator wrote, cloudctl refuses
 * the URL instead (exit 2): it never ignores an ssl_* parameter.
 */
import {readdirSync} from 'node:fs'
import {isIP} from 'node:net'
import {join} from 'node:path'

import {CloudctlError, ConfigError, ExitCode} from '../errors.js'
import {MIB, readBoundedFileSync} from '../util/bounded-read.js'

/** What cloudctl does with each ssl parameter PyMySQL knows: the README "Connecting" table says the same. */
export const SSL_PARAMETERS = {
  ssl_ca: 'honoured',
  ssl_capath: 'honoured',
  ssl_cert: 'honoured',
  ssl_key: 'honoured',
  ssl_check_hostname: 'honoured',
  ssl_verify_cert: 'honoured',
  ssl_verify_identity: 'honoured',
  ssl_disabled: 'honoured',
  ssl_cipher: 'refused',
  ssl: 'refused',
} as const satisfies Record<string, 'honoured' | 'refused'>

/** The option file keys PyMySQL reads into its ssl dict (read_default_file). */
export const OPTION_FILE_SSL_KEYS = ['ssl-ca', 'ssl-capath', 'ssl-cert', 'ssl-key', 'ssl-cipher'] as const

/** A connection's TLS: file paths (read by connection.ts) and what is verified. */
export interface TlsSettings {
  ca?: string
  /** A directory of hashed CA certificates (openssl rehash), as OpenSSL's CApath. */
  capath?: string
  cert?: string
  key?: string
  /** The certificate must chain to the CA (or Node's CA store when no CA is given). */
  verifyCert: boolean
  /** The certificate must name the host connected to (DNS or IP SAN). */
  checkHostname: boolean
}

const HINT = 'README "Connecting" lists every ssl_* parameter, what PyMySQL (nova) does with it and what cloudctl does.'

/** SQLAlchemy's util.asbool, which the dialect applies to ssl_check_hostname. */
function asbool(v: string): boolean | undefined {
  const s = v.trim().toLowerCase()
  if (['true', 'yes', 'on', 'y', 't', '1'].includes(s)) return true
  if (['false', 'no', 'off', 'n', 'f', '0'].includes(s)) return false
  return undefined
}

/**
 * The TLS of a connection, or undefined for none. `params` are the URL's query parameters,
 * `optionFile` the [client] group of its read_default_file (if any), `host` the host name PyMySQL
 * checks the certificate against ('localhost' over a unix socket without a host).
 */
export function decideTls(
  params: Readonly<Record<string, string>>,
  optionFile: Readonly<Record<string, string>> | undefined,
  host: string,
  label: string,
): TlsSettings | undefined {
  const fail = (what: string, hint = HINT): ConfigError => new ConfigError(`${label}: ${what}`, hint, 'BadDbTls')
  const given = Object.keys(params).filter((k) => k === 'ssl' || k.startsWith('ssl_'))
  for (const k of given) {
    if (!(k in SSL_PARAMETERS)) throw fail(`has the query parameter '${k}', which PyMySQL does not know (nova would fail to connect)`)
    if (k === 'ssl')
      throw fail("has the query parameter 'ssl', which PyMySQL cannot use from a URL (nova would fail to connect): use ssl_ca, ssl_cert, ssl_key")
    if (k === 'ssl_cipher')
      throw fail(
        'sets ssl_cipher, which cloudctl does not implement (its driver cannot reproduce OpenSSL cipher selection as PyMySQL applies it): remove it to connect with the default ciphers',
      )
  }
  const fileSsl = Object.fromEntries(OPTION_FILE_SSL_KEYS.filter((k) => (optionFile?.[k] ?? '') !== '').map((k) => [k, optionFile?.[k] as string]))
  if (fileSsl['ssl-cipher'] !== undefined)
    throw fail('its option file (read_default_file) sets ssl-cipher, which cloudctl does not implement: remove it to connect with the default ciphers')

  // SQLAlchemy drops blank query values (parse_qsl), so every parameter here has a value.
  const present = (k: string): boolean => k in params
  const dictKeys = ['ssl_ca', 'ssl_capath', 'ssl_cert', 'ssl_key', 'ssl_check_hostname'].filter(present)
  const others = [...given.filter((k) => k !== 'ssl_disabled'), ...Object.keys(fileSsl).map((k) => `${k} (option file)`)]

  if (present('ssl_disabled')) {
    const v = asbool(params.ssl_disabled)
    if (v !== true)
      throw fail(
        `sets ssl_disabled=${v === false ? params.ssl_disabled : '…'}: PyMySQL turns TLS off for any non-empty value, even 'false'`,
        'Remove ssl_disabled to use TLS, or write ssl_disabled=true to connect without it (as nova then does).',
      )
    if (others.length > 0)
      throw fail(
        `sets ssl_disabled with ${others.join(', ')}: PyMySQL then ignores them and connects without TLS`,
        'Remove ssl_disabled, or the other ssl parameters.',
      )
    return undefined
  }

  if (present('ssl_verify_cert') || present('ssl_verify_identity')) {
    const dropped = others.filter((k) => k !== 'ssl_verify_cert' && k !== 'ssl_verify_identity')
    if (dropped.length > 0) {
      throw fail(
        `sets ${present('ssl_verify_cert') ? 'ssl_verify_cert' : 'ssl_verify_identity'} with ${dropped.join(', ')}: PyMySQL then drops ${dropped.join(', ')} and checks the certificate against the system CA store only`,
        'With a private CA, remove ssl_verify_cert / ssl_verify_identity: ssl_ca alone verifies the certificate and the host name.',
      )
    }
    let verifyCert = false
    if (present('ssl_verify_cert')) {
      const v = params.ssl_verify_cert.toLowerCase()
      if (['required', 'optional', '1', 'true', 'yes'].includes(v)) verifyCert = true
      else if (!['none', '0', 'false', 'no'].includes(v)) {
        // PyMySQL silently verifies nothing for an unknown value; a typo must not turn checks off.
        throw fail(
          'has an ssl_verify_cert that is none of true, false, required, optional, none, 1, 0, yes, no',
          'Write ssl_verify_cert=true or ssl_verify_cert=false.',
        )
      }
    }
    return {verifyCert, checkHostname: false}
  }

  const ca = params.ssl_ca ?? fileSsl['ssl-ca']
  const capath = params.ssl_capath ?? fileSsl['ssl-capath']
  const cert = params.ssl_cert ?? fileSsl['ssl-cert']
  const key = params.ssl_key ?? fileSsl['ssl-key']
  if (dictKeys.length === 0 && Object.keys(fileSsl).length === 0) return undefined
  if (key !== undefined && cert === undefined)
    throw fail('sets ssl_key without ssl_cert: PyMySQL ignores the key then', 'Add ssl_cert (the client certificate) or remove ssl_key.')
  let checkHostname = true
  if (params.ssl_check_hostname !== undefined) {
    const v = asbool(params.ssl_check_hostname)
    if (v === undefined)
      throw fail('has an ssl_check_hostname that is not a boolean (SQLAlchemy would refuse it)', 'Write ssl_check_hostname=true or ssl_check_hostname=false.')
    checkHostname = v
  }
  const hasCa = ca !== undefined || capath !== undefined
  const out: TlsSettings = {ca, capath, cert, key, verifyCert: hasCa, checkHostname: hasCa && checkHostname}
  if (out.checkHostname && isIP(host) !== 0) {
    // mysql2 gives Node no server name for an address, so Node checks the certificate against
    // another name: the check PyMySQL makes cannot be made, and none is pretended.
    throw fail(
      `connects to the address ${host} with a CA: cloudctl cannot check a certificate's IP address as PyMySQL does (its driver checks names only)`,
      `Connect by the host name in the server certificate (e.g. localhost), or add ssl_check_hostname=false to accept any certificate signed by the CA (as nova then does).`,
    )
  }
  return out
}

// ---------------------------------------------------------------- files, for mysql2

function readSslFile(path: string | undefined, label: string): string | undefined {
  if (path === undefined) return undefined
  // A PEM bundle is kilobytes; 16 MiB bounds a device or FIFO named by mistake (util/bounded-read.ts).
  return readBoundedFileSync(
    path,
    16 * MIB,
    (why) =>
      new CloudctlError(`cannot read ${label} TLS file ${path}: ${why}`, {
        exitCode: ExitCode.CONFIG,
        code: 'DbTlsFile',
        hint: 'Check the ssl_ca / ssl_capath / ssl_cert / ssl_key parameters of the database URL (or ssl-* in its option file).',
      }),
  )
}

/** OpenSSL looks CApath certificates up by subject hash: HASH.N files, as `openssl rehash` names them. */
const HASHED_CERT = /^[0-9a-f]{8}\.\d+$/
/** A CA directory holds a few dozen certificates; this bounds a directory named by mistake. */
const MAX_CAPATH_FILES = 1000

function readCaPath(dir: string, label: string): string[] {
  const fail = (why: string): CloudctlError =>
    new CloudctlError(`cannot use ${label} TLS CA directory ${dir} (ssl_capath): ${why}`, {
      exitCode: ExitCode.CONFIG,
      code: 'DbTlsFile',
      hint: 'ssl_capath names a directory of CA certificates named by subject hash (run `openssl rehash DIR`); or use ssl_ca=FILE.',
    })
  let names: string[]
  try {
    names = readdirSync(dir)
      .filter((n) => HASHED_CERT.test(n))
      .sort()
  } catch (error) {
    throw fail((error as {code?: string}).code ?? 'unreadable')
  }
  if (names.length === 0) throw fail('no hashed certificate files (HASH.0) in it')
  if (names.length > MAX_CAPATH_FILES) throw fail(`more than ${MAX_CAPATH_FILES} certificate files`)
  return names.map((n) => readSslFile(join(dir, n), label) as string)
}

/** mysql2's public ssl options (handed to Node's tls) for what tls.ts decided. */
export function mysql2Ssl(t: TlsSettings, label: string): import('mysql2').SslOptions {
  const ca = [readSslFile(t.ca, label), ...(t.capath === undefined ? [] : readCaPath(t.capath, label))].filter((c): c is string => c !== undefined)
  return {
    // Without a CA of its own, a verifying connection uses Node's CA store (PyMySQL: the system's).
    ca: ca.length === 0 ? undefined : ca,
    cert: readSslFile(t.cert, label),
    key: readSslFile(t.key, label),
    rejectUnauthorized: t.verifyCert,
    verifyIdentity: t.checkHostname,
  }
}
