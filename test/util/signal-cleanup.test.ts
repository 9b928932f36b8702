/**
 * A temporary file registered with removeOnSignal is gone after SIGINT/SIGTERM, and the process still
 * dies of the signal (issue 29, item 16). Runs the built module (npm run build first) in a child
 * process that is signalled while its "write" is in flight.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../support/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-signal-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const MODULE = pathToFileURL(join(ROOT, 'dist/lib/util/signal-cleanup.js')).href

describe('removeOnSignal', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s: the temporary file is removed and the exit is the signal', async (signal) => {
    const tmp = join(dir, `snap.json.tmp-${signal}`)
    const kept = join(dir, `other.tmp-${signal}`)
    const script = `
      import {writeFileSync} from 'node:fs'
      const {removeOnSignal} = await import(${JSON.stringify(MODULE)})
      writeFileSync(${JSON.stringify(tmp)}, 'half a snapshot')
      writeFileSync(${JSON.stringify(kept)}, 'done')
      removeOnSignal(${JSON.stringify(tmp)})
      const forget = removeOnSignal(${JSON.stringify(kept)})
      forget()
      console.log('ready')
      setInterval(() => {}, 1000)
    `
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    expect(existsSync(tmp)).toBe(true)
    child.kill(signal)
    const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])))
    expect(sig).toBe(signal)
    expect(code).toBeNull()
    expect(existsSync(tmp)).toBe(false)
    expect(existsSync(kept)).toBe(true)
  })
})
