import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditAggregatesResult = AuditResult

export default class AuditAggregates extends AuditCommand<typeof AuditAggregates> {
  static override description = `Compare nova host aggregates (and availability zones) with placement aggregates, both directions.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit host aggregates against placement.'

  async run(): Promise<AuditAggregatesResult> {
    return this.runAudit(['aggregates'])
  }
}
