// Build step after tsc and bundle-vendor.mjs: each command becomes one CommonJS bundle of its own
// (dist/commands/<topic>/<verb>.cjs, from tsc's output) loaded with V8's code cache through an ES
// module door written where tsc's file was, where the oclif manifest points; the help class and the
// hooks, which `--help` and a mistyped command load, are bundled as ES modules (code they share split
// into dist/chunks/) written over tsc's output in place. Loaded as tsc emits them, a
// `simulate boot` spent ~170 ms of its ~600 ms of CPU resolving and compiling ~130 dist modules and
// mysql2's ~60; bundled as ES modules, node 20 still compiled the command's 300-600 kB on every run
// (it keeps no code cache for ES modules), ~30 ms of a 2,000-host `simulate boot`. The rest of dist/
// (dist/index.js, the modules bin/run.js imports) stays as tsc emits it.
//
// oclif itself stays outside the bundles: there must be one loaded copy of it, the one bin/run.js
// imports (its error handler tells an exit from a failure with instanceof). Every import of the door
// dist/lib/cli/oclif.js becomes '#oclif' (package.json "imports"), which node resolves to that same
// file from any output file, chunks included; a command's door imports it and hands it to the
// bundle's require('#oclif') (require cannot load an ES module).
//
// Imports left to run time stay lazy: mysql2 stays behind its door '#mysql2' (a snapshot-file audit
// never loads it), @inquirer/prompts is loaded only by an interactive confirmation, and
// createRequire()(...) calls (the yaml package) are not bundled. Our own modules behind an
// `await import()` (the live capture, the repair executor) are in the command's bundle, run only
// when imported.
import {build} from 'esbuild'
import {readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {basename, dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath, URL} from 'node:url'

import {codeCacheFile, IMPORT_PARAMETER} from '../dist/lib/util/code-cache.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const door = join(dist, 'lib/cli/oclif.js')
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function jsFiles(dir) {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : []))
}

const commandFiles = jsFiles(join(root, pjson.oclif.commands))
const entryPoints = [join(root, pjson.oclif.helpClass), ...Object.values(pjson.oclif.hooks ?? {}).flat().map((p) => join(root, p))]

// Bundling a bundle again would work but nest the chunks' code: this step takes tsc's output.
for (const e of [...commandFiles, ...entryPoints]) {
  const text = readFileSync(e, 'utf8')
  if (text.includes('__cloudctlRequire') || text.includes('requireBundle(')) throw new Error(`${e} is already bundled: run tsc first`)
}

const oclifOnce = {
  name: 'oclif-once',
  setup(b) {
    b.onResolve({filter: /oclif/}, (args) => {
      if (args.path === '#oclif' || (args.path.startsWith('.') && resolve(args.resolveDir, args.path) === door)) return {path: '#oclif', external: true}
      if (/^@oclif\/core(\/|$)/.test(args.path)) return {errors: [{text: `${args.importer} imports ${args.path}: only the door dist/lib/cli/oclif.js may (one copy of oclif)`}]}
      return undefined
    })
  },
}

// mysql2 is its own CommonJS bundle with a code cache (bundle-vendor.mjs), reached through '#mysql2'.
const mysql2Door = {
  name: 'mysql2-door',
  setup(b) {
    b.onResolve({filter: /^mysql2(\/|$)/}, (args) => {
      if (args.path === 'mysql2/promise' && args.kind === 'dynamic-import') return {path: '#mysql2', external: true}
      return {errors: [{text: `${args.importer} imports ${args.path} (${args.kind}): only connection.ts's lazy import of mysql2/promise may`}]}
    })
  },
}

const shared = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  // @inquirer/prompts: only an interactive confirmation loads it, already lazily, and a person
  // answering it does not notice the load.
  external: ['@inquirer/prompts'],
  // Maps back to src/*.ts through tsc's maps, for a debugger or `node --enable-source-maps`; not
  // turned on at run time, which would slow every start.
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  plugins: [oclifOnce, mysql2Door],
  logLevel: 'warning',
}

// ---------------------------------------------------------------- the commands: CommonJS bundles

