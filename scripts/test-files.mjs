#!/usr/bin/env node
// Lists the test files of one kind, for `npm run test:unit | test:db | test:e2e`:
// - e2e: runs the built CLI (a *.e2e.test.ts, or a test reaching test/support/cli.ts);
// - db: needs the MariaDB of CLOUDCTL_TEST_DSN (reaches test/support/db.ts, the driver or a
//   connection of src/lib/db, or names CLOUDCTL_TEST_DSN), not e2e;
// - unit: the rest, which run with no database and no build.
// "Reaches" follows the test's relative imports through test/ and scripts/ (src is not followed:
// only the db layer's entry points count, by name). `npm test` still runs every file.
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const kind = process.argv[2]
if (!['unit', 'db', 'e2e'].includes(kind)) {
  process.stderr.write('usage: node scripts/test-files.mjs unit|db|e2e\n')
  process.exit(2)
}

const DB = [
  /test\/support\/db\.ts$/,
  /test\/repairs\/support\.ts$/,
  /src\/lib\/db\/(connection|table-reader|row-stream|capture|read-[\w-]+|repair\/[\w-]+)\.ts$/,
]
const E2E = [/test\/support\/cli\.ts$/]
const seen = new Map()

/** Which of 'db' / 'e2e' a file reaches through its relative imports. */
function reach(file) {
  if (seen.has(file)) return seen.get(file)
  const out = new Set()
  seen.set(file, out)
  const rel = relative(ROOT, file)
  if (DB.some((r) => r.test(rel))) out.add('db')
  if (E2E.some((r) => r.test(rel))) out.add('e2e')
  if (rel.startsWith('src/') || !existsSync(file)) return out
  const text = readFileSync(file, 'utf8')
  if (/CLOUDCTL_TEST_DSN|mysql2/.test(text)) out.add('db')
  for (const m of text.matchAll(/(?:from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), m[1]).replace(/\.js$/, '.ts')
    const found = [target, target.replace(/\.ts$/, '.mjs'), target.replace(/\.ts$/, '.js')].find((f) => existsSync(f))
    if (found) for (const k of reach(found)) out.add(k)
  }
  return out
}

const tests = readdirSync(join(ROOT, 'test'), {recursive: true, encoding: 'utf8'})
  .filter((f) => f.endsWith('.test.ts') && !f.split('/').some((p) => p.startsWith('.')))
  .map((f) => join(ROOT, 'test', f))
  .sort()
const kindOf = (f) => {
  const r = reach(f)
  if (f.endsWith('.e2e.test.ts') || r.has('e2e')) return 'e2e'
  return r.has('db') ? 'db' : 'unit'
}
process.stdout.write(
  `${tests
    .filter((f) => kindOf(f) === kind)
    .map((f) => relative(ROOT, f))
    .join('\n')}\n`,
)
