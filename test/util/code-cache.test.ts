import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {codeCacheFile, codeCacheStates, IMPORT_PARAMETER, requireBundle, writeCodeCaches} from '../../src/lib/util/code-cache.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-code-cache-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** A CommonJS bundle as the build leaves it: exports, require, __dirname and a routed import(). */
function bundle(name: string, extra = ''): string {
  const file = join(dir, name)
  writeFileSync(
    file,
    `'use strict'\nconst {basename} = require('node:path')\nmodule.exports = {here: basename(__dirname), file: basename(__filename), twice: (n) => n * 2, load: () => ${IMPORT_PARAMETER}('node:os')}\n${extra}`,
  )
  return file
}

describe('requireBundle', () => {
  it('runs a CommonJS bundle with its code cache once one is written, and refuses a cache of other source', async () => {
    const file = bundle('b.cjs')
    const imported: string[] = []
    const load = (s: string) => (imported.push(s), import(s))
    const first = requireBundle(file, load) as {here: string; file: string; twice: (n: number) => number; load: () => Promise<{hostname: unknown}>}
    expect(codeCacheStates()[file]).toBe('absent')
    expect({here: first.here, file: first.file, twice: first.twice(21)}).toEqual({here: dir.split('/').pop(), file: 'b.cjs', twice: 42})
    // The bundle's import() goes through the loader's own.
    expect(typeof (await first.load()).hostname).toBe('function')
    expect(imported).toEqual(['node:os'])

    expect(writeCodeCaches()).toContain(codeCacheFile(file))
    expect(readFileSync(codeCacheFile(file)).length).toBeGreaterThan(0)
    const again = requireBundle(file, load) as {twice: (n: number) => number}
    expect(codeCacheStates()[file]).toBe('accepted')
    expect(again.twice(2)).toBe(4)

    // The bundle rebuilt, its old cache left beside it: V8 refuses the cache and compiles the source.
    bundle('b.cjs', 'module.exports.twice = (n) => n * 3\n')
    const rebuilt = requireBundle(file, load) as {twice: (n: number) => number}
    expect(codeCacheStates()[file]).toBe('rejected')
    expect(rebuilt.twice(2)).toBe(6)
  })

  it('keeps the bundle\'s line numbers in stack traces', () => {
    const file = join(dir, 'throws.cjs')
    writeFileSync(file, `'use strict'\n\nmodule.exports = () => {\n  throw new Error('from line 4')\n}\n`)
    const f = requireBundle(file, (s) => import(s)) as () => void
    let stack = ''
    try {
      f()
    } catch (error) {
      stack = String((error as Error).stack)
    }
    expect(stack).toContain(`${file}:4:`)
  })
})
