import {closeSync, openSync} from 'node:fs'
import {isatty, WriteStream} from 'node:tty'

/**
 * How one command's human output is laid out: the width its tables and lines fit in, and the border
 * characters. The base command builds one per command from its flags and the terminal and passes it
 * down to every formatter (there is no process-wide width: the tests run many commands in one
 * process, and one command's --max-width must not reach the next).
 */
export interface Display {
  /** Columns to fit in; undefined: never fitted (--max-width 0: one row per line for grep and awk). */
  readonly width: number | undefined
  /** Box drawing on a UTF-8 terminal, ASCII where the locale says otherwise. */
  readonly borders: 'unicode' | 'ascii'
}

/**
 * A locale that says its character set and is not UTF-8 (LANG=C, a serial console's POSIX): box
 * drawing would come out as mojibake there. The first of LC_ALL, LC_CTYPE, LANG that is set decides,
 * as for any C program; none set: UTF-8, what every terminal emulator speaks today.
 */
export function asciiLocale(env: NodeJS.ProcessEnv = process.env): boolean {
  const locale = [env.LC_ALL, env.LC_CTYPE, env.LANG].find((v) => v !== undefined && v !== '')
  return locale !== undefined && !/utf-?8/i.test(locale)
}

/** A set width (0: never fit): --max-width, the tests, the bench. */
export function fixedDisplay(width: number, borders: Display['borders'] = 'unicode'): Display {
  return {width: width > 0 ? width : undefined, borders}
}

/**
 * The display a command writes to: --max-width, else the terminal's columns, else $COLUMNS (what a
 * shell exports, what `COLUMNS=200 cloudctl ... | less` means), else the width of the terminal the
 * command was started from when stdout is a pipe (`| less`, `| grep`): stderr's, else /dev/tty's;
 * else 120 for logs and cron. The width is worked out when first asked, so that machine output never
 * opens /dev/tty.
 */
export function terminalDisplay(maxWidth: number | undefined, env: NodeJS.ProcessEnv = process.env): Display {
  if (maxWidth !== undefined) return fixedDisplay(maxWidth, asciiLocale(env) ? 'ascii' : 'unicode')
  let width: number | undefined
  return {
    get width() {
      width ??= terminalWidth(env)
      return width
    },
    borders: asciiLocale(env) ? 'ascii' : 'unicode',
  }
}

function terminalWidth(env: NodeJS.ProcessEnv): number {
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns
  const columns = Number.parseInt(env.COLUMNS ?? '', 10)
  if (Number.isInteger(columns) && columns > 0) return columns
  if (process.stderr.isTTY && process.stderr.columns > 0) return process.stderr.columns
  return controllingTerminalWidth() ?? 120
}

/** The columns of the controlling terminal (/dev/tty); undefined without one (cron, CI). */
function controllingTerminalWidth(): number | undefined {
  let fd: number | undefined
  try {
    fd = openSync('/dev/tty', 'r+')
    if (!isatty(fd)) return undefined
    const stream = new WriteStream(fd)
    const columns = stream.columns
    stream.destroy()
    fd = undefined
    return columns > 0 ? columns : undefined
  } catch {
    // No controlling terminal (ENXIO), or not allowed to open it: the fallback width.
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
