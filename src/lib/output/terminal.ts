/**
 * Text bound for a terminal. Host names, display names, aggregate and cell names come from the
 * databases, where a tenant or a compromised compute host may have written anything: an OSC sequence
 * that retitles the window or writes the clipboard, a CSI that clears the screen, a carriage return
 * that overprints a verdict. Every human line passes through here (the table renderer per cell, the
 * base command per message), so no formatter has to remember it; --json output is never touched
 * (JSON escapes C0 itself, and the base command escapes the rest).
 */

// C0 except \n and \t, DEL, C1, and the bidirectional overrides/isolates that reorder what is shown.
const CONTROL = '[\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069]'
// Only the styles the theme uses (bold, dim, the named colours and their resets): a planted SGR that
// hides text (8), blinks (5) or swaps colours (7) is escaped even when colour is on.
const THEME_SGR = '\\u001B\\[(?:1|2|22|3[0-79]|9[0-7])m'
const WITH_SGR = new RegExp(`${THEME_SGR}|${CONTROL}`, 'g')
const ANY_CONTROL = new RegExp(CONTROL, 'g')

/** A control character as visible text: ESC -> \x1b, U+202E -> \u202e. */
function visible(ch: string): string {
  const code = ch.charCodeAt(0)
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * Replaces every control character but \n and \t with a visible escape. With `keepSgr` (colour on),
 * the theme's own colour sequences survive; without it every ESC is shown as \x1b.
 */
export function terminalSafe(text: string, opts: {keepSgr?: boolean} = {}): string {
  if (opts.keepSgr) return text.replace(WITH_SGR, (m) => (m.length > 1 ? m : visible(m)))
  return text.replace(ANY_CONTROL, visible)
}

/**
 * No host name is longer than 255 characters (DNS), nor any nova name column: a longer run without
 * whitespace is shown by its ends. Table rendering is proportional to the widest cell times the
 * lines of a row, so one 20 kB name made a table of megabytes; --json keeps the whole value.
 */
export const MAX_WORD = 256
const HEAD = 96
const TAIL = 32
// Box-drawing characters (table borders) and ESC do not count as a word.
const LONG_WORD = new RegExp(`[^\\s\\u001B\\u2500-\\u257F]{${MAX_WORD + 1},}`, 'g')

export function elideLong(text: string): string {
  if (text.length <= MAX_WORD) return text
  return text.replace(LONG_WORD, (word) => {
    const chars = Array.from(word)
    if (chars.length <= MAX_WORD) return word
    return `${chars.slice(0, HEAD).join('')}…[${chars.length - HEAD - TAIL} more characters; --json shows all]…${chars.slice(-TAIL).join('')}`
  })
}

/** Both, in the order that keeps the elision marker's own length honest. */
export function humanText(text: string, opts: {keepSgr?: boolean} = {}): string {
  return elideLong(terminalSafe(text, opts))
}

/**
 * JSON text with DEL, C1 and the bidi controls escaped too: JSON.stringify leaves them raw, a
 * terminal that reads U+009B as CSI would act on them, and an override reorders what a reader sees. They can only occur inside strings, so the document parses to the
 * same values.
 */
export function jsonSafe(json: string): string {
  return json.replace(/[\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

// eslint-disable-next-line no-control-regex
const SGR_ANY = /\u001B\[[0-9;]*m/g
// A table's line (drawn fitted by renderTable): never re-wrapped here.
// eslint-disable-next-line no-control-regex
const TABLE_LINE = /^(?:\u001B\[[0-9;]*m)*[│┌├└|+]/

/**
 * Every line of a human report within `width` columns: a note, a plan line, a request line longer
 * than the terminal is wrapped at spaces (a word longer than the width is broken), its continuation
 * indented two more than the line. Tables are fitted when drawn and left alone; colour codes are
 * dropped from a line that has to be wrapped (a break could split one). width undefined: as it is.
 */
export function fitLines(text: string, width: number | undefined, measure: (line: string) => number = (l) => l.replace(SGR_ANY, '').length): string {
  if (width === undefined || width <= 0) return text
  return text
    .split('\n')
    .map((line) => (measure(line) <= width || TABLE_LINE.test(line) ? line : wrapPlain(line.replace(SGR_ANY, ''), width)))
    .join('\n')
}

function wrapPlain(line: string, width: number): string {
  const lead = /^ */.exec(line)?.[0].length ?? 0
  const indent = ' '.repeat(Math.min(lead + 2, Math.floor(width / 2)))
  const out: string[] = []
  let current = line.slice(0, lead)
  let fresh = true
  const room = () => width - current.length - (fresh ? 0 : 1)
  for (const word of line.slice(lead).split(/ +/)) {
    let w = word
    // A word that fits no line (a request URL, a long list) starts where it is; others move down.
    const fitsALine = w.length <= width - indent.length
    if (!fresh && w.length > room() && (fitsALine || room() < 8)) {
      out.push(current)
      current = indent
      fresh = true
    }
    while (w.length > room()) {
      // Broken after a separator a reader expects (&, ',' or '/') when one is in the second half.
      const take = Math.max(1, room())
      const window = w.slice(0, take)
      const sep = Math.max(window.lastIndexOf('&'), window.lastIndexOf(','), window.lastIndexOf('/'))
      const at = sep >= take / 2 ? sep + 1 : take
      current += (fresh ? '' : ' ') + w.slice(0, at)
      out.push(current)
      current = indent
      fresh = true
      w = w.slice(at)
    }
    if (w !== '') {
      current += (fresh ? '' : ' ') + w
      fresh = false
    }
  }
  if (current.trim() !== '') out.push(current)
  return out.join('\n')
}
