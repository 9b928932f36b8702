/**
 * Every command's human output fits the terminal (issue 29, items 6-9), through the built CLI in a
 * real terminal: tmux panes of 80 and 200 columns (stdout a TTY, its width from the terminal). The
 * pane's lines are captured joined (-J), so a line the terminal had to wrap comes back whole and
 * counts at its full length. Also: piped output takes the width of the terminal on stderr, --max-width
 * 0 gives one row per line, and a non-UTF-8 locale gets ASCII borders. npm run build first; tmux is
 * installed by .ci/run (ensure_tmux).
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, ROOT} from '../support/cli.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const INSTANCE = '92603ad8-6fc4-46da-9e14-7a8b7fb99abd'
const SOCKET = `cloudctl-ux-${process.pid}`

/** Every command with a human report, on the demo. */
const COMMANDS: string[][] = [
  ...['all', 'aggregates', 'cells', 'leaks', 'pinning', 'providers', 'usage'].map((c) => ['audit', c, '-s', DEMO]),
  ...['aggregates', 'leaks', 'pinning', 'providers', 'usage'].map((c) => ['repair', c, '-s', DEMO]),
  ['repair', 'leaks', '--heal', '-s', DEMO],
  ['repair', 'leaks', '-v', '-s', DEMO],
  ['repair', 'leaks', '--max-count', '1', '--host', 'cmp-r1-04', '-s', DEMO],
  ['repair', 'pinning', '--force', '-v', '-s', DEMO],
  ['repair', 'providers', '--strategy', 'move', '-s', DEMO],
  ['cells', 'list', '-s', DEMO],
  ['cells', 'list', '--long', '-s', DEMO],
  ['cells', 'discover-hosts', '-s', DEMO],
  ['cells', 'map-instances', '-s', DEMO],
  ['cells', 'verify-instance', INSTANCE, '-s', DEMO],
  ['hosts', 'list', '-s', DEMO],
  ['simulate', 'boot', '--flavor', 'm1.small', '-s', DEMO],
  ['simulate', 'boot', '--flavor', 'm1.small', '--explain', '-s', DEMO],
  ['simulate', 'capacity', '-s', DEMO],
  ['simulate', 'migrate', '--instance', INSTANCE, '-s', DEMO],
  ['snapshot', 'show', '-s', DEMO],
  ['snapshot', 'validate', DEMO],
  ['snapshot', 'diff', DEMO, DEMO],
  ['explain'],
  ['explain', 'allocation.consumer-deleted'],
  ['version'],
]

