import type {Snapshot} from '../domain/snapshot.js'
import {mkdtemp, rm} from 'node:fs/promises'
import {createWriteStream} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pipeline} from 'node:stream/promises'

import {CloudctlError, ConfigError} from '../errors.js'
import {readSnapshotFile} from './file.js'
import type {ProgressSink, SourceOptions} from './source.js'

/**
 * The one way read commands get a snapshot: a file when --snapshot is given, else the live
 * databases (read-only, one consistent snapshot per database).
 */
export async function loadSnapshot(opts: SourceOptions, progress?: ProgressSink): Promise<Snapshot> {
  let snapshot: Snapshot
  if (opts.snapshot === '-') snapshot = await readSnapshotStdin()
  else if (opts.snapshot) snapshot = await readSnapshotFile(opts.snapshot)
  else {
    // Lazy: snapshot-only runs never load the database driver.
    const {captureLive} = await import('../db/capture.js')
    snapshot = await captureLive(opts, progress)
  }
  return snapshot
}

/**
 * `-s -`: a snapshot piped in (`ssh db1 cloudctl snapshot capture -o - | cloudctl audit all -s -`).
 * The bytes are spooled to a private file (a directory of mode 0700 in $TMPDIR, removed afterwards,
 * on an error too) so that every format the file reader knows (JSON, YAML, columnar, gzip) is sniffed
 * and streamed as from a file; errors name stdin, not the spool file.
 */
async function readSnapshotStdin(): Promise<Snapshot> {
  if (process.stdin.isTTY)
    throw new ConfigError(
      '-s - reads a snapshot from stdin, which is a terminal',
      'Pipe a snapshot in (`cloudctl snapshot capture -o - | cloudctl audit all -s -`), or give a file.',
      'UsageError',
    )
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-stdin-'))
  // .yaml: JSON (which starts with '{') is still read as JSON; gzip and columnar are told by their magic.
  const file = join(dir, 'snapshot.yaml')
  try {
    await pipeline(process.stdin, createWriteStream(file, {mode: 0o600, flags: 'wx'}))
    return await readSnapshotFile(file)
  } catch (error) {
    if (error instanceof CloudctlError) {
      const message = error.message.split(file).join('stdin')
      throw new CloudctlError(message.includes('is empty') || message !== error.message ? message : `stdin: ${message}`, {
        exitCode: error.exitCode,
        code: error.code,
        hint: error.hint?.split(file).join('stdin'),
      })
    }
    throw error
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}
