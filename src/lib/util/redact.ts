/**
 * Password redaction for every string that may carry a database or transport URL: flags, config,
 * nova.conf values, cell_mappings columns, error messages from drivers.
 */
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)([^:/?#@\s]*):([^@\s/]*)@/gi
const PASSWORD_PARAM = /([?&;](?:password|passwd|pwd)=)[^&;\s]*/gi

export const REDACTED = '***'

/** mysql+pymysql://nova:SECRET@db/nova -> mysql+pymysql://nova:***@db/nova (also rabbit://a:b@h,c:d@h2). */
export function redact(text: string): string
export function redact(text: string | null): string | null
export function redact(text: string | undefined): string | undefined
export function redact(text: string | null | undefined): string | null | undefined
export function redact(text: string | null | undefined): string | null | undefined {
  if (text === null || text === undefined) return text
  return text
    .replace(USERINFO, (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(/(,)([^:/?#@\s,]*):([^@\s/,]*)@/g, (_m, sep: string, user: string) => `${sep}${user}:${REDACTED}@`)
    .replace(PASSWORD_PARAM, (_m, key: string) => `${key}${REDACTED}`)
}

/** Every secret we were handed, so a message that echoes one verbatim can be scrubbed too. */
const knownSecrets = new Set<string>()

export function registerSecret(secret: string | undefined | null): void {
  if (secret && secret.length >= 3) knownSecrets.add(secret)
}

export function scrub(text: string): string {
  let out = redact(text)
  for (const secret of knownSecrets) out = out.split(secret).join(REDACTED)
  return out
}
