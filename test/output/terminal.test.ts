import {describe, expect, it} from 'vitest'

import {elideLong, humanText, jsonSafe, MAX_WORD, terminalSafe} from '../../src/lib/output/terminal.js'
import {fixedDisplay} from '../../src/lib/output/display.js'
import {renderTable} from '../../src/lib/output/table.js'

describe('terminal-safe text', () => {
  it('shows every control character but \\n and \\t as a visible escape', () => {
    expect(terminalSafe('a\u001B]0;t\u0007b\r\n\tc\u007F\u009B\u202E')).toBe('a\\x1b]0;t\\x07b\\x0d\n\tc\\x7f\\x9b\\u202e')
  })

  it("keeps only the theme's colour sequences when colour is on", () => {
    expect(terminalSafe('\u001B[31mred\u001B[39m \u001B[8mhidden\u001B[2J', {keepSgr: true})).toBe('\u001B[31mred\u001B[39m \\x1b[8mhidden\\x1b[2J')
    expect(terminalSafe('\u001B[31mred\u001B[39m')).toBe('\\x1b[31mred\\x1b[39m')
  })

  it('elides a word longer than a host name can be, keeping both ends', () => {
    const host = `${'h'.repeat(20_000)}-tail`
    const out = elideLong(`on ${host} now`)
    expect(out.length).toBeLessThan(300)
    expect(out).toMatch(/^on h{96}…\[19877 more characters; --json shows all\]…h{27}-tail now$/)
    expect(elideLong('x'.repeat(MAX_WORD))).toBe('x'.repeat(MAX_WORD))
    // table borders are no word
    const border = '─'.repeat(1000)
    expect(humanText(border)).toBe(border)
  })

  it('JSON text escapes DEL, C1 and bidi controls and parses to the same value', () => {
    const value = {name: 'a\u007F\u009B\u202Eb'}
    const text = jsonSafe(JSON.stringify(value))
    expect(text).toBe('{"name":"a\\u007f\\u009b\\u202eb"}')
    expect(JSON.parse(text)).toEqual(value)
  })

  it('renderTable makes every cell and heading safe before measuring widths', () => {
    const out = renderTable(fixedDisplay(80), ['host\u001B[2J'], [['cmp\u0007-1'], ['y'.repeat(5000)]])
    // eslint-disable-next-line no-control-regex
    expect(out).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/)
    expect(out).toContain('host\\x1b[2J')
    expect(out).toContain('cmp\\x07-1')
    expect(Math.max(...out.split('\n').map((l) => l.length))).toBeLessThan(600)
  })
})
