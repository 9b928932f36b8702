import Table from 'cli-table3'

import {elideLong, terminalSafe} from './terminal.js'
import {colorEnabled, theme} from './theme.js'

export type Cell = string | number | boolean | null | undefined

export interface TableOptions {
  title?: string
  align?: Array<'left' | 'right' | 'center'>
  /**
   * Columns (by index) of free text (messages, repairs): narrowed first when the table must fit.
   * Other columns (codes, subjects, uuids) are narrowed only when the free text alone cannot make room.
   */
  wrap?: number[]
  /**
   * Width to fit in (0: never wrap, one row per line for grep and awk). Default: --max-width, else the
   * terminal's width, else $COLUMNS, else 120 (see displayWidth).
   */
  maxWidth?: number
}

// Free text is not narrowed below this while other columns can still give way.
const MIN_FREE_TEXT = 24
// No column is narrower than this: a uuid then takes 5 lines, still readable.
const MIN_COLUMN = 8
// cli-table3 adds one space of padding on each side of a cell and one border character per column.
const PADDING = 2

// Set once per command from --max-width (0: never fit); undefined: the display's width.
let requestedWidth: number | undefined

export function setTableWidth(width: number | undefined): void {
  requestedWidth = width
}

/**
 * The width tables fit in: --max-width, else the terminal's columns, else $COLUMNS (what a shell
 * exports, what `COLUMNS=200 cloudctl ... | less` means), else 120 for pipes and logs.
 */
export function displayWidth(): number | undefined {
  if (requestedWidth !== undefined) return requestedWidth > 0 ? requestedWidth : undefined
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns
  const env = Number.parseInt(process.env.COLUMNS ?? '', 10)
  if (Number.isInteger(env) && env > 0) return env
  return 120
}

function terminalWidth(): number | undefined {
  return displayWidth()
}

function stripSgr(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001B\[[0-9;]*m/g, '')
}

function visibleLength(s: string): number {
  return stripSgr(s).length
}

const lineWidths = (s: string) => s.split('\n').map(visibleLength)

/**
 * Content widths (without padding) that fit maxWidth, or null when the table fits as it is. The
 * widest column gives way first, in three passes: free text down to MIN_FREE_TEXT; then every column
 * down to its longest word (a code, a host name, a uuid stays whole); then down to MIN_COLUMN (words
 * broken). A table that cannot fit even then is as narrow as it can be.
 */
function fitWidths(head: string[], rows: string[][], wrap: number[], maxWidth: number): number[] | null {
  const n = head.length
  const natural = head.map((h, i) => Math.max(...lineWidths(h), ...rows.map((r) => Math.max(...lineWidths(r[i] ?? '')))))
  const budget = maxWidth - (n + 1) - PADDING * n
  const sum = (w: number[]) => w.reduce((a, b) => a + b, 0)
  if (sum(natural) <= budget) return null
  const longestWord = head.map((h, i) =>
    // A word here is what wrapLine keeps whole when it can: key= and host.domain parts break off.
    Math.max(...[h, ...rows.map((r) => r[i] ?? '')].flatMap((t) => stripSgr(t).split(/\s+|(?<==)|(?<=\.)/).map((w) => Array.from(w).length))),
  )
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
  if (whole) return capLines(wrapLine(whole[2], width), width).map((l) => `${whole[1]}${l}${whole[3]}`).join('\n')
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

/** A plain-bordered table that fits the display width; headers bold when colour is on. */
export function renderTable(headings: string[], rows: Cell[][], opts: TableOptions = {}): string {
  const c = theme()
  const keepSgr = colorEnabled()
  const maxWidth = opts.maxWidth === undefined ? terminalWidth() : opts.maxWidth > 0 ? opts.maxWidth : undefined
  const fitting = maxWidth !== undefined
  const head = headings.map((h) => cellText(h, keepSgr, fitting))
  let text = rows.map((row) => row.map((v) => cellText(v, keepSgr, fitting)))
  const widths = fitting ? fitWidths(head, text, opts.wrap ?? [], maxWidth) : null
  let shownHead = head
  if (widths) {
    shownHead = head.map((h, i) => wrapCell(h, widths[i]))
    text = text.map((r) => r.map((v, i) => wrapCell(v, widths[i])))
  }
  // Wrapping is done above (cli-table3's own wordWrap truncates a word longer than its column).
  // cli-table3 indexes colAligns without checking it exists: pass it only when given.
  const table = new Table({
    head: shownHead.map((h) => c.bold(h)),
    style: {head: [], border: []},
    wordWrap: false,
    ...(widths ? {colWidths: widths.map((w) => w + PADDING)} : {}),
    ...(opts.align ? {colAligns: opts.align} : {}),
  })
  for (const row of text) table.push(row)
  const title = opts.title ? cellText(opts.title, keepSgr, true) : ''
  return (opts.title ? `${c.bold(maxWidth ? wrapCell(title, maxWidth) : title)}\n` : '') + table.toString()
}
