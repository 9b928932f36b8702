import {Flags} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {inputFilesOf, sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {ConfigError} from '../../lib/errors.js'
import {resolveSnapshotTarget, writeSnapshotFile} from '../../lib/snapshot/file.js'
import {refuseCollidingPaths} from '../../lib/util/atomic-file.js'
import {type ReadFrom, readFrom} from '../../lib/snapshot/read-from.js'

export interface SnapshotCaptureResult {
  file: string
  captured_at: string
  source: string
  /** Which server (and Galera node) each database was read from. */
  read_from: ReadFrom[]
  cells: Array<{name: string | null; uuid: string; status: string}>
  rows: Record<string, number>
}

export default class SnapshotCapture extends CloudctlCommand<typeof SnapshotCapture> {
  static override description = `Reads nova_api, placement and every cell database (cell0 included; each cell with its own connection, in parallel) read-only, with one consistent snapshot per database, and writes them to FILE. The format follows the name: .json, .yaml, or .cloudctl (columnar: the fastest to load), plus .gz to compress. Passwords are redacted in the file. A cell whose database cannot be reached is recorded as unavailable, never as empty.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf -o snap.json.gz',
    '<%= config.bin %> <%= command.id %> --api-db mysql+pymysql://nova:PASS@db/nova_api --placement-db mysql+pymysql://placement:PASS@db/placement -o snap.json',
  ]

  // No -f/-c here: -o names the snapshot file (as `nova-manage`/`mysqldump` habits expect), and a
  // format flag beside it would read as kubectl's `-o json`. --json still prints the capture summary.
  // (The cast keeps the shared flag typing; at run time the format flags are simply absent.)
  static override baseFlags = {debug: CloudctlCommand.baseFlags.debug, quiet: CloudctlCommand.baseFlags.quiet} as typeof CloudctlCommand.baseFlags

  static override flags = {
    output: Flags.string({
      char: 'o',
      summary: 'File to write (.json, .yaml, .cloudctl, optionally .gz), or - for stdout (canonical JSON).',
      description:
        'A symlink is followed to the regular file it names; a directory, device, FIFO or socket is refused (exit 2): the file is written beside its target and renamed over it.',
      required: true,
    }),
    'request-specs': Flags.boolean({summary: 'Also capture nova_api.request_specs (large).'}),
    'api-db': sourceFlags['api-db'],
    'placement-db': sourceFlags['placement-db'],
    'cell-db': sourceFlags['cell-db'],
    'nova-conf': sourceFlags['nova-conf'],
    config: sourceFlags.config,
    profile: sourceFlags.profile,
  }

  static override summary = 'Capture the live databases into a snapshot file.'

  async run(): Promise<SnapshotCaptureResult> {
    const opts = {...sourceOptionsFrom(this.flags), snapshot: undefined, requestSpecs: this.flags['request-specs']}
    const output = this.flags.output
    if (/^live$/i.test(output)) throw new ConfigError('-o needs a file name', 'e.g. -o snap.json.gz')
    const toStdout = output === '-'
    if (toStdout && this.jsonEnabled())
      throw new ConfigError('-o - writes the snapshot to stdout, where --json would print its result too', 'Drop --json, or write to a file.')
    if (toStdout && process.stdout.isTTY)
      throw new ConfigError(
        '-o - would write the whole snapshot to this terminal',
        'Redirect stdout (-o - > snap.json, -o - | gzip > snap.json.gz) or name a file.',
      )
    // Before the capture, which can take minutes: a target that cannot be written fails now.
    await resolveSnapshotTarget(output)
    await refuseCollidingPaths([{flag: '-o', path: output}], inputFilesOf(this.flags))
    const snapshot = await this.readSnapshot(opts)
    this.phase(`writing ${toStdout ? 'the snapshot to stdout' : output}`)
    await writeSnapshotFile(snapshot, output)
    const rows: Record<string, number> = {}
    for (const section of ['nova_api', 'nova', 'placement'] as const) {
      for (const [table, list] of Object.entries(snapshot[section])) if (Array.isArray(list)) rows[`${section}.${table}`] = list.length
    }
    const unavailable = snapshot.cells.filter((c) => c.status !== 'available')
    this.note(
      `wrote ${toStdout ? 'the snapshot to stdout' : output}: ${rows['nova.compute_nodes']} compute nodes, ${rows['nova.instances']} instances, ${rows['placement.allocations']} allocations`,
    )
    for (const c of unavailable) this.note(`warning: cell ${c.name ?? c.uuid} is UNAVAILABLE (${c.error ?? 'not read'}): recorded as unknown, not empty`)
    if (!toStdout) this.out(`Snapshot written to ${output}`)
    return {
      file: output,
      captured_at: snapshot.captured_at,
      source: snapshot.source.description,
      read_from: readFrom(snapshot),
      cells: snapshot.cells.map((c) => ({name: c.name, uuid: c.uuid, status: c.status})),
      rows,
    }
  }
}
