import {execa} from 'execa'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {BIN, ROOT} from '../support/cli.js'

// `audit all` on the demo, in a real terminal (a tmux pane of a given width), built CLI (npm run
// build first). capture-pane -J joins the lines the terminal wrapped, so a line longer than the pane
// shows as longer: the check can fail. The node is the one running the tests: the pane's login shell
// resets PATH to the system's, whose node may be older than cloudctl needs.
const socket = `cloudctl-width-${process.pid}`
const dir = mkdtempSync(join(tmpdir(), 'cloudctl-width-'))
const tmux = (...args: string[]) => execa('tmux', ['-L', socket, '-f', '/dev/null', ...args], {cwd: ROOT})

afterAll(async () => {
  await tmux('kill-server').catch(() => undefined)
  rmSync(dir, {recursive: true, force: true})
})

async function renderIn(width: number, args: string[]): Promise<{lines: string[]; exitCode: number}> {
  const session = `w${width}`
  const rcFile = join(dir, `${session}.rc`)
  // COLUMNS says otherwise on purpose: the terminal's own width wins.
  const cmd = `COLUMNS=300 ${process.execPath} ${BIN} ${args.join(' ')}; echo $? > ${rcFile}; tmux -L ${socket} wait-for -S ${session}`
  await tmux('new-session', '-d', '-s', session, '-x', String(width), '-y', '50', '-c', ROOT)
  await tmux('set-option', '-t', session, 'history-limit', '50000')
  await tmux('send-keys', '-t', session, `clear; ${cmd}`, 'Enter')
  await tmux('wait-for', session)
  const pane = await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', session)
  const all = pane.stdout.split('\n')
  // From the report's first line on (the prompt and the echoed command line are the shell's).
  const start = all.findIndex((l) => /snapshot: no findings|^audit /.test(l))
  return {lines: all.slice(start).filter((l) => l.trim() !== ''), exitCode: Number(readFileSync(rcFile, 'utf8').trim())}
}

describe('audit all fits the terminal', () => {
  for (const width of [80, 200]) {
    it(`no line wider than ${width} columns, every finding shown`, async () => {
      const json = await execa('node', [BIN, 'audit', 'all', '--snapshot', 'examples/demo-cloud.yaml', '--json'], {cwd: ROOT, reject: false})
      const report = JSON.parse(String(json.stdout)) as {findings: Array<{code: string}>}
      const {lines, exitCode} = await renderIn(width, ['audit', 'all', '--snapshot', 'examples/demo-cloud.yaml'])
      expect(exitCode).toBe(3)
      expect(lines.length).toBeGreaterThan(20)
      const tooWide = lines.filter((l) => Array.from(l.trimEnd()).length > width)
      expect(tooWide).toEqual([])
      // Every finding code appears (a code may be broken across lines only after a '.').
      const text = lines.join('\n').replace(/[│┌┐└┘├┤┬┴┼─]/g, ' ')
      for (const code of new Set(report.findings.map((f) => f.code))) expect(text.replace(/\.\s*\n\s*/g, '.')).toContain(code)
      expect(text).toContain('summary')
      if (width >= 160) expect(text).toMatch(/Severity +Code +Subject +Finding +Repair/)
      else expect(text).toContain('Finding → repair')
    })
  }
})
