import {Flags} from '../../lib/cli/oclif.js'

import {capacityFor} from '../../lib/capacity/index.js'
import {AuditCommand, type AuditResult, auditAllFlags} from '../../lib/cli/audit-command.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {formatFlags} from '../../lib/cli/format-flags.js'
import {inputFilesOf} from '../../lib/cli/source-flags.js'
import {releaseChoice, schedulerConfigFrom} from '../../lib/cli/scenario-flags.js'
import {AUDIT_CHECKS} from '../../lib/checks/index.js'
import {ConfigError} from '../../lib/errors.js'
import {renderAuditHtml} from '../../lib/output/audit-html.js'
import type {ExtraFormat} from '../../lib/output/formats.js'
import {renderOpenMetrics} from '../../lib/output/openmetrics.js'
import {refuseCollidingPaths, writeFileAtomic} from '../../lib/util/atomic-file.js'

export type AuditAllResult = AuditResult & {html?: string; metrics_file?: string}

// The metrics text travels with the result under a symbol: the format framework spreads the result
// (copying it), and JSON output never shows a symbol-keyed property.
const METRICS = Symbol('openmetrics')

const openmetrics: ExtraFormat<AuditAllResult & {[METRICS]?: string}> = {
  name: 'openmetrics',
  summary: 'Prometheus text exposition (node_exporter textfile collector): findings, unknown cells, placement capacity and usage, capacity per flavor',
  render: (result) => (result[METRICS] ?? '').replace(/\n$/, ''),
}
const formats = [openmetrics] as ReadonlyArray<ExtraFormat<never>>

export default class AuditAll extends AuditCommand<typeof AuditAll> {
  static override baseFlags = {...CloudctlCommand.baseFlags, ...formatFlags(formats)}

  static override description = `Run every audit (leaks, providers, cells, pinning, usage, aggregates) over one snapshot, then print a table of counts by check and severity.

Read-only. Works the same on the live databases and on a snapshot file.

-f openmetrics prints the audit as Prometheus metrics (findings by check, code, severity and cell; unreadable cells; placement capacity and usage per provider; how many more instances of each flavor fit, as simulate capacity counts them; the run's duration and the snapshot time); with -o FILE they are written atomically, for node_exporter's textfile collector. --html FILE writes a standalone report page. The exit code stays that of the audit (3 with findings).`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo',
    '<%= config.bin %> <%= command.id %> --check leaks --check providers --cell cell1',
    '<%= config.bin %> <%= command.id %> --snapshot snap.json.gz --json',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf -f openmetrics -o /var/lib/node_exporter/textfile/cloudctl.prom',
    '<%= config.bin %> <%= command.id %> --snapshot snap.json.gz --html audit.html',
  ]

  static override extraFormats = formats

  static override flags = {
    ...auditAllFlags,
    output: Flags.string({
      char: 'o',
      summary: 'With -f openmetrics: write the metrics to this file atomically (temporary file, then rename) instead of stdout.',
      helpGroup: 'OUTPUT',
    }),
    html: Flags.string({
      summary: 'Also write a standalone HTML report (summary, findings with evidence, capacity strip per host) to this file.',
      helpGroup: 'OUTPUT',
    }),
  }

  static override summary = 'Run every audit and summarise.'

  private metricsWritten = false

  async run(): Promise<AuditAllResult> {
    const started = performance.now()
    const f = this.flags
    const metrics = f.format === 'openmetrics'
    if (f.output !== undefined && !metrics)
      throw new ConfigError(
        '-o/--output writes the metrics: it needs -f openmetrics',
        'Add -f openmetrics, or use --html FILE for the report page.',
        'UsageError',
      )
    await refuseCollidingPaths(
      [
        {flag: '-o', path: f.output},
        {flag: '--html', path: f.html},
      ],
      inputFilesOf(f),
    )
    let text: string | undefined
    let html: string | undefined
    const result: AuditAllResult & {[METRICS]?: string} = await this.runAudit(f.check?.length ? f.check : AUDIT_CHECKS, {
      summaryTable: true,
      everyColumn: metrics || f.html !== undefined,
      after: async (model, report) => {
        if (f.html !== undefined)
          html = await writeFileAtomic(f.html, renderAuditHtml(report, model, {fullEvidence: f['full-evidence']}), 'HTML report', '--html')
        if (!metrics) return
        // The figure `simulate capacity` shows for every default flavor (same scheduler options and seed).
        const capacity = capacityFor(model, {config: schedulerConfigFrom(f['nova-conf'], releaseChoice(model.snapshot, undefined).release), seed: 42})
        text = renderOpenMetrics({report, model, capacity, durationSeconds: (performance.now() - started) / 1000})
      },
    })
    if (html !== undefined) {
      result.html = html
      // Said where a machine reads stdout; a scheduled metrics run stays silent (cron mails any output).
      if (this.jsonEnabled() && !metrics) this.note(`HTML report written to ${html}`)
    }
    if (text !== undefined) {
      if (f.output === undefined) result[METRICS] = text
      else {
        result.metrics_file = await writeFileAtomic(f.output, text, 'metrics', '-o')
        this.metricsWritten = true
      }
    }
    return result
  }

  /** With -o the metrics went to their file: stdout stays empty (a cron job mails nothing). */
  public override logJson(json: unknown): void {
    if (this.metricsWritten) return
    super.logJson(json)
  }
}
