/**
 * The repair audit log: JSON lines, appended and fsync'd. A run that is about to commit writes a
 * `committing` line (what it is about to commit, the undo file) before its first COMMIT; a line that
 * cannot be written then stops the run, so no applied run goes unrecorded. The outcome line follows
 * and counts only the rows that were committed.
 *
 * Only a regular file on a real filesystem can hold the lines: a character device (/dev/full,
 * /dev/null), a FIFO (whose open blocks until a reader comes) or a file of a pseudo-filesystem
 * (/proc/version: it opens, and every write fails) is refused before anything is written.
 */
import {closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, statSync, statfsSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

import {CloudctlError, ExitCode} from '../../errors.js'
import {fileKind} from '../../util/atomic-file.js'
import {scrub} from '../../util/redact.js'

/** statfs(2) f_type of the kernel's pseudo-filesystems: files there are not storage. */
const PSEUDO_FILESYSTEMS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x1cd1, 'devpts'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
  [0xde5e81e4, 'efivarfs'],
  [0x65735543, 'fusectl'],
])

const HINT = 'Pass a regular file on a disk with --audit-log (or CLOUDCTL_AUDIT_LOG); nothing was written to the databases.'

function refuse(path: string, why: string): CloudctlError {
  return new CloudctlError(`the audit log ${path} ${why}: its lines would be lost; nothing was written to the databases`, {
    exitCode: ExitCode.CONFIG,
    code: 'AuditLogNotRegular',
    hint: HINT,
  })
}

/** The pseudo-filesystem `path` (or its nearest existing ancestor) lives on, if any. */
function pseudoFilesystem(path: string): string | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      return PSEUDO_FILESYSTEMS.get(Number(statfsSync(p).type))
    } catch {
      if (dirname(p) === p) return undefined
    }
  }
}

/**
 * Exit 2 unless `path` is (or will be created as) a regular file on a real filesystem. Never opens
 * it: opening a FIFO for writing blocks.
 */
export function checkAuditLogPath(path: string): void {
  let st: import('node:fs').Stats | undefined
  try {
    st = lstatSync(path)
    if (st.isSymbolicLink()) st = statSync(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (st?.isSymbolicLink() && code === 'ENOENT') throw refuse(path, 'is a symbolic link to nothing')
    // Missing: created as a regular file (the directory's own problems are reported when writing).
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw refuse(path, `cannot be examined (${code ?? String(error)})`)
  }
  // A directory is left to the open, which says EISDIR as for any path that cannot be written.
  if (st && !st.isFile() && !st.isDirectory()) throw refuse(path, `is ${fileKind(st)}`)
  const fs = pseudoFilesystem(path)
  if (fs) throw refuse(path, `is on the ${fs} pseudo-filesystem`)
}

/** An open audit log. */
export class AuditLog {
  private constructor(
    readonly path: string,
    private fd: number | undefined,
  ) {}

  /** Opens (creating, mode 0600) a path checkAuditLogPath accepts. */
  static open(path: string): AuditLog {
    checkAuditLogPath(path)
    let fd: number
    try {
      mkdirSync(dirname(path), {recursive: true, mode: 0o700})
      // O_NONBLOCK: a FIFO put there since the check fails instead of blocking; a regular file ignores it.
      fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, 0o600)
    } catch (error) {
      throw new CloudctlError(`the audit log ${path} cannot be written (${appendFailure(error)}); nothing was written to the databases`, {
        exitCode: ExitCode.CONFIG,
        code: 'NotWritable',
        hint: HINT,
      })
    }
    const st = fstatSync(fd)
    if (!st.isFile()) {
      closeSync(fd)
      throw refuse(path, `is ${fileKind(st)}`)
    }
    return new AuditLog(path, fd)
  }

  /**
   * Appends one line and fsyncs it; throws when any of it did not reach the file (the file must be
   * longer by the line afterwards: a file that takes writes and keeps nothing does not pass).
   */
  append(entry: Record<string, unknown>): void {
    if (this.fd === undefined) throw new Error('the audit log is closed')
    const bytes = Buffer.from(`${scrub(JSON.stringify(entry))}\n`, 'utf8')
    const before = fstatSync(this.fd).size
    for (let off = 0; off < bytes.length;) off += writeSync(this.fd, bytes, off, bytes.length - off)
    fsyncSync(this.fd)
    if (fstatSync(this.fd).size < before + bytes.length) throw new Error('the line did not reach the file')
  }

  close(): void {
    if (this.fd === undefined) return
    try {
      closeSync(this.fd)
    } catch {
      // nothing left to flush: every line was fsync'd
    }
    this.fd = undefined
  }
}

/** "EIO", "ENOSPC", or the message: why an append failed, in one word where there is one. */
export function appendFailure(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error instanceof Error ? error.message : String(error))
}
