/**
 * Whole-file writes that a reader never sees half done: PATH.tmp-PID is created exclusively, written,
 * fsync'd and renamed over PATH. node_exporter's textfile collector reads its directory at any
 * moment, and a half-written metrics file would be a scrape error (or, worse, missing series).
 */
import {constants as fsConstants, promises as fsp, type Stats} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {ConfigError} from '../errors.js'

/** An errno as a reader understands it, with the code for searching. */
export function errnoText(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  const known: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOTDIR: 'a path component is not a directory',
    EISDIR: 'is a directory',
    ENOSPC: 'no space left on device',
    EEXIST: 'a file of that name appeared meanwhile',
    ELOOP: 'too many levels of symbolic links',
  }
  return e?.code ? `${known[e.code] ?? e.code} (${e.code})` : e instanceof Error ? e.message : String(error)
}

/**
 * Why a file we only read could not be read, in the few words the config errors use: the common
 * cases plainly, anything rarer as errnoText gives it.
 */
export function unreadableText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') return 'no such file'
  if (code === 'EACCES') return 'permission denied'
  if (code === 'EISDIR') return 'a directory'
  return errnoText(error)
}

function describeType(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isFIFO()) return 'a FIFO'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * Where a whole-file write may go. A rename replaces whatever PATH is: a symlink would become a
 * regular file, and `-o /dev/stdout` run as root would replace the system's link. So a symlink is
 * followed to the regular file it names (the link stays, its target is replaced); any other
 * non-regular target (directory, device, FIFO, socket, dangling link), or a directory that does not
 * exist or cannot be written, is refused. `fail(why)` words the error for the caller's flag.
 */
export async function regularFileTarget(path: string, fail: (why: string) => Error): Promise<string> {
  if (path === '') throw fail('empty file name')
  const devHint = (st: Stats) => (st.isCharacterDevice() ? '; use -o - to write to stdout' : '')
  let real = resolve(path)
  let st: Stats | undefined
  try {
    st = await fsp.lstat(real)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fail(errnoText(error))
  }
  if (st?.isSymbolicLink()) {
    try {
      real = await fsp.realpath(real)
      st = await fsp.stat(real)
    } catch (error) {
      throw fail(`a symlink whose target cannot be followed (${errnoText(error)})`)
    }
    if (!st.isFile()) throw fail(`a symlink to ${describeType(st)} (${real})${devHint(st)}`)
  } else if (st && !st.isFile()) {
    throw fail(`${describeType(st)}${devHint(st)}`)
  }
  const dir = dirname(real)
  let d: Stats
  try {
    d = await fsp.stat(dir)
    await fsp.access(dir, fsConstants.W_OK | fsConstants.X_OK)
  } catch (error) {
    throw fail(`directory ${dir}: ${errnoText(error)}`)
  }
  if (!d.isDirectory()) throw fail(`${dir} is not a directory`)
  return real
}

/** Writes `text` to PATH through PATH.tmp-PID (exclusive, fsync'd, renamed); returns the real path. */
export async function writeFileAtomic(path: string, text: string, what: string, flag: string): Promise<string> {
  const fail = (why: string) => new ConfigError(`cannot write the ${what} to ${path}: ${why}`, `Name a regular file in a writable directory with ${flag}.`)
  const real = await regularFileTarget(path, fail)
  const tmp = `${real}.tmp-${process.pid}`
  let fh: fsp.FileHandle | undefined
  try {
    // 'wx': never reuse whatever sits at the temporary name (a planted symlink).
    fh = await fsp.open(tmp, 'wx', 0o644)
    await fh.writeFile(text, 'utf8')
    await fh.sync()
    await fh.close()
    fh = undefined
    await fsp.rename(tmp, real)
  } catch (error) {
    await fh?.close().catch(() => undefined)
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await fsp.rm(tmp, {force: true})
    throw fail(errnoText(error))
  }
  return real
}
