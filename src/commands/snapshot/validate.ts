import {Args} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {buildModel} from '../../lib/domain/model.js'
import type {BlobError} from '../../lib/domain/model.js'
import type {Snapshot} from '../../lib/domain/snapshot.js'
import {ExitCode, SnapshotFormatError} from '../../lib/errors.js'
import {renderValidation} from '../../lib/output/snapshot-formatter.js'
import {readSnapshotFile} from '../../lib/snapshot/file.js'
import {type ValidationProblem, validateSnapshotShape} from '../../lib/snapshot/schema.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export interface SnapshotValidateResult {
  file: string
  valid: boolean
  problems: ValidationProblem[]
  unreadable_blobs: BlobError[]
}

export default class SnapshotValidate extends CloudctlCommand<typeof SnapshotValidate> {
  static override listing: ListingSpec = {
    rows: 'problems',
    columns: [{key: 'where'}, {key: 'problem'}],
  }

  static override args = {
    file: Args.string({description: 'Snapshot file (JSON, YAML or columnar .cloudctl, optionally .gz).', required: true, ignoreStdin: true}),
  }

  static override description =
    'Checks that the file parses, has every table and every row the columns and types cloudctl reads, and that the JSON blobs nova wrote (numa_topology, flavor, stats) are readable. Structural problems exit 2; unreadable blobs exit 3.'

  static override examples = ['<%= config.bin %> <%= command.id %> snap.json.gz']

  static override summary = 'Validate a snapshot file.'

  async run(): Promise<SnapshotValidateResult> {
    const file = this.args.file
    const doc = (await readSnapshotFile(file, {skipValidation: true})) as unknown
    const problems = validateSnapshotShape(doc, 50)
    if (problems.length > 0 && !this.jsonEnabled()) {
      this.out(() => renderValidation(file, problems, []))
      const first = problems[0]
      throw new SnapshotFormatError(`${file}: ${problems.length} problem(s), first: ${first.where} ${first.problem}`)
    }
    if (problems.length > 0) {
      this.setExit(ExitCode.CONFIG)
      return {file, valid: false, problems, unreadable_blobs: []}
    }
    const blobs = buildModel(doc as Snapshot).blobErrors()
    this.out(() => renderValidation(file, problems, blobs))
    if (blobs.length > 0) this.setExit(ExitCode.FINDINGS)
    return {file, valid: true, problems, unreadable_blobs: blobs}
  }
}
