/**
 * Whole-file writes that a reader never sees half done: PATH.tmp-PID is created exclusively, written,
 * fsync'd and renamed over PATH. node_exporter's textfile collector reads its directory at any
 * moment, and a half-written metrics file would be a scrape error (or, worse, missing series); a
 * crash right after the rename must not leave an empty snapshot under its name. replaceFile is the
 * one writer of both (and of the HTML reports), so they share the mode, fsync and signal rules.
 */
import {once} from 'node:events'
import {close, closeSync, constants as fsConstants, createWriteStream, fchmodSync, fchownSync, fsync, promises as fsp, type Stats} from 'node:fs'
import {basename, dirname, join, resolve} from 'node:path'
import type {Writable} from 'node:stream'
import {promisify} from 'node:util'

import {ConfigError} from '../errors.js'
import {removeOnSignal} from './signal-cleanup.js'

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
    if (!st.isFile()) throw fail(`a symlink to ${fileKind(st)} (${real})${devHint(st)}`)
  } else if (st && !st.isFile()) {
    throw fail(`${fileKind(st)}${devHint(st)}`)
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

/**
 * The file a rewrite replaces, whose mode (and owner) the new file must keep: a rename puts a new
 * inode in its place, made with the writer's umask, so a 0600 metrics file or snapshot became 0644.
 * Undefined when there is no such file yet.
 */
export async function existingFile(real: string): Promise<Stats | undefined> {
  try {
    const st = await fsp.stat(real)
    return st.isFile() ? st : undefined
  } catch {
    return undefined
  }
}

/** Gives the temporary file (open as `fd`) the mode of the file it replaces, and its owner when run as root. */
export function keepAttributes(fd: number, of: Stats): void {
  // chown first: it clears set-id bits, which chmod then restores as they were.
  if (process.getuid?.() === 0 && (of.uid !== 0 || of.gid !== 0)) fchownSync(fd, of.uid, of.gid)
  fchmodSync(fd, of.mode & 0o7777)
}

/**
 * Replaces `real` (a path regularFileTarget accepted) with what `fill` writes to the stream it is
 * given, through real.tmp-PID: created exclusively ('wx': never whatever already sits at that name,
 * such as a planted symlink), fsync'd, closed, renamed over `real`. A file that exists keeps its mode
 * (and, as root, its owner); a new one gets `newMode` less the umask. The temporary file is removed
 * when the write fails and when SIGINT/SIGTERM/SIGHUP ends the process mid-write (signal-cleanup).
 * `fill` may end the stream itself (a gzip stream piped into it) or leave that to this function.
 * Errors are thrown as they came (errno codes), for the caller to word for its flag.
 */
export async function replaceFile(real: string, newMode: number, fill: (out: Writable) => Promise<void>): Promise<void> {
  const previous = await existingFile(real)
  const tmp = `${real}.tmp-${process.pid}`
  // Created 0600 when it replaces a file, so that it is never readable by more than the file it replaces.
  // autoClose off: the file is fsync'd before it is closed.
  const file = createWriteStream(tmp, {flags: 'wx', mode: previous ? 0o600 : newMode, autoClose: false})
  let forget: (() => void) | undefined
  let fd: number | undefined
  try {
    await once(file, 'open')
    // Registered once the file is ours: with 'wx' refused, the name is someone else's to keep.
    forget = removeOnSignal(tmp)
    fd = (file as unknown as {fd: number}).fd
    if (previous) keepAttributes(fd, previous)
    await fill(file)
    if (!file.writableEnded) file.end()
    if (!file.writableFinished) await once(file, 'finish')
    await promisify(fsync)(fd)
    const open = fd
    fd = undefined
    await promisify(close)(open)
    await fsp.rename(tmp, real)
  } catch (error) {
    file.destroy()
    if (fd !== undefined) closeSync(fd)
    // Only a temporary file this run created is removed.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await fsp.rm(tmp, {force: true})
    throw error
  } finally {
    forget?.()
  }
}

/**
 * Writes `text` to PATH through replaceFile; returns the real path. Errors name the file and `flag`.
 */
export async function writeFileAtomic(path: string, text: string, what: string, flag: string, newMode = 0o644): Promise<string> {
  const fail = (why: string) => new ConfigError(`cannot write the ${what} to ${path}: ${why}`, `Name a regular file in a writable directory with ${flag}.`)
  const real = await regularFileTarget(path, fail)
  try {
    await replaceFile(real, newMode, async (out) => {
      if (!out.write(text, 'utf8')) await once(out, 'drain')
    })
  } catch (error) {
    throw fail(errnoText(error))
  }
  return real
}

/** Where a path leads, for comparing two of them: its real path (its directory's, for a new file) and its inode. */
async function fileIdentity(path: string): Promise<{real: string; inode?: string}> {
  const abs = resolve(path)
  try {
    const real = await fsp.realpath(abs)
    const st = await fsp.stat(real)
    return {real, inode: `${st.dev}:${st.ino}`}
  } catch {
    try {
      return {real: join(await fsp.realpath(dirname(abs)), basename(abs))}
    } catch {
      return {real: abs}
    }
  }
}

export interface NamedPath {
  /** The flag as the operator wrote it: '--html', '-o', '--snapshot'. */
  flag: string
  /** Undefined or '-' (stdout) when the flag was not given as a file. */
  path: string | undefined
}

/**
 * Refuses (exit 2) two outputs that are one file, or an output that is one of the inputs, by path or
 * by inode (a symlink or hard link to it): the second rename silently replaced the first output
 * (`-o X --html X` lost the metrics), and `-s X --html X` replaced the snapshot read with a page.
 */
export async function refuseCollidingPaths(outputs: NamedPath[], inputs: NamedPath[]): Promise<void> {
  const given = (list: NamedPath[]) => list.filter((p): p is {flag: string; path: string} => p.path !== undefined && p.path !== '' && p.path !== '-')
  const outs = await Promise.all(given(outputs).map(async (p) => ({...p, id: await fileIdentity(p.path)})))
  if (outs.length === 0) return
  const ins = await Promise.all(given(inputs).map(async (p) => ({...p, id: await fileIdentity(p.path)})))
  const same = (a: {real: string; inode?: string}, b: {real: string; inode?: string}) => a.real === b.real || (a.inode !== undefined && a.inode === b.inode)
  for (const [i, o] of outs.entries()) {
    for (const other of outs.slice(i + 1)) {
      if (same(o.id, other.id)) {
        throw new ConfigError(
          `${o.flag} ${o.path} and ${other.flag} ${other.path} are the same file: one output would replace the other`,
          'Give each output a file of its own.',
          'UsageError',
        )
      }
    }
    for (const input of ins) {
      if (same(o.id, input.id)) {
        throw new ConfigError(
          `${o.flag} ${o.path} is the ${input.flag} file ${input.path}: writing it would replace what is read`,
          `Write ${o.flag} to another file.`,
          'UsageError',
        )
      }
    }
  }
}

/** What a non-regular file is, for the one-line refusal. */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isFIFO()) return 'a FIFO (named pipe)'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}
