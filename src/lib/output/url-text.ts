/**
 * A connection URL as an 80-column listing shows it: scheme, hosts and path (the database or the
 * virtual host). The user name, the password (already hidden) and the query (charset=utf8) are left
 * out; --json and -c keep the whole URL, password redacted.
 */
export function urlWhere(url: string | null): string {
  if (!url) return ''
  const m = /^([a-z][\w+.-]*):\/\/([^/?#]*)([^?#]*)/i.exec(url)
  if (!m) return url
  // A transport URL lists several brokers, each with its own credentials: user:pass@host:port,...
  const hosts = m[2]
    .split(',')
    .map((h) => h.replace(/^.*@/, ''))
    .join(',')
  return `${m[1]}://${hosts}${m[3]}`
}
