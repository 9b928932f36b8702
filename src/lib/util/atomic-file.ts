/**
 * Whole-file writes that a reader never sees half done: PATH.tmp-PID is created exclusively, written,
 * fsync'd and renamed over PATH. node_exporter's textfile collector reads its directory at any
 * moment, and a half-written metrics file would be a scrape error (or, worse, missing series).
 */
import {constants as fsConstants, promises as fsp, type Stats} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {ConfigError} from '../errors.js'

function errnoText(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  return e?.code ?? (e instanceof Error ? e.message : String(error))
}

/**
 * A symlink is followed to the regular file it names (the rename replaces the target, not the link);
 * a directory, device, FIFO or socket, or a missing or unwritable directory, is a usage error.
 */
export async function writeFileAtomic(path: string, text: string, what: string, flag: string): Promise<string> {
  const fail = (why: string) => new ConfigError(`cannot write the ${what} to ${path}: ${why}`, `Name a regular file in a writable directory with ${flag}.`)
  if (path === '') throw fail('empty file name')
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
  }
  if (st && !st.isFile()) throw fail(st.isDirectory() ? 'a directory' : 'not a regular file')
  try {
    await fsp.access(dirname(real), fsConstants.W_OK | fsConstants.X_OK)
  } catch (error) {
    throw fail(`directory ${dirname(real)}: ${errnoText(error)}`)
  }
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
