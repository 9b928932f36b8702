import Table from 'cli-table3'

import {theme} from './theme.js'

export type Cell = string | number | boolean | null | undefined

/** A plain-bordered table; headers bold when colour is on. */
export function renderTable(head: string[], rows: Cell[][], opts: {title?: string; align?: Array<'left' | 'right' | 'center'>} = {}): string {
  const c = theme()
  // cli-table3 indexes colAligns without checking it exists: pass it only when given.
  const table = new Table({
    head: head.map((h) => c.bold(h)),
    style: {head: [], border: []},
    wordWrap: false,
    ...(opts.align ? {colAligns: opts.align} : {}),
  })
  for (const row of rows) table.push(row.map((v) => (v === null || v === undefined ? '' : String(v))))
  return (opts.title ? `${c.bold(opts.title)}\n` : '') + table.toString()
}
