import {createRequire} from 'node:module'

import type * as Yaml from 'yaml'

let yaml: typeof Yaml | undefined

/**
 * The yaml package, loaded on first use: its ~70 modules cost a start-up ~40 ms of CPU, and most
 * runs (JSON or table output, JSON or columnar snapshots, no config file) never touch YAML. Its
 * CommonJS build, which is also what node resolves `import 'yaml'` to, so there is one copy.
 */
export function yamlLib(): typeof Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml
  return yaml
}
