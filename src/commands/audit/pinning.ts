import {AuditCommand, type AuditResult, auditExamples, auditFlags} from '../../lib/cli/audit-command.js'

export type AuditPinningResult = AuditResult

export default class AuditPinning extends AuditCommand<typeof AuditPinning> {
  static override description = `Compare pinned_cpus of every host NUMA cell with the pCPUs its live instances pin, and with placement PCPU usage.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit CPU pinning bookkeeping.'

  async run(): Promise<AuditPinningResult> {
    return this.runAudit(['pinning'])
  }
}
