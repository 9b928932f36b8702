import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditLeaksResult = AuditResult

export default class AuditLeaks extends AuditCommand<typeof AuditLeaks> {
  static override description = `Find placement allocations no consumer should hold, and live instances whose allocations are missing or wrong.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit placement allocations against their consumers.'

  async run(): Promise<AuditLeaksResult> {
    return this.runAudit(['leaks'])
  }
}
