// Build step after tsc: dist/lib/cli/oclif.js (src/lib/cli/oclif.ts, the one door to @oclif/core)
// becomes @oclif/core and its dependencies in a single CommonJS file, re-exported as ES module.
// oclif is CommonJS and looks for its own package.json and for plugins from where it runs, which
// CommonJS output keeps (__dirname, require); ESM output would need both faked.
import {build} from 'esbuild'
import {rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {fileURLToPath, URL} from 'node:url'

const entry = fileURLToPath(new URL('../dist/lib/cli/oclif.js', import.meta.url))
const bundle = fileURLToPath(new URL('../dist/lib/cli/oclif.cjs', import.meta.url))
await build({
  entryPoints: [entry],
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // oclif's TypeScript support loads these only for a plugin run from .ts source, which bin/run.js
  // turns off, and finds them from the plugin's root, not from here.
  external: ['typescript', 'ts-node', 'tsx'],
  logLevel: 'warning',
})
// Not `export * from './oclif.cjs'`: node would find the names by lexing all of the bundle's
// 600 kB as JavaScript on every start (~30 ms of CPU); the names are known now.
const names = Object.keys(createRequire(import.meta.url)(bundle)).filter((n) => n !== '__esModule')
rmSync(`${entry}.map`, {force: true})
writeFileSync(
  entry,
  `import {createRequire} from 'node:module'\nconst oclif = createRequire(import.meta.url)('./oclif.cjs')\nexport const {${names.join(', ')}} = oclif\n`,
)
