import Table from 'cli-table3'

import {theme} from './theme.js'

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

function terminalWidth(): number | undefined {
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : undefined
}

function visibleLength(s: string): number {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001B\[[0-9;]*m/g, '').length
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

/** A plain-bordered table; headers bold when colour is on. */
export function renderTable(head: string[], rows: Cell[][], opts: TableOptions = {}): string {
  const c = theme()
  const text = rows.map((row) => row.map((v) => (v === null || v === undefined ? '' : String(v))))
  const maxWidth = opts.maxWidth ?? terminalWidth()
  const widths = maxWidth !== undefined && opts.wrap && opts.wrap.length > 0 ? fitWidths(head, text, opts.wrap, maxWidth) : null
  // cli-table3 indexes colAligns without checking it exists: pass it only when given.
  const table = new Table({
    head: head.map((h) => c.bold(h)),
    style: {head: [], border: []},
    ...(widths ? {colWidths: widths, wordWrap: true, wrapOnWordBoundary: true} : {wordWrap: false}),
    ...(opts.align ? {colAligns: opts.align} : {}),
  })
  for (const row of text) table.push(row)
  return (opts.title ? `${c.bold(opts.title)}\n` : '') + table.toString()
}
