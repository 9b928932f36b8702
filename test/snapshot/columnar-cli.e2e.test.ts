import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {cloudctl} from '../support/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-columnar-cli-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('a columnar snapshot through the CLI', () => {
  it('audit all reports the demo cloud from .cloudctl.gz byte for byte as from its YAML; snapshot validate accepts it', async () => {
    const path = join(dir, 'demo.cloudctl.gz')
    await writeSnapshotFile(await readSnapshotFile('examples/demo-cloud.yaml'), path)
    const fromYaml = await cloudctl(['audit', 'all', '--snapshot', 'examples/demo-cloud.yaml', '--json'])
    const fromColumns = await cloudctl(['audit', 'all', '--snapshot', path, '--json'])
    expect(fromYaml.exitCode).toBe(3)
    expect(fromColumns.exitCode).toBe(3)
    expect(fromColumns.stdout).toBe(fromYaml.stdout)
    const validate = await cloudctl(['snapshot', 'validate', path])
    expect(validate.exitCode, validate.stderr).toBe(0)
  })
})
