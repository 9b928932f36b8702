import Table from 'cli-table3'

import {elideLong, terminalSafe} from './terminal.js'
import {colorEnabled, theme} from './theme.js'

export type Cell = string | number | boolean | null | undefined

export interface TableOptions {
  title?: string
  align?: Array<'left' | 'right' | 'center'>
  /** Columns (by index) that may be word-wrapped to fit `maxWidth`, e.g. free-text explanations. */
  wrap?: number[]
  /**
   * Width to fit in. Default: the terminal's width when stdout is a TTY; piped output is never
   * wrapped, so that grep and awk see one finding per line.
   */
  maxWidth?: number
}

// Wide enough for a uuid with a short prefix: cli-table3 truncates a word longer than its column.
const MIN_WRAPPED = 44
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

/** Column widths (with padding) that fit maxWidth by narrowing only the wrappable columns, widest first. */
function fitWidths(head: string[], rows: string[][], wrap: number[], maxWidth: number): Array<number | null> | null {
  const natural = head.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => Math.max(...(r[i] ?? '').split('\n').map(visibleLength)))) + PADDING)
  const total = () => natural.reduce((a, b) => a + b, 0) + head.length + 1
  if (total() <= maxWidth) return null
  const widths = natural.slice()
  let excess = total() - maxWidth
  while (excess > 0) {
    const candidates = wrap.filter((i) => widths[i] > MIN_WRAPPED + PADDING)
    if (candidates.length === 0) break
    const widest = candidates.reduce((a, b) => (widths[b] > widths[a] ? b : a))
    const others = candidates.filter((i) => i !== widest).map((i) => widths[i])
    const floor = Math.max(MIN_WRAPPED + PADDING, others.length > 0 ? Math.max(...others) : 0, widths[widest] - excess)
    const cut = Math.max(1, widths[widest] - floor)
    widths[widest] -= cut
    excess -= cut
  }
  return widths.map((w, i) => (wrap.includes(i) ? w : null))
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

/** A plain-bordered table; headers bold when colour is on. */
export function renderTable(headings: string[], rows: Cell[][], opts: TableOptions = {}): string {
  const c = theme()
  const keepSgr = colorEnabled()
  const wrap = opts.wrap ?? []
  const head = headings.map((h, i) => cellText(h, keepSgr, wrap.includes(i)))
  const text = rows.map((row) => row.map((v, i) => cellText(v, keepSgr, wrap.includes(i))))
  const maxWidth = opts.maxWidth === undefined ? terminalWidth() : opts.maxWidth > 0 ? opts.maxWidth : undefined
  const widths = maxWidth !== undefined && opts.wrap && opts.wrap.length > 0 ? fitWidths(head, text, opts.wrap, maxWidth) : null
  // cli-table3 indexes colAligns without checking it exists: pass it only when given.
  const table = new Table({
    head: head.map((h) => c.bold(h)),
    style: {head: [], border: []},
    ...(widths ? {colWidths: widths, wordWrap: true, wrapOnWordBoundary: true} : {wordWrap: false}),
    ...(opts.align ? {colAligns: opts.align} : {}),
  })
  for (const row of text) table.push(row)
  return (opts.title ? `${c.bold(cellText(opts.title, keepSgr, true))}\n` : '') + table.toString()
}
