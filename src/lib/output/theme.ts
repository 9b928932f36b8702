/** The only place (with table.ts) that imports chalk: colours follow NO_COLOR and non-TTY output. */
import chalk, {Chalk, type ChalkInstance} from 'chalk'

import type {Severity} from '../domain/finding.js'

export function colorEnabled(stream: NodeJS.WriteStream = process.stdout): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false
  if (process.env.FORCE_COLOR !== undefined) return process.env.FORCE_COLOR !== '0'
  return Boolean(stream.isTTY)
}

export function theme(stream: NodeJS.WriteStream = process.stdout): ChalkInstance {
  return colorEnabled(stream) ? chalk : new Chalk({level: 0})
}

export function severityColor(sev: Severity, c: ChalkInstance = theme()): (s: string) => string {
  switch (sev) {
    case 'error':
      return c.red
    case 'warning':
      return c.yellow
    case 'unknown':
      return c.magenta
    default:
      return c.green
  }
}
