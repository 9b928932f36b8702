// Build step after tsc: @oclif/core and its dependencies become one CommonJS file,
// dist/lib/cli/oclif.cjs, behind the ES module door dist/lib/cli/oclif.js (src/lib/cli/oclif.ts, the
// one door to oclif). Loaded as its ~100 separate modules, oclif costs every start module resolution
// that node's compile cache does not save (measured on node 24: `--help` 0.31 s unbundled, against
// 0.15 s). oclif is CommonJS and finds its own package.json and plugins from where it runs
// (__dirname, require), which CommonJS output keeps. Its import() calls stay node's own: node's
// CommonJS loader runs the bundle, so nothing in it is rewritten; the literal ones (wsl-utils) are
// bundled, so dist/ needs no package of oclif's at run time.
import {build} from 'esbuild'
import {rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {fileURLToPath, URL} from 'node:url'

const path = (rel) => fileURLToPath(new URL(`../${rel}`, import.meta.url))

const oclifDoor = path('dist/lib/cli/oclif.js')
const oclifBundle = path('dist/lib/cli/oclif.cjs')
await build({
  entryPoints: [oclifDoor],
  outfile: oclifBundle,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  logLevel: 'warning',
  // oclif's TypeScript support loads these only for a plugin run from .ts source, which bin/run.js
  // turns off, and finds them from the plugin's root, not from here.
  external: ['typescript', 'ts-node', 'tsx'],
})
// Named exports, not `export * from`: node would find the names by lexing all of the bundle's
// 600 kB as JavaScript on every start (~30 ms of CPU); the names are known now.
const names = Object.keys(createRequire(import.meta.url)(oclifBundle)).filter((n) => n !== '__esModule')
rmSync(`${oclifDoor}.map`, {force: true})
writeFileSync(
  oclifDoor,
  `import {createRequire} from 'node:module'\nconst bundle = createRequire(import.meta.url)('./oclif.cjs')\nexport const {${names.join(', ')}} = bundle\n`,
)
