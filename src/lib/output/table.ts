import stringWidth from 'string-width'

import type {Display} from './display.js'
import {elideLong, terminalSafe} from './terminal.js'
import {colorEnabled, theme} from './theme.js'

export type Cell = string | number | boolean | null | undefined

/**
 * Tables are drawn here, border by border: every cell is already fitted and wrapped by renderTable,
 * so what is left is padding each line to its column and joining them with the border characters.
 * (cli-table3 did this before; its measuring was quadratic on long cells and the speed-up needed its
 * internal utils patched for the whole process. test/output/table.test.ts holds this drawing equal to
 * cli-table3's, through its public API, on the same cells.)
 */

/**
 * Printable ASCII and the narrow symbols cloudctl's own text uses (· × ÷ — • … →, box drawing and
 * blocks): each is one column wide (the test checks every one against string-width), so a line of
 * them is as wide as it is long and string-width is asked only about the rest (wide characters, emoji).
 */
export const NARROW_TEXT = /^[\u0020-\u007E\u00B7\u00D7\u00F7\u2014\u2022\u2026\u2192\u2500-\u259F]*$/

// The colour codes the theme writes (and any other SGR): they take no column.
// eslint-disable-next-line no-control-regex
const ANY_SGR = /\u001B\[[0-9;]*m/g

/** Columns a one-line text takes on a terminal. */
export function textWidth(line: string): number {
  const plain = line.includes('\u001B') ? line.replace(ANY_SGR, '') : line
  return NARROW_TEXT.test(plain) ? plain.length : stringWidth(plain)
}

/** The widest line of a cell. */
function cellWidth(text: string): number {
  let max = 0
  for (const line of text.split('\n')) max = Math.max(max, textWidth(line))
  return max
}

/** A line cut to `width` columns, ending in '…' (colour dropped: a cut could split an escape sequence). */
function cut(line: string, width: number): string {
  if (textWidth(line) <= width) return line
  let out = ''
  let used = 0
  for (const ch of line.replace(ANY_SGR, '')) {
    const w = textWidth(ch)
    if (used + w > width - 1) break
    out += ch
    used += w
  }
  return `${out}…`
}

/** Border characters: box drawing on a UTF-8 terminal, ASCII where the locale says otherwise. */
interface Borders {
  h: string
  v: string
  top: [string, string, string]
  mid: [string, string, string]
  bottom: [string, string, string]
}
const UNICODE: Borders = {h: '─', v: '│', top: ['┌', '┬', '┐'], mid: ['├', '┼', '┤'], bottom: ['└', '┴', '┘']}
const ASCII: Borders = {h: '-', v: '|', top: ['+', '+', '+'], mid: ['+', '+', '+'], bottom: ['+', '+', '+']}

export interface TableOptions {
  title?: string
  align?: Array<'left' | 'right' | 'center'>
  /**
   * Columns (by index) of free text (messages, repairs): narrowed first when the table must fit.
   * Other columns (codes, subjects, uuids) are narrowed only when the free text alone cannot make room.
   */
  wrap?: number[]
}

// Free text is not narrowed below this while other columns can still give way.
const MIN_FREE_TEXT = 24
// No column is narrower than this: a uuid then takes 5 lines, still readable.
const MIN_COLUMN = 8
// One space of padding on each side of a cell and one border character per column.
const PADDING = 2

function stripSgr(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001B\[[0-9;]*m/g, '')
}

const visibleLength = textWidth

const lineWidths = (s: string) => s.split('\n').map(visibleLength)

// Loops, not Math.max(...list): a column of 10k findings has more words than a call takes arguments.
function widest(texts: Iterable<string>, measure: (t: string) => number[]): number {
  let max = 0
  for (const t of texts) for (const w of measure(t)) if (w > max) max = w
  return max
}
const words = (t: string) =>
  stripSgr(t)
    .split(/\s+|(?<==)|(?<=\.)/)
    .map((w) => Array.from(w).length)

/**
 * Content widths (without padding) that fit maxWidth, or null when the table fits as it is. The
 * widest column gives way first, in three passes: free text down to MIN_FREE_TEXT; then every column
 * down to its longest word (a code, a host name, a uuid stays whole); then down to MIN_COLUMN (words
 * broken). A table that cannot fit even then is as narrow as it can be.
 */
function fitWidths(head: string[], rows: string[][], wrap: number[], maxWidth: number): number[] | null {
  const n = head.length
  const column = (h: string, i: number) => [h, ...rows.map((r) => r[i] ?? '')]
  const natural = head.map((h, i) => widest(column(h, i), lineWidths))
  const budget = maxWidth - (n + 1) - PADDING * n
  const sum = (w: number[]) => w.reduce((a, b) => a + b, 0)
  if (sum(natural) <= budget) return null
  // A word here is what wrapLine keeps whole when it can: key= and host.domain parts break off.
  const longestWord = head.map((h, i) => widest(column(h, i), words))
  const widths = natural.slice()
  const passes: Array<(i: number) => number> = [
    (i) => (wrap.includes(i) ? Math.min(natural[i], MIN_FREE_TEXT) : natural[i]),
    (i) => Math.min(natural[i], Math.max(MIN_COLUMN, longestWord[i], wrap.includes(i) ? MIN_FREE_TEXT : 0)),
    (i) => Math.min(natural[i], MIN_COLUMN),
  ]
  for (const floor of passes) {
    let excess = sum(widths) - budget
    while (excess > 0) {
      const candidates = widths.map((w, i) => i).filter((i) => widths[i] > floor(i))
      if (candidates.length === 0) break
      const widest = candidates.reduce((a, b) => (widths[b] > widths[a] ? b : a))
      const next = Math.max(floor(widest), ...candidates.filter((i) => i !== widest).map((i) => widths[i]))
      const cut = Math.min(excess, Math.max(1, widths[widest] - next))
      widths[widest] -= cut
      excess -= cut
    }
    if (excess <= 0) break
  }
  return widths
}

/** Splits one line into pieces of at most `width` visible characters, at spaces where it can. */
function wrapLine(line: string, width: number): string[] {
  const chars = Array.from(line)
  if (chars.length <= width) return [line]
  const out: string[] = []
  let rest = chars
  while (rest.length > width) {
    let cut = rest.lastIndexOf(' ', width)
    if (cut <= 0) {
      // No space: break after the last separator a reader expects a break at (host.domain, a-uuid, k=v).
      const window = rest.slice(0, width)
      // A key=value breaks after its '=' first, so that a uuid stays whole on the next line.
      const eq = window.indexOf('=')
      const sep = Math.max(window.lastIndexOf('.'), window.lastIndexOf('-'), window.lastIndexOf(','), window.lastIndexOf('/'))
      cut = eq > 0 && rest.length - eq - 1 <= width ? eq + 1 : sep >= width / 2 ? sep + 1 : width
      out.push(rest.slice(0, cut).join(''))
      rest = rest.slice(cut)
    } else {
      out.push(rest.slice(0, cut).join(''))
      rest = rest.slice(cut + 1)
    }
  }
  if (rest.length > 0) out.push(rest.join(''))
  return out
}

// eslint-disable-next-line no-control-regex
const WHOLE_SGR = /^(\u001B\[[0-9;]*m)([^\u001B]*)(\u001B\[[0-9;]*m)$/

// A wrapped cell is shown by its ends beyond this many lines: a row blob (an undo plan restores whole
// numa_topology texts) wrapped into a narrow column would be hundreds of lines of JSON, and the table
// library measures every line of every cell again for each row (seconds per plan).
const MAX_WRAPPED_LINES = 24

function capLines(lines: string[], width: number): string[] {
  if (lines.length <= MAX_WRAPPED_LINES) return lines
  const head = MAX_WRAPPED_LINES - 3
  const marker = Array.from(`…[${lines.length - head - 2} more lines; --json shows all]`)
  return [...lines.slice(0, head), marker.slice(0, Math.max(1, width)).join(''), ...lines.slice(-2)]
}

/** A cell wrapped to `width`; a cell coloured as a whole (severity) keeps its colour on every line. */
function wrapCell(text: string, width: number): string {
  if (Math.max(...lineWidths(text)) <= width) return text
  const whole = WHOLE_SGR.exec(text)
  if (whole)
    return capLines(wrapLine(whole[2], width), width)
      .map((l) => `${whole[1]}${l}${whole[3]}`)
      .join('\n')
  return capLines(
    stripSgr(text)
      .split('\n')
      .flatMap((l) => wrapLine(l, width)),
    width,
  ).join('\n')
}

// A line of a column that is never wrapped is shown by its ends beyond this: a wrapped neighbour
// repeats the row's full width on every line it wraps to.
const MAX_UNWRAPPED_LINE = 512

/**
 * A cell as the terminal will show it: control characters made visible (the theme's colours kept
 * when colour is on), overlong words elided. Cells are what a database row said: this is the one
 * place every table passes through.
 */
function cellText(v: Cell, keepSgr: boolean, wrapped: boolean): string {
  if (v === null || v === undefined) return ''
  const text = elideLong(terminalSafe(String(v), {keepSgr}))
  if (wrapped || text.length <= MAX_UNWRAPPED_LINE) return text
  return text
    .split('\n')
    .map((line) => {
      if (visibleLength(line) <= MAX_UNWRAPPED_LINE) return line
      // Colour is dropped from such a line: a cut could split an escape sequence.
      const chars = Array.from(stripSgr(line))
      const keep = MAX_UNWRAPPED_LINE - 64
      return `${chars.slice(0, keep).join('')}…[${chars.length - keep} more characters; --json shows all]`
    })
    .join('\n')
}

/** A plain-bordered table that fits the command's display; headers bold when colour is on. */
export function renderTable(display: Display, headings: string[], rows: Cell[][], opts: TableOptions = {}): string {
  const c = theme()
  const keepSgr = colorEnabled()
  const maxWidth = display.width
  const fitting = maxWidth !== undefined
  const head = headings.map((h) => cellText(h, keepSgr, fitting))
  // Never fitted (--max-width 0): one row per line for grep and awk, a cell's lines joined.
  const oneLine = (t: string) => (fitting ? t : t.replace(/\n/g, ' '))
  let text = rows.map((row) => row.map((v) => oneLine(cellText(v, keepSgr, fitting))))
  const widths = fitting ? fitWidths(head, text, opts.wrap ?? [], maxWidth) : null
  let shownHead = head
  if (widths) {
    shownHead = head.map((h, i) => wrapCell(h, widths[i]))
    text = text.map((r) => r.map((v, i) => wrapCell(v, widths[i])))
  }
  const title = opts.title ? cellText(opts.title, keepSgr, true) : ''
  const drawn = drawTable(
    shownHead.map((h) => c.bold(h)),
    text,
    widths?.map((w) => w + PADDING),
    opts.align,
    display.borders,
  )
  return (opts.title ? `${c.bold(maxWidth ? wrapCell(title, maxWidth) : title)}\n` : '') + drawn
}

/**
 * The bordered table text of cells already fitted (`colWidths` with padding; undefined: natural
 * widths, the widest line of each column). A line wider than its column is cut with '…'. Rows are
 * separated by a rule, as the tables always were.
 */
export function drawTable(
  head: string[],
  rows: string[][],
  colWidths: number[] | undefined,
  align: TableOptions['align'],
  borders: Display['borders'],
): string {
  const b = borders === 'ascii' ? ASCII : UNICODE
  const n = Math.max(head.length, ...rows.slice(0, 1).map((r) => r.length))
  if (n === 0) return ''
  const widths =
    colWidths ??
    Array.from({length: n}, (_, i) => {
      let w = Math.max(1, cellWidth(head[i] ?? '') + PADDING)
      for (const r of rows) w = Math.max(w, cellWidth(r[i] ?? '') + PADDING)
      return w
    })
  const rule = ([l, m, r]: [string, string, string]) => `${l}${widths.map((w) => b.h.repeat(w)).join(m)}${r}`
  const pad = (line: string, i: number) => {
    const inner = widths[i] - PADDING
    const text = cut(line, inner)
    const room = Math.max(0, inner - textWidth(text))
    const dir = align?.[i] ?? 'left'
    if (dir === 'right') return ` ${' '.repeat(room)}${text} `
    if (dir === 'center') return ` ${' '.repeat(room - Math.ceil(room / 2))}${text}${' '.repeat(Math.ceil(room / 2))} `
    return ` ${text}${' '.repeat(room)} `
  }
  const drawRow = (row: string[]) => {
    const cells = widths.map((_, i) => (row[i] ?? '').split('\n'))
    const height = Math.max(...cells.map((c) => c.length))
    const lines: string[] = []
    for (let l = 0; l < height; l++) lines.push(`${b.v}${cells.map((c, i) => pad(c[l] ?? '', i)).join(b.v)}${b.v}`)
    return lines.join('\n')
  }
  const out: string[] = [rule(b.top)]
  if (head.length > 0) out.push(drawRow(head))
  rows.forEach((row, i) => {
    if (i > 0 || head.length > 0) out.push(rule(b.mid))
    out.push(drawRow(row))
  })
  out.push(rule(b.bottom))
  return out.join('\n')
}
