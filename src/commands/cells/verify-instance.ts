import {Args} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {ExitCode} from '../../lib/errors.js'
import {type VerifyResult, verifyInstance} from '../../lib/repairs/verify-instance.js'

export default class CellsVerifyInstance extends CloudctlCommand<typeof CellsVerifyInstance> {
  static override summary = 'Is this instance mapped to the cell where it lives?'

  static override description = `The counterpart of \`nova-manage cell_v2 verify_instance\`. States: mapped (nova-manage 0), unmapped (1), no-cell (2), deleted (3), archived (4), and what nova-manage cannot see: mapped-to-wrong-cell, live-in-several-cells, cell-unavailable. cloudctl exits 0 for mapped and 3 for every other state (the nova-manage code is in the JSON output).`

  static override args = {uuid: Args.string({description: 'Instance uuid.', required: true})}

  static override examples = [
    '<%= config.bin %> <%= command.id %> 9c089546-670c-4fce-b963-d08860d435c7 --snapshot examples/demo-cloud.yaml',
    '<%= config.bin %> <%= command.id %> UUID --nova-conf /etc/nova/nova.conf --json',
  ]

  static override flags = {...sourceFlags}

  async run(): Promise<VerifyResult> {
    const snapshot = await this.readSnapshot(sourceOptionsFrom(this.flags))
    const r = verifyInstance(buildModel(snapshot), this.args.uuid)
    this.out(r.message)
    for (const c of r.copies) this.out(`  ${c.cell}: instances.id=${c.id} deleted=${c.deleted} vm_state=${c.vm_state ?? ''} host=${c.host ?? ''}`)
    if (r.repair) this.out(`Repair: ${r.repair}`)
    this.setExit(r.state === 'mapped' ? ExitCode.OK : ExitCode.FINDINGS)
    return r
  }
}
