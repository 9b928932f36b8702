/**
 * `-s -` reads the snapshot from stdin (issue 29, item 15), through the built CLI (npm run build
 * first): `ssh db1 cloudctl snapshot capture -o - | cloudctl audit all -s -`. Every format the file
 * reader knows, the same answer as from the file, errors naming stdin, no spool file left behind.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {describe, expect, it} from 'vitest'

import {cloudctl, ROOT} from '../support/cli.js'

const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
const spools = () => readdirSync(tmpdir()).filter((n) => n.startsWith('cloudctl-stdin-'))

describe('-s -', () => {
  it('YAML, JSON and gzip on stdin give what the file gives', async () => {
    const fromFile = await cloudctl(['audit', 'all', '-s', DEMO, '-f', 'csv', '-c', 'code'])
    const yaml = readFileSync(DEMO, 'utf8')
    const json = JSON.stringify((await import('yaml')).parse(yaml))
    const before = spools().length
    for (const input of [yaml, json]) {
      const r = await cloudctl(['audit', 'all', '-s', '-', '-f', 'csv', '-c', 'code'], {input})
      expect(r.stdout).toBe(fromFile.stdout)
      expect(r.exitCode).toBe(fromFile.exitCode)
    }
    const {execa} = await import('execa')
    const gz = await execa('node', [join(ROOT, 'bin/run.js'), 'hosts', 'list', '-s', '-', '-f', 'value', '-c', 'host'], {
      input: gzipSync(yaml),
      reject: false,
      env: {NO_COLOR: '1'},
    })
    expect(gz.stdout.split('\n')).toContain('cmp-r1-01')
    expect(spools().length).toBe(before)
  })

  it('snapshot show - and -s - (stdin is never read as an argument)', async () => {
    const input = readFileSync(DEMO, 'utf8')
    for (const args of [
      ['snapshot', 'show', '-'],
      ['snapshot', 'show', '-s', '-'],
    ]) {
      const r = await cloudctl(args, {input})
      expect(r.stderr).toBe('')
      expect(r.stdout).toContain('cell1')
      expect(r.exitCode).toBe(0)
    }
  })

  it('garbage on stdin: one line naming stdin, exit 2, nothing echoed', async () => {
    const r = await cloudctl(['audit', 'all', '-s', '-'], {input: 'garbage\u0011 not a snapshot'})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/^Error: stdin: /)
    expect(r.stderr).not.toContain('garbage')
  })
})
