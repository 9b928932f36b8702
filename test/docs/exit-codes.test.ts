/**
 * README's exit-code table is src/lib/errors.ts's (EXIT_CODE_TABLE, what every --help prints): the
 * same codes in the same order, each README meaning opening with errors.ts's (the README may add
 * examples in parentheses after it). No database needed.
 */
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {EXIT_CODE_TABLE, ExitCode} from '../../src/lib/errors.js'

function readmeTable(): Array<[number, string]> {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const start = readme.indexOf('\n## Exit codes')
  if (start < 0) throw new Error('README.md has no "## Exit codes" section')
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1))
  return [...section.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((m) => [Number(m[1]), m[2] as string])
}

/** errors.ts's meaning without its parenthesised examples: what the README's must say first. */
const head = (text: string): string => text.replace(/ \(.*$/, '')

describe("README's exit codes", () => {
  it('are the codes of errors.ts, in order, every one of them', () => {
    expect(readmeTable().map(([code]) => code)).toEqual(EXIT_CODE_TABLE.map(([code]) => code))
    expect(EXIT_CODE_TABLE.map(([code]) => code)).toEqual(Object.values(ExitCode).sort())
  })

  it('each opens with the meaning errors.ts gives it', () => {
    const readme = new Map(readmeTable())
    for (const [code, text] of EXIT_CODE_TABLE)
      expect(readme.get(code), `exit ${code}`).toMatch(new RegExp(`^${head(text).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`))
  })
})
