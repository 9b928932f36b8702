import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditUsageResult = AuditResult

export default class AuditUsage extends AuditCommand<typeof AuditUsage> {
  static override description = `Compare each compute node's recorded usage with its live instances and placement, and explain negative free values (is it really a leak?).

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit compute node usage counters.'

  async run(): Promise<AuditUsageResult> {
    return this.runAudit(['usage'])
  }
}
