/**
 * No module-level mutable state in the command plumbing and the output (issue 30, item 9): what one
 * command sets (a table width, a progress flag) must reach its formatters through the per-command
 * context (src/lib/output/display.ts, cli/progress-printer.ts), never through a variable of the
 * module that the next command in the same process (the tests run many) would read. Flags, at the
 * top level of every file of src/lib/cli and src/lib/output: `let` and `var`; a Map, Set, WeakMap,
 * WeakSet, array or object literal held in a const that the file mutates; writes to globalThis.
 * No database needed.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import ts from 'typescript'
import {describe, expect, it} from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const FOLDERS = ['src/lib/cli', 'src/lib/output']

/**
 * Justified module-level state, as `file: name` with the reason. Empty today; a cache that pays
 * (and holds nothing a command chose) would be listed here with its measurement.
 */
const ALLOWED: Record<string, string> = {}

const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array'])

function sources(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(ROOT, folder), {recursive: true, encoding: 'utf8'})
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(ROOT, folder, f)),
  )
}

/** A const's initializer that holds mutable contents: new Map() and the like, [] and {} literals. */
function mutableContainer(init: ts.Expression | undefined): boolean {
  if (init === undefined) return false
  if (ts.isNewExpression(init) && ts.isIdentifier(init.expression)) return COLLECTIONS.has(init.expression.text)
  return ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init)
}

/** Whether `name` is mutated anywhere in the file: a mutating method call or an assignment through it. */
function mutated(file: ts.SourceFile, name: string): boolean {
  let found = false
  const visit = (node: ts.Node): void => {
    if (found) return
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      ts.isIdentifier(node.expression.expression) &&
      node.expression.expression.text === name
    ) {
      if (/^(set|add|delete|clear|push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin)$/.test(node.expression.name.text)) found = true
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      let target: ts.Expression = node.left
      while (ts.isPropertyAccessExpression(target) || ts.isElementAccessExpression(target)) target = target.expression
      if (target !== node.left && ts.isIdentifier(target) && target.text === name) found = true
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.getText(file) === 'Object.assign') {
      const first = node.arguments[0]
      if (first && ts.isIdentifier(first) && first.text === name) found = true
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

/** `name: why` for each piece of module-level state in one file. */
export function moduleState(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: string[] = []
  for (const stmt of file.statements) {
    if (!ts.isVariableStatement(stmt)) continue
    const list = stmt.declarationList
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0
    for (const d of list.declarations) {
      const name = d.name.getText(file)
      if (!isConst) found.push(`${name}: a module-level ${list.flags & ts.NodeFlags.Let ? 'let' : 'var'}`)
      else if (ts.isIdentifier(d.name) && mutableContainer(d.initializer) && mutated(file, d.name.text))
        found.push(`${name}: a module-level container the module mutates`)
    }
  }
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && /^globalThis\b/.test(node.left.getText(file)))
      found.push(`${node.left.getText(file)}: a write to globalThis`)
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

describe('no module-level mutable state in src/lib/cli and src/lib/output', () => {
  it('finds none (each command passes its own context down)', () => {
    const found = sources().flatMap((path) =>
      moduleState(path, readFileSync(path, 'utf8'))
        .map((entry) => `${relative(ROOT, path)}: ${entry}`)
        .filter((entry) => !(entry.slice(0, entry.indexOf(': ', entry.indexOf(': ') + 2)) in ALLOWED)),
    )
    expect(found).toEqual([])
  })

  it('every allow-list entry still names state that exists', () => {
    const all = new Set(
      sources().flatMap((path) => moduleState(path, readFileSync(path, 'utf8')).map((e) => `${relative(ROOT, path)}: ${e.slice(0, e.indexOf(': '))}`)),
    )
    for (const key of Object.keys(ALLOWED)) expect(all).toContain(key)
  })

  it.each([
    ['a let', 'let width: number | undefined\nexport function set(w: number) { width = w }', ['width: a module-level let']],
    ['a var', 'var on = true', ['on: a module-level var']],
    [
      'a Map the module fills',
      'const cache = new Map<string, number>()\nexport const f = (k: string) => cache.set(k, 1)',
      ['cache: a module-level container the module mutates'],
    ],
    [
      'an object written through',
      'const state = {on: true}\nexport function off() { state.on = false }',
      ['state: a module-level container the module mutates'],
    ],
    ['a globalThis write', 'export function f() { globalThis.x = 1 }', ['globalThis.x: a write to globalThis']],
    ['a read-only Set', "const KNOWN = new Set(['a'])\nexport const f = (k: string) => KNOWN.has(k)", []],
    ['a let inside a function', 'export function f() { let n = 0; n++; return n }', []],
    ['state kept on an object a function makes', 'export function make() { const seen = new Set<string>(); return (k: string) => seen.add(k) }', []],
  ])('flags %s', (_name, text, expected) => {
    expect(moduleState('x.ts', text)).toEqual(expected)
  })
})
