import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {execa} from 'execa'
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

  it('hands the modules a door provides to the bundle\'s require(), and node\'s for the rest', () => {
    const file = join(dir, 'provided.cjs')
    writeFileSync(file, `module.exports = {door: require('#door'), sep: require('node:path').sep, resolves: typeof require.resolve}\n`)
    const door = {one: 1}
    expect(requireBundle(file, (s) => import(s), {'#door': door})).toEqual({door, sep: '/', resolves: 'function'})
  })

  it('under --enable-source-maps, compiles through node\'s loader: stack traces map to the sources, routing unchanged', async () => {
    const file = join(dir, 'mapped.cjs')
    // One line per statement; the map sends line 2 of the bundle to line 10 of "src.ts".
    const map = {version: 3, sources: ['src.ts'], names: [], mappings: ';AASA'}
    writeFileSync(`${file}.map`, JSON.stringify(map))
    // Opening with "use strict" as esbuild's bundles do: it must stay the first statement.
    writeFileSync(
      file,
      `"use strict";\nmodule.exports = {fail: () => { throw new Error('mapped') }, door: require('#door'), load: () => ${IMPORT_PARAMETER}('node:os'), strict: (function () { return this === undefined })()}\n//# sourceMappingURL=mapped.cjs.map\n`,
    )
    const codeCache = pathToFileURL(join(import.meta.dirname, '../../dist/lib/util/code-cache.js')).href
    const script = `const {requireBundle, codeCacheStates} = await import(${JSON.stringify(codeCache)})
const b = requireBundle(${JSON.stringify(file)}, (s) => import(s), {'#door': 'door'})
let stack = ''
try { b.fail() } catch (e) { stack = e.stack }
process.stdout.write(JSON.stringify({door: b.door, os: typeof (await b.load()).hostname, mapped: stack.includes('src.ts:10:'), strict: b.strict, states: codeCacheStates()}))`
    const r = await execa(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], {env: {NODE_OPTIONS: ''}})
    expect(JSON.parse(r.stdout)).toEqual({door: 'door', os: 'function', mapped: true, strict: true, states: {}})
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