// What the bundle's import() calls may load; vm.Script code has none of its own (code-cache.ts).
const LATE = /(?<![\w$."'`])import\((["'])(#mysql2|@inquirer\/prompts)\1\)/g

async function bundleCommand(entry) {
  const outfile = entry.replace(/\.js$/, '.cjs')
  // V8 checks a cache against the length of its source, not the text: no cache may outlive its bundle.
  rmSync(codeCacheFile(outfile), {force: true})
  const result = await build({
    ...shared,
    entryPoints: [entry],
    outfile,
    format: 'cjs',
    // createRequire(import.meta.url) finds the yaml package from the bundle's place.
    // Injected, not a banner: a line before the bundle's "use strict" would make it sloppy code.
    define: {'import.meta.url': 'importMetaUrl'},
    inject: [join(root, 'scripts/import-meta-url.mjs')],
  })
  const text = readFileSync(outfile, 'utf8').replace(LATE, `${IMPORT_PARAMETER}($1$2$1)`)
  const left = [...text.matchAll(/(?<![\w$."'`])import\(/g)]
  if (left.length > 0) throw new Error(`${outfile}: ${left.length} import() call(s) not routed through ${IMPORT_PARAMETER}`)
  if (Object.keys(result.metafile.inputs).some((i) => i.includes('node_modules/mysql2/') || i.includes('node_modules/@oclif/'))) {
    throw new Error(`${outfile} holds a copy of mysql2 or oclif: both must stay behind their doors`)
  }
  writeFileSync(outfile, text)
  // The door, where the manifest points: tsc's file is in the bundle now.
  const codeCache = relative(dirname(entry), join(dist, 'lib/util/code-cache.js'))
  writeFileSync(
    entry,
    `import * as oclif from '#oclif'\nimport {fileURLToPath} from 'node:url'\nimport {requireBundle} from '${codeCache.startsWith('.') ? codeCache : `./${codeCache}`}'\n` +
      `const bundle = requireBundle(fileURLToPath(new URL('./${basename(outfile)}', import.meta.url)), (specifier) => import(specifier), {'#oclif': oclif})\n` +
      'export default bundle.default\n',
  )
  rmSync(`${entry}.map`, {force: true})
}

await Promise.all(commandFiles.map((f) => bundleCommand(f)))

// ---------------------------------------------------------------- help class and hooks: ES modules

const options = {
  ...shared,
  outdir: dist,
  outbase: dist,
  allowOverwrite: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  // Bundled CommonJS (the yaml package's dependencies) requires node's built-in modules, which an
  // ES module has no require for.
  banner: {js: "import {createRequire as __cloudctlRequire} from 'node:module'; const require = __cloudctlRequire(import.meta.url);"},
}
const result = await build({...options, entryPoints})

// What each entry point loads before running: its own file and the chunks it imports statically.
// A report for the build log, and a check that neither reaches mysql2.
const outputs = result.metafile.outputs
const rel = (p) => p.slice(p.indexOf('dist/'))
function staticClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const i of outputs[file].imports) if (i.kind === 'import-statement' && !i.external) staticClosure(i.path, seen)
  return seen
}
const entries = new Set(entryPoints)
const lines = []
for (const [file, out] of Object.entries(outputs)) {
  if (!out.entryPoint || !entries.has(join(root, out.entryPoint))) continue
  const loaded = [...staticClosure(file)]
  const bytes = loaded.reduce((n, f) => n + outputs[f].bytes, 0)
  const mysql = loaded.some((f) => outputs[f].imports.some((i) => i.path === '#mysql2' && i.kind !== 'dynamic-import'))
  lines.push(`${rel(file).padEnd(42)} ${String(loaded.length).padStart(2)} files ${(bytes / 1024).toFixed(0).padStart(5)} kB${mysql ? '  mysql2' : ''}`)
}
if (process.env.CLOUDCTL_BUNDLE_REPORT) writeFileSync(process.env.CLOUDCTL_BUNDLE_REPORT, `${lines.sort().join('\n')}\n`)
// Chunks of an earlier build (scripts/bench.ts builds over dist/ without emptying it), removed only
// now so that a CLI running meanwhile finds its files.
const chunks = join(dist, 'chunks')
const written = new Set(Object.keys(outputs).map((f) => join(root, f)))
for (const f of readdirSync(chunks)) if (!written.has(join(chunks, f))) rmSync(join(chunks, f))
const eager = lines.filter((l) => l.endsWith('mysql2'))
if (eager.length > 0) throw new Error(`mysql2 is loaded at start-up (it must stay behind a dynamic import):\n${eager.join('\n')}`)
