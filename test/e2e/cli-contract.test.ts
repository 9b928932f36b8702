import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {cloudctl, oneJsonDocument} from '../support/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-e2e-'))

describe('cloudctl command-line contract', () => {
  it('lists the topics and shows the exit-code table in help', async () => {
    const root = await cloudctl(['--help'])
    expect(root.exitCode).toBe(0)
    for (const topic of ['snapshot', 'audit', 'repair', 'cells', 'simulate']) expect(root.stdout).toMatch(new RegExp(`\\b${topic}\\b`))
    const cmd = await cloudctl(['snapshot', 'validate', '--help'])
    expect(cmd.stdout).toContain('EXIT CODES')
    expect(cmd.stdout).toMatch(/5 {2}repair aborted and rolled back/)
  })

  it('a malformed snapshot is one line with a hint on stderr, exit 2, no stack trace', async () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"format_version": 1, "cells": [')
    const r = await cloudctl(['snapshot', 'validate', bad])
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^Error: .*not valid JSON/m)
    expect(r.stderr).toMatch(/^Hint: /m)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('--json errors exit with the same code and print one JSON document', async () => {
    const r = await cloudctl(['snapshot', 'validate', join(dir, 'missing.json'), '--json'])
    expect(r.exitCode).toBe(2)
    const doc = oneJsonDocument(r.stdout) as {error: {code: string; message: string; exit_code: number}}
    expect(doc.error.exit_code).toBe(2)
    expect(doc.error.message).toMatch(/does not exist/)
  })

  it('an unknown flag is a usage error, exit 2, also with --json', async () => {
    const plain = await cloudctl(['snapshot', 'validate', 'x.json', '--frobnicate'])
    expect(plain.exitCode).toBe(2)
    expect(plain.stderr).toMatch(/Nonexistent flag|Unexpected argument/)
    const json = await cloudctl(['snapshot', 'validate', 'x.json', '--frobnicate', '--json'])
    expect(json.exitCode).toBe(2)
    expect(oneJsonDocument(json.stdout)).toHaveProperty('error.code', 'UsageError')
  })

  it('--debug shows the stack trace that is otherwise hidden', async () => {
    const bad = join(dir, 'bad2.json')
    writeFileSync(bad, 'not: [json')
    const r = await cloudctl(['snapshot', 'validate', bad, '--debug'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/\n\s+at /)
  })
})
