import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditProvidersResult = AuditResult

export default class AuditProviders extends AuditCommand<typeof AuditProviders> {
  static override description = `Find stale, missing, duplicate, mismatched (uuid) and over-capacity resource providers, and inventories that drifted from their compute node.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit resource providers against compute nodes.'

  async run(): Promise<AuditProvidersResult> {
    return this.runAudit(['providers'])
  }
}
