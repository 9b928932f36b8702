import {Args} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {CloudctlError, ExitCode} from '../../lib/errors.js'
import {type VerifyResult, verifyInstance} from '../../lib/repairs/verify-instance.js'
import type {ListingSpec} from '../../lib/output/formats.js'

/** The form nova writes instance uuids in (str(uuid.uuid4())), in either case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export default class CellsVerifyInstance extends CloudctlCommand<typeof CellsVerifyInstance> {
  static override listing: ListingSpec = {
    rows: 'copies',
    columns: [{key: 'cell'}, {key: 'cell_uuid'}, {key: 'id'}, {key: 'deleted'}, {key: 'vm_state'}, {key: 'host'}],
  }

  static override summary = 'Is this instance mapped to the cell where it lives?'

  static override description = `The counterpart of \`nova-manage cell_v2 verify_instance\`. States: mapped (nova-manage 0), unmapped (1), no-cell (2), deleted (3), archived (4), and what nova-manage cannot see: mapped-to-wrong-cell, live-in-several-cells, cell-unavailable. cloudctl exits 0 for mapped and 3 for every other state (the nova-manage code is in the JSON output); a UUID argument that is not a uuid is exit 2 (nova-manage looks it up anyway and answers 1).`

  static override args = {uuid: Args.string({description: 'Instance uuid.', required: true, ignoreStdin: true})}

  static override examples = [
    '<%= config.bin %> <%= command.id %> 9c089546-670c-4fce-b963-d08860d435c7 --snapshot demo',
    '<%= config.bin %> <%= command.id %> UUID --nova-conf /etc/nova/nova.conf --json',
  ]

  static override flags = {...sourceFlags}

  async run(): Promise<VerifyResult> {
    // nova-manage looks any string up and answers "not mapped ... or does not exist" (its exit 1); a
    // string that is not a uuid can name no instance nova wrote, so it is bad input, before any read.
    const uuid = this.args.uuid.trim().toLowerCase()
    if (!UUID.test(uuid))
      throw new CloudctlError(`"${this.args.uuid}" is not an instance uuid`, {
        exitCode: ExitCode.CONFIG,
        code: 'UsageError',
        hint: 'Give the instance uuid as nova shows it (8-4-4-4-12 hex digits), e.g. from `openstack server show NAME -c id`.',
      })
    const snapshot = await this.readSnapshot(sourceOptionsFrom(this.flags))
    const r = verifyInstance(buildModel(snapshot), uuid)
    this.out(r.message)
    for (const c of r.copies) this.out(`  ${c.cell}: instances.id=${c.id} deleted=${c.deleted} vm_state=${c.vm_state ?? ''} host=${c.host ?? ''}`)
    if (r.repair) this.out(`Repair: ${r.repair}`)
    this.setExit(r.state === 'mapped' ? ExitCode.OK : ExitCode.FINDINGS)
    return r
  }
}
