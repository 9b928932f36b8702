import {type AuditResult, auditExamples, auditFlags, runAuditCommand} from '../../lib/cli/audit-command.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'

export type AuditProvidersResult = AuditResult

export default class AuditProviders extends CloudctlCommand<typeof AuditProviders> {
  static override description = `Find stale, missing, duplicate, mismatched (uuid) and over-capacity resource providers, and inventories that drifted from their compute node.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit resource providers against compute nodes.'

  async run(): Promise<AuditProvidersResult> {
    return runAuditCommand({flags: this.flags, json: this.jsonEnabled(), out: (s) => this.out(s)}, ['providers'])
  }
}
