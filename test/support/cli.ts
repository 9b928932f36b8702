import {execa} from 'execa'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/**
 * `node` arguments and environment that start the CLI held at a point of the repair executor
 * (`after-undo:MS` | `after-first-commit:MS`, see repair-pause.mjs): the test loads the hook itself.
 */
export function pausedCli(args: string[], pause: string): {argv: string[]; env: Record<string, string>} {
  return {argv: ['--import', fileURLToPath(new URL('./repair-pause.mjs', import.meta.url)), BIN, ...args], env: {REPAIR_PAUSE: pause}}
}

export interface CliResult {
  exitCode: number
  stdout: string
  stderr: string
}

/**
 * Runs the built CLI (dist/) as an operator would, without a TTY and without colours. Human output
 * is wrapped at the display width (120 when piped with no terminal and no $COLUMNS): tests that match
 * a message on one line get a wide $COLUMNS unless they set their own (the width tests do).
 */
export async function cloudctl(args: string[], opts: {env?: Record<string, string>; input?: string; timeout?: number} = {}): Promise<CliResult> {
  const r = await execa('node', [BIN, ...args], {
    cwd: ROOT,
    reject: false,
    env: {NO_COLOR: '1', COLUMNS: '1000', ...opts.env},
    input: opts.input,
    timeout: opts.timeout ?? 120_000,
  })
  return {exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr)}
}

/** stdout of a --json run must be exactly one JSON document. */
export function oneJsonDocument(stdout: string): unknown {
  return JSON.parse(stdout)
}
