import type TableClass from 'cli-table3'
import {createRequire} from 'node:module'

import {elideLong, terminalSafe} from './terminal.js'
import {colorEnabled, theme} from './theme.js'

export type Cell = string | number | boolean | null | undefined

/**
 * cli-table3 (pinned to 0.6.5 in package.json: its utils module is patched here) measures text with string-width, which builds its ANSI expression anew and runs an
 * emoji expression on every call, several calls per line drawn; and it draws each line of a cell after
 * truncating the cell's whole text to 10 columns for a debug message it only prints in its debug mode,
 * which on a text of several lines takes off one character at a time and measures every line again
 * each time (quadratic: 10k findings took minutes). The cell module calls these through the utils
 * object, so they are replaced there, each by a fast path where the answer is the same by
 * construction and cli-table3's own function everywhere else (test/output/table.test.ts compares):
 * - width: lines of printable ASCII and a few narrow symbols (NARROW_TEXT) once its SGR colour codes
 *   are taken out (what the theme writes) are as wide as they are long; anything else (wide
 *   characters, tabs, emoji) is measured as before;
 * - truncate: a text of several lines is only passed by that debug call (a drawn line is one line),
 *   and its result is not used: it is returned as it is; a text that fits is returned as it is, as
 *   cli-table3 does after measuring it;
 * - pad: the same padding, measured by the width above.
 */
interface TableUtils {
  strlen: (text: string) => number
  truncate: (text: string, width: number, mark?: string) => string
  pad: (text: string, width: number, fill: string, dir?: string) => string
}
const load = createRequire(import.meta.url)

/** cli-table3's own functions, kept before the patch below (the test holds the fast paths to them). */
export function cliTable3Utils(): Readonly<TableUtils> {
  return cliTable3().original
}

let loaded: {Table: typeof TableClass; original: Readonly<TableUtils>} | undefined

/**
 * cli-table3, loaded and patched on the first table drawn: a command that prints JSON (a runbook's
 * `simulate boot --json`) does not pay for loading it and string-width.
 */
function cliTable3(): {Table: typeof TableClass; original: Readonly<TableUtils>} {
  if (loaded) return loaded
  const tableUtils = load('cli-table3/src/utils.js') as TableUtils
  const original = {...tableUtils}
  loaded = {Table: load('cli-table3') as typeof TableClass, original}
  tableUtils.strlen = fastStrlen
  tableUtils.truncate = (text, width, mark) => (text.includes('\n') || fastStrlen(text) <= width ? text : original.truncate(text, width, mark))
  tableUtils.pad = (text, width, fill, dir) => {
    const length = fastStrlen(text)
    if (width + 1 < length) return text
    const n = Math.max(0, width - length)
    if (dir === 'right') return fill.repeat(n) + text
    if (dir === 'center') return fill.repeat(n - Math.ceil(n / 2)) + text + fill.repeat(Math.ceil(n / 2))
    return text + fill.repeat(n)
  }
  return loaded
}
function fastStrlen(text: string): number {
  const lines = String(text).replace(TABLE_SGR, '').split('\n')
  let max = 0
  for (const line of lines) {
    if (!NARROW_TEXT.test(line)) return cliTable3().original.strlen(text)
    if (line.length > max) max = line.length
  }
  return max
}
// cli-table3's colour code expression (utils.js codeRegex) and the lines string-width counts 1 per character.
// eslint-disable-next-line no-control-regex
const TABLE_SGR = /\u001B\[(?:\d*;){0,5}\d*m/g
/**
 * Printable ASCII and the narrow symbols cloudctl's own text uses (· × ÷ — • … →, box drawing and
 * blocks): each is one column for string-width, none is an emoji (the test checks every one). An
 * elided cell ends in '…': without it here, each of its lines went through string-width.
 */
export const NARROW_TEXT = /^[\u0020-\u007E\u00B7\u00D7\u00F7\u2014\u2022\u2026\u2192\u2500-\u259F]*$/

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

// Loops, not Math.max(...list): a column of 10k findings has more words than a call takes arguments.
function widest(texts: Iterable<string>, measure: (t: string) => number[]): number {
  let max = 0
  for (const t of texts) for (const w of measure(t)) if (w > max) max = w
  return max
}
const words = (t: string) => stripSgr(t).split(/\s+|(?<==)|(?<=\.)/).map((w) => Array.from(w).length)

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
  const title = opts.title ? cellText(opts.title, keepSgr, true) : ''
  const drawn = drawTable(
    shownHead.map((h) => c.bold(h)),
    text,
    widths?.map((w) => w + PADDING),
    opts.align,
  )
  return (opts.title ? `${c.bold(maxWidth ? wrapCell(title, maxWidth) : title)}\n` : '') + drawn
}

/**
 * Rows cli-table3 lays out at once. Its layout looks for spanning cells by comparing each cell with
 * every cell of the rows above: quadratic in rows (10k findings: seconds). A longer table is drawn in
 * parts of this many rows with the same column widths, joined where the parts meet by the rule
 * cli-table3 draws between two rows: the same text as one table (test/output/table.test.ts).
 */
const ROWS_PER_PART = 200

/** The bordered table text of cells already fitted (`colWidths` with padding; undefined: natural widths). */
export function drawTable(head: string[], rows: string[][], colWidths: number[] | undefined, align: TableOptions['align'], rowsPerPart = ROWS_PER_PART): string {
  // Wrapping is done before (cli-table3's own wordWrap truncates a word longer than its column).
  // cli-table3 indexes colAligns without checking it exists: pass it only when given.
  const table = (withHead: boolean, widths: number[] | undefined, part: string[][]) => {
    const t = new (cliTable3().Table)({head: withHead ? head : [], style: {head: [], border: []}, wordWrap: false, ...(widths ? {colWidths: widths} : {}), ...(align ? {colAligns: align} : {})})
    for (const row of part) t.push(row)
    return t.toString()
  }
  if (rows.length <= rowsPerPart) return table(true, colWidths, rows)
  // cli-table3's natural width: the widest line of the column's cells, plus padding, at least 1.
  const widths =
    colWidths ??
    head.map((h, i) => {
      let w = Math.max(1, fastStrlen(h) + PADDING)
      for (const r of rows) w = Math.max(w, fastStrlen(r[i] ?? '') + PADDING)
      return w
    })
  const between = `├${widths.map((w) => '─'.repeat(w)).join('┼')}┤`
  const parts: string[] = []
  for (let start = 0; start < rows.length; start += rowsPerPart) {
    const lines = table(start === 0, widths, rows.slice(start, start + rowsPerPart)).split('\n')
    // Every part but the last loses its bottom border; every part but the first its top border.
    if (start + rowsPerPart < rows.length) lines.pop()
    if (start > 0) lines[0] = between
    parts.push(lines.join('\n'))
  }
  return parts.join('\n')
}
