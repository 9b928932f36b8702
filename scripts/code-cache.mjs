// Last build step: V8's code cache for the bundles of scripts/bundle-vendor.mjs and
// scripts/bundle-commands.mjs (see src/lib/util/code-cache.ts). Child processes load them and run a
// command from a snapshot file, so that the cache holds what a start compiles (oclif's
// configuration, flag parsing, help and error paths it touched, the command's reading, checks or
// engine and output) and not only each bundle's top level: `audit all`, `simulate boot` and
// `simulate capacity`, the commands operators and the bench run on large clouds. Every other command
// gets its bundle's top level, and mysql2 too (no database at build time). A last child checks that
// V8 accepts what was written: a build whose caches node refuses would start as slowly as one
// without them, and nothing else would say so.
import {execFileSync, spawnSync} from 'node:child_process'
import {readdirSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath, pathToFileURL, URL} from 'node:url'

const path = (rel) => fileURLToPath(new URL(`../${rel}`, import.meta.url))
const codeCache = new URL('../dist/lib/util/code-cache.js', import.meta.url).href
const commandDoors = (dir = path('dist/commands')) =>
  readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? commandDoors(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []))
const vendorDoors = ['dist/lib/cli/oclif.js', 'dist/lib/db/mysql2.js'].map(path)
const demo = path('examples/demo-cloud.yaml')
const WARM_UPS = [
  ['audit', 'all', '--snapshot', demo, '--json'],
  ['simulate', 'boot', '--snapshot', demo, '--flavor', 'm1.small', '--json'],
  ['simulate', 'capacity', '--snapshot', demo, '--flavor', 'm1.small', '--json'],
]

if (process.argv[2] === '--warm') {
  const {writeCodeCaches} = await import(codeCache)
  for (const d of vendorDoors) await import(pathToFileURL(d).href)
  // bin/run.js as an operator runs it; the caches not written yet are written when it is done,
  // however it ends.
  process.on('exit', () => writeCodeCaches({skipExisting: true}))
  process.argv = [process.argv[0], path('bin/run.js'), ...JSON.parse(process.argv[3])]
  await import(new URL('../bin/run.js', import.meta.url).href)
} else if (process.argv[2] === '--top' || process.argv[2] === '--check') {
  const {codeCacheStates, writeCodeCaches} = await import(codeCache)
  for (const d of [...vendorDoors, ...commandDoors()]) await import(pathToFileURL(d).href)
  if (process.argv[2] === '--top') writeCodeCaches({skipExisting: true})
  else process.stdout.write(JSON.stringify(codeCacheStates()))
} else {
  const bundles = [...vendorDoors, ...commandDoors()].map((d) => d.replace(/\.js$/, '.cjs'))
  for (const b of bundles) rmSync(`${b}.v8-cache`, {force: true})
  // Plain node, as bin/run.js starts: V8 refuses a cache made under other flags (NODE_OPTIONS too).
  const env = {...process.env, NODE_OPTIONS: '', NODE_ENV: 'production'}
  for (const argv of WARM_UPS) {
    // The demo cloud has findings: the audit exits 3.
    const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--warm', JSON.stringify(argv)], {stdio: ['ignore', 'ignore', 'inherit'], env})
    if (warm.status !== 0 && warm.status !== 3) throw new Error(`the code cache warm-up run (${argv.slice(0, 2).join(' ')}) exited ${warm.status ?? warm.signal}`)
  }
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--top'], {env, stdio: ['ignore', 'ignore', 'inherit']})
  const states = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--check'], {env, encoding: 'utf8'}))
  const refused = Object.entries(states).filter(([, s]) => s !== 'accepted')
  if (Object.keys(states).length !== bundles.length || refused.length > 0) throw new Error(`code caches not accepted: ${JSON.stringify(refused.length > 0 ? Object.fromEntries(refused) : states)}`)
}
