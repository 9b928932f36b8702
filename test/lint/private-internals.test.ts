/**
 * Every dependency is used through its public API (CONTRIBUTING.md): no import of a path a package
 * does not export, no use of a field or method its authors marked private with a leading
 * underscore. A tool that writes to nova's databases must survive the next patch release of
 * mysql2, cli-table3 or oclif without a code change. No database needed.
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Known uses, each owned by a change in flight (issue 30); remove the line when it lands — the
 * test fails on a line that no longer matches, so this list cannot outlive the use.
 */
const KNOWN: Array<{file: string; use: string; why: string}> = []

/** Underscore members that are a public contract: declared public or protected in the package's typings. */
const DECLARED: Record<string, string> = {
  _run: '@oclif/core Command._run is declared protected: the entry a Command subclass overrides',
}

function files(dir: string, exts: RegExp): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .filter((f) => exts.test(f))
    .map((f) => join(dir, f))
}

const SOURCES = [...files(join(ROOT, 'src'), /\.ts$/), ...files(join(ROOT, 'scripts'), /\.(ts|mjs|js)$/), ...files(join(ROOT, 'bin'), /\.js$/)]

/** Code without comments (a comment may name a private member to explain why it is avoided). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1')
}

/** The package a bare specifier names, and its subpath ('.' for the root). */
function splitSpecifier(spec: string): {pkg: string; sub: string} | null {
  const m = /^((?:@[\w.-]+\/)?[\w.-]+)(\/.*)?$/.exec(spec)
  if (!m || spec.startsWith('.') || spec.startsWith('node:') || spec.startsWith('#')) return null
  return {pkg: m[1] as string, sub: m[2] ? `.${m[2]}` : '.'}
}

/** Whether `sub` is a subpath the package exports (its "exports" map; without one, its root only). */
function exported(pkg: string, sub: string): boolean | null {
  const manifest = join(ROOT, 'node_modules', pkg, 'package.json')
  if (!existsSync(manifest)) return null
  if (sub === '.') return true
  const exportsField = (JSON.parse(readFileSync(manifest, 'utf8')) as {exports?: unknown}).exports
  if (!exportsField || typeof exportsField !== 'object') return false
  const keys = Object.keys(exportsField)
  return keys.some((k) => k === sub || (k.includes('*') && new RegExp(`^${k.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('\\*', '.*')}$`).test(sub)))
}

interface Use {
  file: string
  use: string
}

function privatePathUses(): Use[] {
  const out: Use[] = []
  for (const f of SOURCES) {
    const text = code(readFileSync(f, 'utf8'))
    // import/export ... from 'x', import('x'), require('x'), require.resolve('x'), and any string passed to a loader
    for (const m of text.matchAll(/(?:from\s+|import\(\s*|require(?:\.resolve)?\(\s*|load\(\s*)['"]([^'"]+)['"]/g)) {
      const s = splitSpecifier(m[1] as string)
      if (!s) continue
      if (exported(s.pkg, s.sub) === false) out.push({file: relative(ROOT, f), use: m[1] as string})
    }
  }
  return out
}

function privateMemberUses(): Use[] {
  const out: Use[] = []
  for (const f of SOURCES) {
    const text = code(readFileSync(f, 'utf8'))
    for (const m of text.matchAll(/\.(_[A-Za-z]\w*)\b|['"](_[A-Za-z]\w*)['"]/g)) {
      const name = (m[1] ?? m[2]) as string
      if (name in DECLARED) continue
      out.push({file: relative(ROOT, f), use: m[1] ? `.${name}` : name})
    }
  }
  return out
}

/** A package's internal folder named as a file path (a build step that edits or loads its source). */
function sourcePatchUses(): Use[] {
  const out: Use[] = []
  const sep = String.raw`(?:\[\\\\/\]|\\\/|\/)`
  const re = new RegExp(String.raw`(?<![\w.@-])((?:@[\w-][\w.-]*${sep})?[\w-][\w.-]*)${sep}(lib|src|dist|build)${sep}`, 'g')
  for (const f of SOURCES) {
    const text = code(readFileSync(f, 'utf8'))
    for (const m of text.matchAll(re)) {
      const pkg = (m[1] as string).replace(new RegExp(sep, 'g'), '/').replace(/^\//, '')
      if (!existsSync(join(ROOT, 'node_modules', pkg, 'package.json'))) continue
      out.push({file: relative(ROOT, f), use: `${pkg}/${m[2]}`})
    }
  }
  return out
}

const isKnown = (u: Use): boolean => KNOWN.some((k) => k.file === u.file && k.use === u.use)

describe("other packages' internals", () => {
  it('no import of a path a package does not export', () => {
    expect(privatePathUses().filter((u) => !isKnown(u))).toEqual([])
  })

  it('no use of an underscore (private) member of another package', () => {
    expect(privateMemberUses().filter((u) => !isKnown(u))).toEqual([])
  })

  it("no build step reaching into a package's source folders", () => {
    expect(sourcePatchUses().filter((u) => !isKnown(u))).toEqual([])
  })

  it('the known uses still exist (drop a line here when its change lands)', () => {
    const found = [...privatePathUses(), ...privateMemberUses(), ...sourcePatchUses()]
    expect(KNOWN.filter((k) => !found.some((u) => u.file === k.file && u.use === k.use))).toEqual([])
  })

  it('catches what it is for', () => {
    expect(splitSpecifier('mysql2/lib/parsers/text_parser.js')).toEqual({pkg: 'mysql2', sub: './lib/parsers/text_parser.js'})
    expect(exported('mysql2', './lib/parsers/text_parser.js')).toBe(false)
    expect(exported('mysql2', './promise')).toBe(true)
    expect(exported('@oclif/core', './command')).toBe(true)
    expect(exported('@oclif/core', './lib/config/plugin.js')).toBe(false)
    expect(exported('cli-table3', './src/utils.js')).toBe(false)
    expect(
      [...code("q._rowParser = x; Object.hasOwn(q, '_rowParser')").matchAll(/\.(_[A-Za-z]\w*)\b|['"](_[A-Za-z]\w*)['"]/g)].map((m) => m[1] ?? m[2]),
    ).toEqual(['_rowParser', '_rowParser'])
  })
})
