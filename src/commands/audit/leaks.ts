import {type AuditResult, auditExamples, auditFlags, runAuditCommand} from '../../lib/cli/audit-command.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'

export type AuditLeaksResult = AuditResult

export default class AuditLeaks extends CloudctlCommand<typeof AuditLeaks> {
  static override description = `Find placement allocations no consumer should hold, and live instances whose allocations are missing or wrong.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = auditExamples

  static override flags = {...auditFlags}

  static override summary = 'Audit placement allocations against their consumers.'

  async run(): Promise<AuditLeaksResult> {
    return runAuditCommand({flags: this.flags, json: this.jsonEnabled(), out: (s) => this.out(s)}, ['leaks'])
  }
}
