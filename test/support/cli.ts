import {execa} from 'execa'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  exitCode: number
  stdout: string
  stderr: string
}

/** Runs the built CLI (dist/) as an operator would, without a TTY and without colours. */
export async function cloudctl(args: string[], opts: {env?: Record<string, string>; input?: string; timeout?: number} = {}): Promise<CliResult> {
  const r = await execa('node', [BIN, ...args], {
    cwd: ROOT,
    reject: false,
    env: {NO_COLOR: '1', ...opts.env},
    input: opts.input,
    timeout: opts.timeout ?? 120_000,
  })
  return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
}

/** stdout of a --json run must be exactly one JSON document. */
export function oneJsonDocument(stdout: string): unknown {
  return JSON.parse(stdout)
}
