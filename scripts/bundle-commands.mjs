// Build step after tsc and bundle-vendor.mjs: the commands, the help class, the hooks and the repair
// executor are bundled as ES modules written over tsc's output in place (where the oclif manifest
// and package.json point), the code they share split into dist/chunks/. Loaded as tsc emits them, a
// `simulate boot` spent ~170 ms of its ~600 ms of CPU resolving and compiling ~130 dist modules and
// mysql2's ~60; node's compile cache (bin/run.js) saves the compiling but not the resolving. The rest
// of dist/ (dist/index.js, the modules bin/run.js imports) stays as tsc emits it.
//
// oclif itself stays outside: there must be one loaded copy of it, the one bin/run.js imports (its
// error handler tells an exit from a failure with instanceof). Every import of the door
// dist/lib/cli/oclif.js becomes '#oclif' (package.json "imports"), which node resolves to that same
// file from any output file.
//
// The repair executor is an entry point so that a test's preload (test/support/repair-pause.mjs)
// imports the very module instance the commands run, not a second copy.
//
// Imports left to run time stay lazy: mysql2 is bundled into a chunk of its own reached only by
// connection.ts's import() (a snapshot-file audit never loads it), @inquirer/prompts is loaded only by
// an interactive confirmation, and createRequire()(...) calls (the yaml package) are not
// bundled.
import {build} from 'esbuild'
import {readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {fileURLToPath, URL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dist = join(root, 'dist')
const door = join(dist, 'lib/cli/oclif.js')
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

function jsFiles(dir) {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  )
}

const entryPoints = [
  ...jsFiles(join(root, pjson.oclif.commands)),
  join(root, pjson.oclif.helpClass),
  ...Object.values(pjson.oclif.hooks ?? {})
    .flat()
    .map((p) => join(root, p)),
  join(dist, 'lib/db/repair/executor.js'),
]

// Bundling a bundle again would work but nest the chunks' code: this step takes tsc's output.
for (const e of entryPoints) {
  if (readFileSync(e, 'utf8').includes('__cloudctlRequire')) throw new Error(`${e} is already bundled: run tsc first`)
}

const oclifOnce = {
  name: 'oclif-once',
  setup(b) {
    b.onResolve({filter: /oclif/}, (args) => {
      if (args.path === '#oclif' || (args.path.startsWith('.') && resolve(args.resolveDir, args.path) === door)) return {path: '#oclif', external: true}
      if (/^@oclif\/core(\/|$)/.test(args.path))
        return {errors: [{text: `${args.importer} imports ${args.path}: only the door dist/lib/cli/oclif.js may (one copy of oclif)`}]}
      return undefined
    })
  },
}

const result = await build({
  entryPoints,
  outdir: dist,
  outbase: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // @inquirer/prompts: only an interactive confirmation loads it, already lazily, and a person
  // answering it does not notice.
  external: ['@inquirer/prompts'],
  metafile: true,
  plugins: [oclifOnce],
  logLevel: 'warning',
  // Bundled CommonJS (mysql2, the yaml package's dependencies) requires node's built-in modules,
  // which an ES module has no require for.
  banner: {js: "import {createRequire as __cloudctlRequire} from 'node:module'; const require = __cloudctlRequire(import.meta.url);"},
})
for (const e of entryPoints) rmSync(`${e}.map`, {force: true})

// What each entry point loads before running: its own file and the chunks it imports statically.
// A report for the build log, and a check that none reaches mysql2 before it connects.
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
  const mysql = loaded.some((f) => Object.keys(outputs[f].inputs).some((i) => i.includes('node_modules/mysql2/')))
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