let tmp: string
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, '-f', join(tmp, 'tmux.conf'), ...args], {encoding: 'utf8'})
const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`

/** Runs a shell line in a fresh detached pane of `width` columns; returns every line it printed, joined. */
async function inPane(width: number, line: string): Promise<string[]> {
  const name = `w${width}-${Math.random().toString(36).slice(2, 8)}`
  const done = join(tmp, `${name}.done`)
  tmux('new-session', '-d', '-s', name, '-x', String(width), '-y', '50', `cd ${quote(ROOT)}; ${line}; echo $? > ${quote(done)}; sleep 600`)
  try {
    for (let i = 0; i < 1200; i++) {
      try {
        readFileSync(done)
        break
      } catch {
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    const text = tmux('capture-pane', '-p', '-J', '-S', '-', '-t', name)
    return text.replace(/\n+$/, '').split('\n')
  } finally {
    tmux('kill-session', '-t', name)
  }
}

const cli = (args: string[], env = 'LANG=C.UTF-8') => `env ${env} NO_COLOR=1 node ${quote(BIN)} ${args.map(quote).join(' ')} 2>&1`
const columns = (line: string) => Array.from(line.replace(/\s+$/, '')).length

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'cloudctl-tmux-'))
  writeFileSync(join(tmp, 'tmux.conf'), 'set -g history-limit 100000\nset -g default-size 80x50\n')
  // A session held for the whole file: the server would exit with its last session and race the next.
  tmux('new-session', '-d', '-s', 'hold', 'sleep 3600')
})

afterAll(() => {
  try {
    tmux('kill-server')
  } catch {
    // already gone: every session was killed
  }
  if (tmp) rmSync(tmp, {recursive: true, force: true})
})

describe.each([80, 200])('in a %i-column terminal', (width) => {
  it.each(COMMANDS.map((args) => [args.map((a) => (a === DEMO ? 'demo' : a)).join(' '), args] as const))(
    '%s: no line wider than the terminal',
    async (_name, args) => {
      const lines = await inPane(width, cli(args))
      expect(lines.filter((l) => l.trim() !== '').length).toBeGreaterThan(0)
      expect(lines.join('\n')).not.toMatch(/Error:|UnexpectedError/)
      const over = lines.filter((l) => columns(l) > width)
      expect(over, over.join('\n')).toEqual([])
    },
    60_000,
  )
})

describe('width and borders outside a plain terminal', () => {
  it('hosts list: one line per host at 80 columns', async () => {
    const lines = await inPane(80, cli(['hosts', 'list', '-s', DEMO]))
    const hosts = JSON.parse(execFileSync('node', [BIN, 'hosts', 'list', '-s', DEMO, '--json'], {encoding: 'utf8'})) as {hosts: Array<{host: string}>}
    const body = lines.filter((l) => l.startsWith('│'))
    // The heading and one line per host (no continuation line), each host name whole.
    expect(body).toHaveLength(1 + hosts.hosts.length)
    for (const h of hosts.hosts) expect(body.some((l) => l.startsWith(`│ ${h.host} `))).toBe(true)
  }, 60_000)

  it('cells list --long: one line per cell, the uuid whole, and where its database and queue are', async () => {
    const lines = await inPane(80, cli(['cells', 'list', '--long', '-s', DEMO]))
    const {cells} = JSON.parse(execFileSync('node', [BIN, 'cells', 'list', '-s', DEMO, '--json'], {encoding: 'utf8'})) as {
      cells: Array<{name: string; uuid: string; database_connection: string}>
    }
    const body = lines.filter((l) => l.startsWith('│'))
    expect(body).toHaveLength(1 + cells.length)
    for (const c of cells) {
      expect(body.some((l) => l.startsWith(`│ ${c.name} `) && l.includes(` ${c.uuid} `))).toBe(true)
      // host/database of the URL, without its user or password
      const where = /@([^?]+)/.exec(c.database_connection)![1]
      expect(lines.some((l) => l.includes(`database  `) && l.endsWith(where))).toBe(true)
    }
    expect(lines.join('\n')).not.toMatch(/\*\*\*|charset/)
    expect(Math.max(...lines.map(columns))).toBeLessThanOrEqual(80)
  }, 60_000)

  it('repair leaks: the plan in plain words, its note once, the SQL only under -v', async () => {
    const lines = await inPane(80, cli(['repair', 'leaks', '--max-count', '1', '-s', DEMO]))
    const text = lines.join('\n')
    expect(text).toMatch(/^ {2}deleted instance 9c089546-670c-4fce-b963-d08860d435c7 on cmp-r1-04/m)
    expect(text).toMatch(/^ {4}- delete 3 allocations: VCPU=2, MEMORY_MB=4096, DISK_GB=40$/m)
    expect(text).not.toContain('DELETE FROM')
    expect(text.match(/--max-count/g)).toHaveLength(1)
    expect(Math.max(...lines.map(columns))).toBeLessThanOrEqual(80)
    const verbose = (await inPane(80, cli(['repair', 'leaks', '-v', '-s', DEMO]))).join('\n')
    expect(verbose).toMatch(/- delete 3 allocations/)
    expect(verbose).toMatch(/│ DELETE FROM +│/)
  }, 60_000)

  it('piped (stdout not a terminal): the width of the terminal on stderr', async () => {
    const lines = await inPane(80, `env LANG=C.UTF-8 NO_COLOR=1 node ${quote(BIN)} audit all -s ${quote(DEMO)} | cat`)
    const widest = Math.max(...lines.map(columns))
    expect(widest).toBeLessThanOrEqual(80)
    expect(widest).toBeGreaterThan(70)
  }, 60_000)

  it('--max-width 0: one row per line, however wide (a cell of several lines joined)', async () => {
    const lines = await inPane(80, cli(['hosts', 'list', '--long', '--max-width', '0', '-s', DEMO]))
    expect(lines.some((l) => columns(l) > 80)).toBe(true)
    const hosts = JSON.parse(execFileSync('node', [BIN, 'hosts', 'list', '-s', DEMO, '--json'], {encoding: 'utf8'})) as {hosts: unknown[]}
    const body = lines.filter((l) => l.startsWith('│'))
    // The heading and one line per host: no continuation line.
    expect(body).toHaveLength(1 + hosts.hosts.length)
  }, 60_000)

  it('LANG=C: ASCII borders', async () => {
    const lines = await inPane(80, cli(['hosts', 'list', '-s', DEMO], 'LANG=C LC_ALL='))
    expect(lines.some((l) => /^\+-+\+/.test(l))).toBe(true)
    expect(lines.join('\n')).not.toMatch(/[\u2500-\u257F]/)
  }, 60_000)
})
