/**
 * Reading a file an operator named (nova.conf, --config, a read_default_file option file, an undo
 * file). readFileSync reads until EOF: /dev/zero or /dev/urandom never end, so the process grew to
 * the heap limit and died natively; a FIFO blocked forever. Here the file is opened without blocking,
 * checked to be a regular file on the descriptor that is read (no race with a rename), and read to at
 * most `maxBytes` + 1 bytes whatever its size says: a file that grows while it is read, or a procfs
 * file whose size reads 0, cannot push the read past the cap.
 */
import {closeSync, constants as fsConstants, fstatSync, openSync, readSync, type Stats} from 'node:fs'

import {fileKind, unreadableText} from './atomic-file.js'

export const MIB = 1024 * 1024

/** The size cap in words: '16 MiB'. */
export function sizeText(bytes: number): string {
  if (bytes >= MIB) return `${Math.round(bytes / MIB)} MiB`
  return bytes >= 1024 ? `${Math.round(bytes / 1024)} KiB` : `${bytes} bytes`
}

/**
 * Why the read failed: `why` is the few words for the error line; `errno` is set when the system
 * refused (ENOENT, EACCES...), so that a caller can treat a missing default file as absent.
 */
export type ReadFailure = (why: string, errno?: NodeJS.ErrnoException) => Error

const CHUNK = 1 << 16

/** The file's bytes as UTF-8 text; every refusal goes through `fail`. */
export function readBoundedFileSync(path: string, maxBytes: number, fail: ReadFailure): string {
  let fd: number
  try {
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY)
  } catch (error) {
    throw fail(unreadableText(error), error as NodeJS.ErrnoException)
  }
  try {
    let st: Stats
    try {
      st = fstatSync(fd)
    } catch (error) {
      throw fail(unreadableText(error), error as NodeJS.ErrnoException)
    }
    if (!st.isFile()) throw fail(`${fileKind(st)}, not a regular file`)
    if (st.size > maxBytes) throw fail(`${sizeText(st.size)}, over the ${sizeText(maxBytes)} cloudctl reads from such a file`)
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes + 1 - total))
      let n: number
      try {
        n = readSync(fd, buf, 0, buf.length, null)
      } catch (error) {
        throw fail(unreadableText(error), error as NodeJS.ErrnoException)
      }
      if (n === 0) break
      chunks.push(buf.subarray(0, n))
      total += n
      if (total > maxBytes) throw fail(`it grew past the ${sizeText(maxBytes)} cloudctl reads from such a file while being read`)
    }
    return Buffer.concat(chunks, total).toString('utf8')
  } finally {
    closeSync(fd)
  }
}
