import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditCellsResult = AuditResult

export default class AuditCells extends AuditCommand<typeof AuditCells> {
  static override description = `Find unmapped, wrongly mapped and duplicated instances, unmapped and stale host mappings, and leftover build requests.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit cell, instance and host mappings.'

  async run(): Promise<AuditCellsResult> {
    return this.runAudit(['cells'])
  }
}
