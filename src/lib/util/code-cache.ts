/**
 * The build's CommonJS bundles (oclif, mysql2: scripts/bundle-vendor.mjs) loaded with V8's code
 * cache. Compiling them is a large part of every start: oclif's 600 kB on each command, mysql2's
 * 1.4 MB before the first query. The build writes, beside each bundle, the code V8 compiled for it
 * during a warm-up run (`<bundle>.v8-cache`); loading hands it back to V8, which skips that
 * compilation. V8 refuses a cache made by another V8 version, with other flags or for a source of
 * another length (cachedDataRejected), and then compiles as usual: a foreign cache costs only its
 * read. It checks the length, not the text, so the build removes a bundle's cache whenever it
 * rewrites the bundle (bundle-vendor.mjs) and writes the new one last (code-cache.mjs).
 *
 * The bundle runs in the CommonJS wrapper node would give it, plus one parameter: vm.Script code has
 * no module loader of its own for import() (node 20 only lends its own behind an experimental flag),
 * so the build routes the bundle's import() calls through `__cloudctl_import`, an import() of the
 * ES module that loads it.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname} from 'node:path'
import {Script} from 'node:vm'

/** The name the bundles' import() calls go through (the build rewrites them to it). */
export const IMPORT_PARAMETER = '__cloudctl_import'

export type CodeCacheState = 'accepted' | 'rejected' | 'absent'

const loaded = new Map<string, {script: Script; state: CodeCacheState}>()

export function codeCacheFile(bundle: string): string {
  return `${bundle}.v8-cache`
}

/** Runs the CommonJS bundle `file` (a path) with its code cache when V8 takes it; its module.exports. */
export function requireBundle(file: string, importModule: (specifier: string) => Promise<unknown>): unknown {
  const source = readFileSync(file, 'utf8')
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
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file), importModule)
  mod.loaded = true
  return mod.exports
}

/** Whether V8 took each loaded bundle's cache (the build's check that the caches it wrote work). */
export function codeCacheStates(): Record<string, CodeCacheState> {
  return Object.fromEntries([...loaded].map(([file, l]) => [file, l.state]))
}

/**
 * Writes the code cache of every bundle loaded so far: what V8 has compiled of it by now, so after a
 * warm-up run it holds the functions a start calls, not only the top level. Build time only.
 */
export function writeCodeCaches(): string[] {
  return [...loaded].map(([file, l]) => {
    writeFileSync(codeCacheFile(file), l.script.createCachedData())
    return codeCacheFile(file)
  })
}
