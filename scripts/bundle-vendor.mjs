// Build step after tsc: the CommonJS packages cloudctl loads on every start or before its first
// query become one CommonJS file each, loaded through an ES module door with V8's code cache
// (src/lib/util/code-cache.ts; scripts/code-cache.mjs writes the caches at the end of the build).
// - oclif: dist/lib/cli/oclif.js (src/lib/cli/oclif.ts, the one door to @oclif/core) becomes
//   @oclif/core and its dependencies in dist/lib/cli/oclif.cjs. oclif is CommonJS and looks for its
//   own package.json and for plugins from where it runs, which CommonJS output keeps (__dirname,
//   require); ESM output would need both faked.
// - mysql2: mysql2/promise in dist/lib/db/mysql2.cjs, behind the door dist/lib/db/mysql2.js
//   (package.json "#mysql2"), which bundle-commands.mjs puts where src/lib/db/connection.ts imports
//   the package; tests running src/ load the package itself.
import {build} from 'esbuild'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {fileURLToPath, URL} from 'node:url'

import {codeCacheFile, IMPORT_PARAMETER} from '../dist/lib/util/code-cache.js'

const path = (rel) => fileURLToPath(new URL(`../${rel}`, import.meta.url))

// A bundle runs as vm.Script code, which has no loader for import(): its calls go through the door's.
// oclif calls import() to load ES module commands, hooks and the help class (lilconfig, for
// configuration files).
const DYNAMIC_IMPORT = /\bawait import\(/g
// oclif sorts each plugin's commands by id with localeCompare as it loads them, on every start:
// the first call builds ICU's collator (~7-15 ms here). Ids made of a-z, ':' and '-' (all of ours
// and of oclif's plugins) sort the same by code unit, which the replacement uses; any other id still
// goes to localeCompare.
const ID_SORT = '.sort((a, b) => a.id.localeCompare(b.id))'
const PLAIN_ID = /^[a-z:-]*$/
const plainIdSort = `.sort((a, b) => (${PLAIN_ID}.test(a.id) && ${PLAIN_ID}.test(b.id) ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.id.localeCompare(b.id)))`
const routeImports = {
  name: 'route-dynamic-imports',
  setup(b) {
    b.onLoad({filter: /[\\/]node_modules[\\/].*\.c?js$/}, (args) => {
      let text = readFileSync(args.path, 'utf8').replace(DYNAMIC_IMPORT, `await ${IMPORT_PARAMETER}(`)
      if (/[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/.test(args.path)) {
        if (text.split(ID_SORT).length !== 2) throw new Error(`${args.path}: oclif's command sort changed; revisit plainIdSort in bundle-vendor.mjs`)
        text = text.replace(ID_SORT, plainIdSort)
      }
      return {contents: text, loader: 'js'}
    })
  },
}

async function bundle(entry, outfile, opts = {}) {
  // V8 checks a cache against the length of its source, not the text: no cache may outlive its bundle.
  rmSync(codeCacheFile(outfile), {force: true})
  await build({entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning', ...opts})
  // An import() left in the bundle would fail at run time (outside strings: oclif's messages name it).
  const left = [...readFileSync(outfile, 'utf8').matchAll(/(?<![\w$."'`])import\(/g)]
  if (left.length > 0) throw new Error(`${outfile}: ${left.length} import() call(s) not routed through ${IMPORT_PARAMETER}; extend routeImports`)
}

/** The door: an ES module exporting `names` of the bundle (or its exports as default), loaded with its cache. */
function door(file, bundleName, names) {
  const exported = names ? `export const {${names.join(', ')}} = bundle` : 'export default bundle'
  writeFileSync(
    file,
    `import {fileURLToPath} from 'node:url'\nimport {requireBundle} from '../util/code-cache.js'\nconst bundle = requireBundle(fileURLToPath(new URL('./${bundleName}', import.meta.url)), (specifier) => import(specifier))\n${exported}\n`,
  )
}

const oclifDoor = path('dist/lib/cli/oclif.js')
const oclifBundle = path('dist/lib/cli/oclif.cjs')
await bundle(oclifDoor, oclifBundle, {
  // oclif's TypeScript support loads these only for a plugin run from .ts source, which bin/run.js
  // turns off, and finds them from the plugin's root, not from here.
  external: ['typescript', 'ts-node', 'tsx'],
  plugins: [routeImports],
})
// Named exports, not `export * from`: node would find the names by lexing all of the bundle's
// 600 kB as JavaScript on every start (~30 ms of CPU); the names are known now.
const names = Object.keys(createRequire(import.meta.url)(oclifBundle)).filter((n) => n !== '__esModule')
rmSync(`${oclifDoor}.map`, {force: true})
door(oclifDoor, 'oclif.cjs', names)

await bundle(createRequire(import.meta.url).resolve('mysql2/promise'), path('dist/lib/db/mysql2.cjs'))
door(path('dist/lib/db/mysql2.js'), 'mysql2.cjs', null)
