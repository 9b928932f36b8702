import {type AuditResult, auditAllFlags, runAuditCommand} from '../../lib/cli/audit-command.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {AUDIT_CHECKS} from '../../lib/checks/index.js'

export type AuditAllResult = AuditResult

export default class AuditAll extends CloudctlCommand<typeof AuditAll> {
  static override description = `Run every audit (leaks, providers, cells, pinning, usage, aggregates) over one snapshot, then print a table of counts by check and severity.

Read-only. Works the same on the live databases and on a snapshot file.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot examples/demo-cloud.yaml',
    '<%= config.bin %> <%= command.id %> --check leaks --check providers --cell cell1',
    '<%= config.bin %> <%= command.id %> --snapshot snap.json.gz --json',
  ]

  static override flags = {...auditAllFlags}

  static override summary = 'Run every audit and summarise.'

  async run(): Promise<AuditAllResult> {
    return runAuditCommand({flags: this.flags, json: this.jsonEnabled(), out: (s) => this.out(s)}, [...AUDIT_CHECKS], {summaryTable: true})
  }
}
