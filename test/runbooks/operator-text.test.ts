/**
 * Text that operators read names what they see (log lines, commands, findings), never the project's
 * own bookkeeping: no "seed 004" (a test incident) and no "issue 25" (a tracker number). Code comments
 * may keep those references; everything printed or published may not.
 */
import {readFileSync, readdirSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'

import {UNITS} from '../../src/lib/checks/index.js'
import {ROOT} from '../support/cli.js'

const INTERNAL = /\bseed 0\d\d\b|\bissue #?\d+\b|\bseed's\b/i

function offending(texts: Array<[where: string, text: string]>): string[] {
  return texts.filter(([, t]) => INTERNAL.test(t)).map(([w, t]) => `${w}: ${INTERNAL.exec(t)![0]}`)
}

function walk(dir: string, ext: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), ext) : e.name.endsWith(ext) ? [join(dir, e.name)] : [],
  )
}

/** A source file without its comments: what is left is code and the strings it prints. */
export function withoutComments(src: string): string[] {
  const out: string[] = []
  let inBlock = false
  for (const line of src.split('\n')) {
    const t = line.trim()
    if (inBlock) {
      if (t.includes('*/')) inBlock = false
      continue
    }
    if (t.startsWith('/*')) {
      if (!t.includes('*/')) inBlock = true
      continue
    }
    if (t.startsWith('//')) continue
    // A trailing `// comment` (a URL's `://` has no space before it).
    out.push(line.replace(/\s\/\/\s.*$/, ''))
  }
  return out
}

describe('operator-facing text has no internal references', () => {
  it('the detector itself: catches the references and spares comments', () => {
    expect(offending([['a', 'the mapping may point at the wrong one: seed 004']])).toHaveLength(1)
    expect(offending([['a', 'see issue 25 item 3']])).toHaveLength(1)
    expect(offending([['a', '--seed 7 makes random choices repeatable']])).toHaveLength(0)
    expect(withoutComments("const a = 1 // seed 004\n/**\n * issue 25\n */\nthis.note('mysql://x')")).toEqual(['const a = 1', "this.note('mysql://x')"])
  })

  it('runbooks (docs/runbooks)', () => {
    const dir = join(ROOT, 'docs', 'runbooks')
    const pages = readdirSync(dir).filter((f) => f.endsWith('.md'))
    expect(pages.length).toBeGreaterThan(5)
    expect(offending(pages.map((p) => [p, readFileSync(join(dir, p), 'utf8')]))).toEqual([])
  })

  it('operator docs: README, repairs, checks, capacity, json (docs/bench.md and docs/engine.md are for developers)', () => {
    const docs = ['README.md', 'docs/repairs.md', 'docs/checks.md', 'docs/capacity.md', 'docs/json.md']
    expect(offending(docs.map((p) => [p, readFileSync(join(ROOT, p), 'utf8')]))).toEqual([])
  })

  it('--help: descriptions, summaries, examples and flag/arg help in the oclif manifest', () => {
    // The manifest is what `--help` prints (built by `npm run build`).
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<
        string,
        {
          description?: string
          summary?: string
          examples?: unknown[]
          flags?: Record<string, {summary?: string; description?: string; helpGroup?: string}>
          args?: Record<string, {description?: string}>
        }
      >
    }
    const texts: Array<[string, string]> = []
    for (const [id, c] of Object.entries(manifest.commands)) {
      texts.push([`${id} description`, c.description ?? ''], [`${id} summary`, c.summary ?? ''], [`${id} examples`, JSON.stringify(c.examples ?? [])])
      for (const [name, f] of Object.entries(c.flags ?? {})) texts.push([`${id} --${name}`, `${f.summary ?? ''} ${f.description ?? ''}`])
      for (const [name, a] of Object.entries(c.args ?? {})) texts.push([`${id} ${name}`, a.description ?? ''])
    }
    expect(texts.length).toBeGreaterThan(50)
    expect(offending(texts)).toEqual([])
  })

  it('check units: summary, cause, repair (cloudctl explain, docs/checks.md)', () => {
    const texts = UNITS.flatMap((u): Array<[string, string]> => [
      [`${u.code} summary`, u.summary],
      [`${u.code} cause`, u.explain.cause],
      [`${u.code} repair`, u.explain.repair],
    ])
    expect(offending(texts)).toEqual([])
  })

  it('strings in src/ (finding messages, plan notes, errors, hints), comments aside', () => {
    const texts = walk(join(ROOT, 'src'), '.ts').flatMap((f) =>
      withoutComments(readFileSync(f, 'utf8')).map((l, i): [string, string] => [`${relative(ROOT, f)} (code line ${i + 1})`, l]),
    )
    expect(texts.length).toBeGreaterThan(1000)
    expect(offending(texts)).toEqual([])
  })
})
