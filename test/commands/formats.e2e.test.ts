import {parse as parseYaml} from 'yaml'
import {describe, expect, it} from 'vitest'

import {cloudctl} from '../support/cli.js'

// Output formats through the built CLI (npm run build first), on the bundled demo cloud.
const DEMO = ['--snapshot', 'examples/demo-cloud.yaml']

describe('-f / -c output formats', () => {
  it('-f json is --json, --noindent prints one line, exit codes unchanged', async () => {
    const a = await cloudctl(['audit', 'leaks', ...DEMO, '--json'])
    const b = await cloudctl(['audit', 'leaks', ...DEMO, '-f', 'json'])
    const c = await cloudctl(['audit', 'leaks', ...DEMO, '--format=json', '--noindent'])
    expect(a.exitCode).toBe(3)
    expect(b.exitCode).toBe(3)
    expect(c.exitCode).toBe(3)
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout))
    expect(c.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(c.stdout)).toEqual(JSON.parse(a.stdout))
  })

  it('-f yaml is the same document as json', async () => {
    const j = await cloudctl(['cells', 'list', ...DEMO, '--json'])
    const y = await cloudctl(['cells', 'list', ...DEMO, '-f', 'yaml'])
    expect(y.exitCode).toBe(j.exitCode)
    expect(parseYaml(y.stdout)).toEqual(JSON.parse(j.stdout))
  })

  it('-f csv: a header and one quoted row per listing row; -c picks and orders columns', async () => {
    const j = JSON.parse((await cloudctl(['audit', 'leaks', ...DEMO, '--json'])).stdout) as {findings: Array<{code: string; subject: {instance_uuid?: string}}>}
    const r = await cloudctl(['audit', 'leaks', ...DEMO, '-f', 'csv', '-c', 'code', '-c', 'subject.instance_uuid'])
    expect(r.exitCode).toBe(3)
    const lines = r.stdout.trim().split('\n')
    expect(lines[0]).toBe('"code","subject.instance_uuid"')
    expect(lines.slice(1)).toEqual(j.findings.map((f) => `"${f.code}","${f.subject.instance_uuid ?? ''}"`))
  })

  it('-f value: no header, space-separated, one row per line; comma lists in -c', async () => {
    const j = JSON.parse((await cloudctl(['cells', 'list', ...DEMO, '--json'])).stdout) as {cells: Array<{name: string; uuid: string}>}
    const r = await cloudctl(['cells', 'list', ...DEMO, '-f', 'value', '-c', 'name,uuid'])
    expect(r.stdout.trim().split('\n')).toEqual(j.cells.map((c) => `${c.name} ${c.uuid}`))
  })

  it('-c with json gives the selected rows; with the table a table of those columns only', async () => {
    const r = await cloudctl(['cells', 'list', ...DEMO, '-f', 'json', '-c', 'name'])
    const rows = JSON.parse(r.stdout) as Array<Record<string, unknown>>
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) expect(Object.keys(row)).toEqual(['name'])
    const t = await cloudctl(['cells', 'list', ...DEMO, '-c', 'name', '-c', 'state'])
    expect(t.stdout).toMatch(/│ name +│ state +│/)
    expect(t.stdout).not.toContain('Transport URL')
  })

  it('an unknown column or format, or --json with another -f, is a usage error (exit 2) naming the choices', async () => {
    const c = await cloudctl(['cells', 'list', ...DEMO, '-c', 'nope'])
    expect(c.exitCode).toBe(2)
    expect(c.stderr).toContain('no column "nope"')
    expect(c.stderr).toMatch(/Hint: Columns: name, uuid/)
    const cj = await cloudctl(['cells', 'list', ...DEMO, '-f', 'json', '-c', 'nope'])
    expect(cj.exitCode).toBe(2)
    expect((JSON.parse(cj.stdout) as {error: {code: string}}).error.code).toBe('UsageError')
    const f = await cloudctl(['cells', 'list', ...DEMO, '-f', 'xml'])
    expect(f.exitCode).toBe(2)
    expect(f.stderr).toMatch(/table, json, yaml, csv, value|table\|json\|yaml\|csv\|value/)
    const both = await cloudctl(['cells', 'list', ...DEMO, '--json', '-f', 'csv'])
    expect(both.exitCode).toBe(2)
    expect(both.stderr).toContain('--json and -f csv')
  })

  it('snapshot capture keeps -o FILE and has no format flags', async () => {
    const h = await cloudctl(['snapshot', 'capture', '--help'])
    expect(h.stdout).toContain('-o, --output=<value>')
    expect(h.stdout).not.toContain('--format')
    const r = await cloudctl(['snapshot', 'capture', '-o', 'x.json', '-f', 'json'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/Nonexistent flag: -f/)
  })
})
