import type {Snapshot} from '../domain/snapshot.js'
import {readSnapshotFile} from './file.js'
import type {ProgressSink, SourceOptions} from './source.js'

/**
 * The one way read commands get a snapshot: a file when --snapshot is given, else the live
 * databases (read-only, one consistent snapshot per database).
 */
export async function loadSnapshot(opts: SourceOptions, progress?: ProgressSink): Promise<Snapshot> {
  let snapshot: Snapshot
  if (opts.snapshot) snapshot = await readSnapshotFile(opts.snapshot)
  else {
    // Lazy: snapshot-only runs never load the database driver.
    const {captureLive} = await import('../db/capture.js')
    snapshot = await captureLive(opts, progress)
  }
  return snapshot
}
