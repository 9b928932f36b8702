/**
 * CONTRIBUTING.md's worked example compiles and its tests pass against the tree as it is now: its
 * code blocks are written into a copy of src (and test/support), the registry lines of its step 2
 * applied, the copy typechecked with the repo's compiler options, and the example's own test file
 * (step 5) run here. A change that leaves the example teaching something the code no longer
 * accepts (a FindingShapes convention, a builder method, a planner API) fails this file.
 */
import {cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import ts from 'typescript'
import {afterAll, describe, expect, it} from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The example's steps: `### N. Title — \`path\`` and the first ts block under it. */
function exampleBlocks(md: string): Array<{path: string; code: string}> {
  const start = md.indexOf('## Worked example')
  if (start < 0) throw new Error('CONTRIBUTING.md has no "## Worked example" section')
  const end = md.indexOf('\n## ', start + 3)
  const section = md.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^### \d+\.[^\n]*`([^`\n]+\.ts)`\n[\s\S]*?```ts\n([\s\S]*?)```/gm)].map((m) => ({path: m[1] as string, code: m[2] as string}))
}

/** Step 2 is a snippet of the registry: its imports join the file's, its entries open UNITS. */
function applyRegistrySnippet(registry: string, snippet: string): string {
  const lines = snippet.split('\n')
  const imports = lines.filter((l) => l.startsWith('import '))
  const entries = lines.filter((l) => l.trim() !== '' && !l.startsWith('import ') && !l.trim().startsWith('//'))
  const anchor = 'export const UNITS: readonly CheckUnit[] = ['
  if (!registry.includes(anchor)) throw new Error(`src/lib/checks/registry.ts no longer has "${anchor}"`)
  return `${imports.join('\n')}\n${registry.replace(anchor, `${anchor}\n${entries.join('\n')}`)}`
}

const blocks = exampleBlocks(readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8'))
const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-worked-example-'))
cpSync(join(ROOT, 'src'), join(tmp, 'src'), {recursive: true})
cpSync(join(ROOT, 'test', 'support'), join(tmp, 'test', 'support'), {recursive: true})
cpSync(join(ROOT, 'package.json'), join(tmp, 'package.json'))
symlinkSync(join(ROOT, 'node_modules'), join(tmp, 'node_modules'), 'dir')
const written: string[] = []
for (const {path, code} of blocks) {
  const file = join(tmp, path)
  if (path === 'src/lib/checks/registry.ts') writeFileSync(file, applyRegistrySnippet(readFileSync(file, 'utf8'), code))
  else {
    mkdirSync(dirname(file), {recursive: true})
    writeFileSync(file, code)
  }
  written.push(file)
}
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

describe('CONTRIBUTING.md worked example', () => {
  it('has its five steps: unit, registry, planner, command, test', () => {
    expect(blocks.map((b) => b.path)).toEqual([
      'src/lib/checks/cells/instance-task-stuck.ts',
      'src/lib/checks/registry.ts',
      'src/lib/repairs/task-state.ts',
      'src/commands/repair/task-state.ts',
      'test/checks/instance-task-stuck.test.ts',
    ])
  })

  it('typechecks against the tree with the repo compiler options', () => {
    const cfg = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (f) => ts.sys.readFile(f))
    const {options} = ts.parseJsonConfigFileContent(cfg.config, ts.sys, tmp)
    const program = ts.createProgram(written, {...options, rootDir: tmp, noEmit: true, types: ['node']})
    const errors = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? `${d.file.fileName.slice(tmp.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : ''
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
    })
    expect(errors).toEqual([])
  }, 120_000)
})

// The example's own tests (step 5), collected into this file and run against the copy.
await import(pathToFileURL(join(tmp, 'test/checks/instance-task-stuck.test.ts')).href)
