// Last build step: V8's code cache for the bundles of scripts/bundle-vendor.mjs (see
// src/lib/util/code-cache.ts). A child process loads them and runs one command from a snapshot
// file, so that the cache holds what a start compiles (oclif's configuration, flag parsing, help
// and error paths it touched) and not only each bundle's top level; mysql2 gets its top level (no
// database at build time). A second child checks that V8 accepts what was written: a build whose
// caches node refuses would start as slowly as one without them, and nothing else would say so.
import {execFileSync, spawnSync} from 'node:child_process'
import {rmSync} from 'node:fs'
import {fileURLToPath, URL} from 'node:url'

const path = (rel) => fileURLToPath(new URL(`../${rel}`, import.meta.url))
const codeCache = new URL('../dist/lib/util/code-cache.js', import.meta.url).href
const doors = ['dist/lib/cli/oclif.js', 'dist/lib/db/mysql2.js'].map((d) => new URL(`../${d}`, import.meta.url).href)

if (process.argv[2] === '--warm') {
  const {writeCodeCaches} = await import(codeCache)
  for (const d of doors) await import(d)
  // bin/run.js as an operator runs it; the caches are written when it is done, however it ends.
  process.on('exit', () => writeCodeCaches())
  process.argv = [process.argv[0], path('bin/run.js'), 'audit', 'all', '--snapshot', path('examples/demo-cloud.yaml'), '--json']
  await import(new URL('../bin/run.js', import.meta.url).href)
} else if (process.argv[2] === '--check') {
  const {codeCacheStates} = await import(codeCache)
  for (const d of doors) await import(d)
  process.stdout.write(JSON.stringify(codeCacheStates()))
} else {
  for (const b of ['dist/lib/cli/oclif.cjs', 'dist/lib/db/mysql2.cjs']) rmSync(path(`${b}.v8-cache`), {force: true})
  // Plain node, as bin/run.js starts: V8 refuses a cache made under other flags (NODE_OPTIONS too).
  const env = {...process.env, NODE_OPTIONS: '', NODE_ENV: 'production'}
  // The demo cloud has findings: the audit exits 3.
  const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--warm'], {stdio: ['ignore', 'ignore', 'inherit'], env})
  if (warm.status !== 0 && warm.status !== 3) throw new Error(`the code cache warm-up run exited ${warm.status ?? warm.signal}`)
  const states = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--check'], {env, encoding: 'utf8'}))
  const refused = Object.entries(states).filter(([, s]) => s !== 'accepted')
  if (Object.keys(states).length !== doors.length || refused.length > 0) throw new Error(`code caches not accepted: ${JSON.stringify(states)}`)
}
