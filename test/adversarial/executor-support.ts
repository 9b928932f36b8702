/**
 * Pieces shared by the executor adversarial tests: a real CLI process held at the executor's pause
 * point (test/support/repair-pause.mjs), and CHECKSUM TABLE of every table of every database of a cloud.
 */
import {execa} from 'execa'

import {adminConnection, type TestCloud} from '../support/db.js'
import {BIN, pausedCli, ROOT} from '../support/cli.js'
import {closeConnection} from '../repairs/support.js'

/** Polls until `probe` answers. Generous: on a loaded machine the CLI can take long to start. */
export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, ms = 90_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 25))
  }
}

export interface RunningCli {
  /** Resolves once the process has ended. */
  done: Promise<{exitCode: number; stdout: string; stderr: string}>
  /** True while the process has not ended. */
  running(): boolean
  stderr(): string
  /** Sends a signal to the process (SIGKILL: nothing of it runs on). */
  kill(signal: NodeJS.Signals): void
}

/** Starts `node bin/run.js args`; `pause` holds it in the executor (test/support/repair-pause.mjs). */
export function startCli(args: string[], pause?: string, env: Record<string, string> = {}): RunningCli {
  const run = pause ? pausedCli(args, pause) : {argv: [BIN, ...args], env: {}}
  const child = execa('node', run.argv, {cwd: ROOT, reject: false, env: {NO_COLOR: '1', ...env, ...run.env}})
  let stderr = ''
  let ended = false
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const done = child.then((r) => {
    ended = true
    return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
  })
  return {done, running: () => !ended, stderr: () => stderr, kill: (signal) => void child.kill(signal)}
}

/** Resolves once the CLI says it is paused (it then holds its locks and its open transactions). */
export async function paused(cli: RunningCli): Promise<void> {
  await waitFor(() => {
    if (cli.stderr().includes('REPAIR_PAUSE: paused')) return true
    if (!cli.running()) throw new Error(`the CLI ended before its pause: ${cli.stderr()}`)
    return undefined
  })
}

/** Keys a checksum by its database's role in the cloud (api, placement, cell0, cell1...) and table. */
export const byRole = (db: string, table: string): string => `${db.replace(/^.*_(api|placement|cell0|cell\d+)$/, '$1')}.${table}`

/** "database.table" (or `key`'s name) -> CHECKSUM TABLE of every table of every database of the cloud. */
export async function checksums(
  cloud: Pick<TestCloud, 'allDatabases'>,
  key: (db: string, table: string) => string = (db, t) => `${db}.${t}`,
): Promise<Map<string, string>> {
  const conn = await adminConnection()
  try {
    const out = new Map<string, string>()
    for (const db of cloud.allDatabases()) {
      const [tables] = await conn.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME', [db])
      for (const {t} of tables as Array<{t: string}>) {
        const [rows] = await conn.query(`CHECKSUM TABLE \`${db}\`.\`${t}\``)
        out.set(key(db, t), String((rows as Array<{Checksum: unknown}>)[0]?.Checksum))
      }
    }
    return out
  } finally {
    await closeConnection(conn)
  }
}

/** Tables whose checksum differs between two runs of `checksums`. */
export function changedTables(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort()
}
