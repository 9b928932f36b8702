/**
 * The build's CommonJS bundles (oclif, mysql2: scripts/bundle-vendor.mjs; each command:
 * scripts/bundle-commands.mjs) loaded with V8's code cache. Compiling them is a large part of every
 * start: oclif's 600 kB on each command, a command's own 300-600 kB, mysql2's 1.4 MB before the
 * first query. The build writes, beside each bundle, the code V8 compiled for it
 * during a warm-up run (`<bundle>.v8-cache`); loading hands it back to V8, which skips that
 * compilation. V8 refuses a cache made by another V8 version, with other flags or for a source of
 * another length (cachedDataRejected), and then compiles as usual: a foreign cache costs only its
 * read. It checks the length, not the text, so the build removes a bundle's cache whenever it
 * rewrites the bundle (bundle-vendor.mjs, bundle-commands.mjs) and writes the new one last
 * (code-cache.mjs).
 *
 * The bundle runs in the CommonJS wrapper node would give it, plus one parameter: vm.Script code has
 * no module loader of its own for import() (node 20 only lends its own behind an experimental flag),
 * so the build routes the bundle's import() calls through `__cloudctl_import`, an import() of the
 * ES module that loads it.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {createRequire, Module} from 'node:module'
import {dirname} from 'node:path'
import {Script} from 'node:vm'

/** The name the bundles' import() calls go through (the build rewrites them to it). */
export const IMPORT_PARAMETER = '__cloudctl_import'

export type CodeCacheState = 'accepted' | 'rejected' | 'absent'

const loaded = new Map<string, {script: Script; state: CodeCacheState}>()

export function codeCacheFile(bundle: string): string {
  return `${bundle}.v8-cache`
}

/**
 * Runs the CommonJS bundle `file` (a path) with its code cache when V8 takes it; its module.exports.
 * `provided`: modules the door hands to the bundle's require() by specifier (an ES module the door
 * imported, which require() cannot load: '#oclif', the one copy of oclif).
 */
export function requireBundle(file: string, importModule: (specifier: string) => Promise<unknown>, provided: Record<string, unknown> = {}): unknown {
  const source = readFileSync(file, 'utf8')
  const nodeRequire = createRequire(file)
  const require = Object.keys(provided).length === 0 ? nodeRequire : Object.assign((id: string): unknown => (Object.hasOwn(provided, id) ? provided[id] : nodeRequire(id)), nodeRequire)
  if (process.sourceMapsEnabled) return compileWithSourceMaps(file, source, require, importModule)
  let cachedData: Buffer | undefined
  try {
    cachedData = readFileSync(codeCacheFile(file))
  } catch {
    // No cache (a build that skipped it, a source checkout): compile as node would.
  }
  // One line for the wrapper's head, so that stack traces keep the bundle's line numbers.
  const script = new Script(`(function (exports, require, module, __filename, __dirname, ${IMPORT_PARAMETER}) {${source}\n})`, {filename: file, cachedData})
  loaded.set(file, {script, state: cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted'})
  const mod = {exports: {} as unknown, id: file, filename: file, loaded: false}
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void
  wrapper.call(mod.exports, mod.exports, require, mod, file, dirname(file), importModule)
  mod.loaded = true
  return mod.exports
}

type NodeModule = Module & {_compile(content: string, filename: string): void; cloudctl?: {require: NodeJS.Require; importModule: (specifier: string) => Promise<unknown>}}

/**
 * `node --enable-source-maps` maps stack traces only of code its own loader compiled (vm.Script code
 * keeps the bundle's lines): with source maps on, the bundle goes through node's CommonJS loader,
 * without a code cache, its two extra names set on the first line (esbuild's runtime helpers, no
 * mapping lost).
 */
function compileWithSourceMaps(file: string, source: string, require: NodeJS.Require, importModule: (specifier: string) => Promise<unknown>): unknown {
  const mod = new Module(file) as NodeModule
  mod.filename = file
  mod.paths = (Module as unknown as {_nodeModulePaths(dir: string): string[]})._nodeModulePaths(dirname(file))
  mod.cloudctl = {require, importModule}
  // After a "use strict" that opens the bundle, which must stay its first statement.
  const strict = /^(["'])use strict\1;?/.exec(source)?.[0] ?? ''
  mod._compile(`${strict}var ${IMPORT_PARAMETER} = module.cloudctl.importModule, require = module.cloudctl.require; ${source.slice(strict.length)}`, file)
  mod.loaded = true
  return mod.exports
}

/** Whether V8 took each loaded bundle's cache (the build's check that the caches it wrote work). */
export function codeCacheStates(): Record<string, CodeCacheState> {
  return Object.fromEntries([...loaded].map(([file, l]) => [file, l.state]))
}

/**
 * Writes the code cache of every bundle loaded so far: what V8 has compiled of it by now, so after a
 * warm-up run it holds the functions a start calls, not only the top level. `skipExisting`: leaves
 * the caches an earlier warm-up wrote. Build time only.
 */
export function writeCodeCaches(opts: {skipExisting?: boolean} = {}): string[] {
  const written: string[] = []
  for (const [file, l] of loaded) {
    if (opts.skipExisting && existsSync(codeCacheFile(file))) continue
    writeFileSync(codeCacheFile(file), l.script.createCachedData())
    written.push(codeCacheFile(file))
  }
  return written
}
