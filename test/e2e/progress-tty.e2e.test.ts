/**
 * The progress line as an operator sees it: the CLI runs on a pseudo-terminal (util-linux `script`),
 * so stdout and stderr are both the terminal, as in an interactive shell.
 */
import {execa} from 'execa'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {BIN, ROOT} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'
import {generateCloud} from '../support/generator.js'

const ERASE = '\r\u001B[2K'
const DEMO = 'examples/demo-cloud.yaml'

async function onTerminal(args: string[]): Promise<{exitCode: number; output: string}> {
  const command = ['node', BIN, ...args].map((a) => `'${a}'`).join(' ')
  // -e: script exits with the command's code; the transcript file is not needed (output is on stdout).
  const r = await execa('script', ['-q', '-e', '-c', command, '/dev/null'], {cwd: ROOT, reject: false, env: {NO_COLOR: '1', COLUMNS: '120'}, input: ''})
  return {exitCode: r.exitCode ?? -1, output: String(r.stdout)}
}

describe.skipIf(process.platform !== 'linux')('progress on a terminal', () => {
  it('audit all: one line per phase, each drawn over the last and erased before the report', async () => {
    const r = await onTerminal(['audit', 'all', '-s', DEMO])
    expect(r.exitCode, r.output).toBe(3)
    const reading = r.output.indexOf(`${ERASE}reading ${DEMO} ...`)
    const auditing = r.output.indexOf(`${ERASE}auditing leaks, providers, cells, pinning, usage, aggregates ...`)
    expect(reading).toBeGreaterThanOrEqual(0)
    expect(auditing).toBeGreaterThan(reading)
    // The last phase line is erased, and the whole report comes after it.
    const cleared = r.output.indexOf(ERASE, auditing + 1)
    expect(cleared).toBeGreaterThan(auditing)
    expect(r.output.slice(0, cleared)).not.toContain('audit leaks')
    expect(r.output.slice(cleared)).toContain('audit leaks')
    expect(r.output.slice(cleared)).not.toContain(' ...')
  })

  it('simulate capacity shows its phases too', async () => {
    const r = await onTerminal(['simulate', 'capacity', '-s', DEMO, '--flavor', 'm1.small'])
    expect(r.exitCode, r.output).toBe(0)
    expect(r.output).toContain(`${ERASE}reading ${DEMO} ...`)
    expect(r.output).toContain(`${ERASE}counting capacity ...`)
  })

  describe('on live databases', () => {
    let cloud: TestCloud
    beforeAll(async () => {
      const now = new Date().toISOString().slice(0, 19).replace('T', ' ')
      cloud = await createTestCloud('e2e_progress', {cells: ['cell1']})
      await seedSnapshot(generateCloud({seed: 5, cells: 1, hostsPerCell: 3, now}).snapshot, cloud)
    })
    afterAll(async () => {
      await cloud?.drop()
    })

    it('simulate capacity follows the read of the databases, then counts', async () => {
      const r = await onTerminal(['simulate', 'capacity', '--api-db', cloud.apiUrl, '--placement-db', cloud.placementUrl, '--flavor', 'm1.small'])
      expect(r.exitCode, r.output).toBe(0)
      const reading = r.output.search(new RegExp(`${ERASE.replace('[', '\\[')}reading (nova_api|placement|cell1): \\w+ [\\d,]+ rows \\(\\d+ tables read\\)`))
      expect(reading).toBeGreaterThanOrEqual(0)
      expect(r.output.indexOf(`${ERASE}counting capacity ...`)).toBeGreaterThan(reading)
    })
  })

  it('-q and -f json silence it', async () => {
    for (const extra of [['-q'], ['--quiet'], ['-f', 'json']]) {
      const r = await onTerminal(['audit', 'all', '-s', DEMO, ...extra])
      expect(r.exitCode, r.output).toBe(3)
      expect(r.output).not.toContain(' ...')
      expect(r.output).not.toContain(ERASE)
    }
  })
})
