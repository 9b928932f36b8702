/**
 * Shared by the audit-live*.test.ts files: run the built CLI's audits against a test cloud on
 * MariaDB and read the one JSON document it prints.
 */
import {expect} from 'vitest'

import type {Finding, FindingSubject} from '../../src/lib/domain/finding.js'
import {type Connection, closeConnection} from '../../src/lib/db/connection.js'
import {cloudctl, oneJsonDocument} from '../support/cli.js'
import {adminConnection, type TestCloud} from '../support/db.js'

export interface AuditDoc {
  findings: Finding[]
  counts: {total: number; by_severity: Record<string, number>; by_check: Record<string, Record<string, number>>; by_code: Record<string, number>}
  checks: string[]
  unavailable_cells: Array<{uuid: string; name: string | null; error?: string}>
  exit_code: number
}

export interface AuditRun {
  exitCode: number
  doc: AuditDoc
  stderr: string
}

/** Services must look alive at capture time: generated clouds use the current clock. */
export const nowSql = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ')

/** `cloudctl audit <check> --json` on the live databases of `cloud`. */
export async function auditLive(cloud: TestCloud, check: string, extra: string[] = []): Promise<AuditRun> {
  const r = await cloudctl(['audit', check, '--json', '--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl, ...extra])
  expect([0, 3], r.stderr).toContain(r.exitCode)
  const doc = oneJsonDocument(r.stdout) as AuditDoc
  expect(doc.exit_code).toBe(r.exitCode)
  return {exitCode: r.exitCode, doc, stderr: r.stderr}
}

/** code + the subject keys an operator reads, for exact comparisons of whole reports. */
export function brief(f: Pick<Finding, 'code' | 'subject'>): string {
  return `${f.code} ${subjectLine(f.subject)}`
}

export function subjectLine(s: FindingSubject): string {
  return ['cell', 'host', 'node', 'numa_cell', 'aggregate', 'provider_uuid', 'consumer_uuid', 'instance_uuid', 'migration_uuid']
    .filter((k) => s[k as keyof FindingSubject] !== undefined)
    .map((k) => `${k}=${s[k as keyof FindingSubject]}`)
    .join(' ')
}

/** Runs statements on the test server as root (fault planting by hand, where the generator has no switch). */
export async function sql(run: (conn: Connection) => Promise<void>): Promise<void> {
  const conn = await adminConnection()
  try {
    await run(conn)
  } finally {
    await closeConnection(conn)
  }
}

/** First column of the first row. */
export async function scalar<T>(conn: Connection, query: string, params: unknown[] = []): Promise<T> {
  const [rows] = (await conn.query(query, params)) as unknown as [Array<Record<string, T>>]
  if (rows.length === 0) throw new Error(`no row for ${query}`)
  return Object.values(rows[0])[0]
}
