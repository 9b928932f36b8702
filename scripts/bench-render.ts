/**
 * Rendering 10k findings (issue 15: "output for 10k findings renders in under 1 s"), in-process: the
 * human report (renderFindings, the tables of `audit all`) and the JSON document (the view every
 * machine format prints, then the text), evidence cut as by default and whole as --full-evidence
 * prints it. The findings are made here, shaped as the leak and stale-provider checks write them: a
 * leak per consumer with its few allocation rows, and one finding in a hundred carrying every
 * allocation of a provider (2,000 rows), as the stale provider of the 2,000-host cloud did.
 */
import {performance} from 'node:perf_hooks'

import {type AuditReport, emptySeverityCounts, type SeverityCounts} from '../src/lib/checks/types.js'
import type {CheckName, Finding} from '../src/lib/domain/finding.js'
import {renderFindings} from '../src/lib/output/findings-formatter.js'
import {renderJson} from '../src/lib/output/formats.js'
import {jsonDocument} from '../src/lib/output/json-view.js'
import {fixedDisplay} from '../src/lib/output/display.js'
import {record, secs} from './bench-support.js'

const FINDINGS = Number(process.env.BENCH_FINDINGS ?? 10_000)
/** One finding in this many carries a provider's every allocation. */
const WIDE_EVERY = 100
const WIDE_ROWS = 2000

const uuid = (n: number, tag: number) => `${tag.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`

function allocations(n: number, rp: number, consumer: string) {
  const classes = ['VCPU', 'MEMORY_MB', 'DISK_GB']
  return Array.from({length: n}, (_, i) => ({
    id: rp * 10_000 + i,
    resource_provider_id: rp,
    resource_class: classes[i % 3],
    used: i % 3 === 1 ? 2048 : 2,
    consumer_uuid: consumer,
  }))
}

function finding(i: number): Finding {
  const host = `compute-${String(i % 2000).padStart(4, '0')}.example.org`
  const rp = {id: i % 2000, uuid: uuid(i % 2000, 1), name: host, generation: 7}
  const consumer = uuid(i, 2)
  const subject = {cell: 'cell1', cell_uuid: uuid(1, 3), host, node: host, provider_uuid: rp.uuid}
  if (i % WIDE_EVERY === 0) {
    return {
      check: 'providers',
      code: 'provider.stale',
      severity: 'warning',
      subject,
      message: `Resource provider ${host} is stale: its compute node row is deleted; ${WIDE_ROWS / 3} consumer(s) still hold allocations on it.`,
      evidence: {cause: 'compute-node-deleted', provider: rp, children: [], blocking_allocations: allocations(WIDE_ROWS, rp.id, consumer)},
      repair: 'cloudctl repair providers',
    }
  }
  return {
    check: 'leaks',
    code: 'allocation.consumer-deleted',
    severity: 'warning',
    subject: {...subject, consumer_uuid: consumer, instance_uuid: consumer},
    message: `Consumer ${consumer} holds VCPU=2, MEMORY_MB=2048, DISK_GB=2 on ${host}, but its instance was deleted.`,
    evidence: {allocations: allocations(3, rp.id, consumer), provider: rp, consumer: {id: i, uuid: consumer, generation: 1}, instances: []},
    repair: 'cloudctl repair leaks',
  }
}

function reportOf(findings: Finding[]): AuditReport {
  const checks: CheckName[] = ['leaks', 'providers']
  const zero = emptySeverityCounts
  const byCheck: Partial<Record<CheckName, SeverityCounts>> = {leaks: zero(), providers: zero()}
  const byCode: Record<string, number> = {}
  for (const f of findings) {
    const c = byCheck[f.check] as SeverityCounts
    c[f.severity]++
    byCode[f.code] = (byCode[f.code] ?? 0) + 1
  }
  return {findings, checks, counts: {total: findings.length, bySeverity: {...zero(), warning: findings.length}, byCheck, byCode}, unavailableCells: []}
}

/** Wall time, and the CPU time (the figure that holds on a shared machine). */
function timed<T>(fn: () => T): {ms: number; cpu: string; value: T} {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const value = fn()
  const ms = performance.now() - t0
  const c = process.cpuUsage(c0)
  return {ms, cpu: `CPU ${secs((c.user + c.system) / 1000)}`, value}
}

export async function benchRender(): Promise<void> {
  const report = reportOf(Array.from({length: FINDINGS}, (_, i) => finding(i)))
  const n = `${FINDINGS} findings, ${FINDINGS / WIDE_EVERY} with ${WIDE_ROWS} evidence rows`
  // As an audit piped to a file or a pager prints it: tables fitted to 120 columns.
  const human = timed(() => renderFindings(report, fixedDisplay(120)))
  record('render findings: human report (audit tables)', human.ms, null, `${human.cpu}; ${n}; ${(human.value.length / 1e6).toFixed(1)} MB of text`, '< 1 s')
  const json = timed(() => renderJson(jsonDocument({...report, exit_code: 3}, 3)))
  record('render findings: JSON (evidence cut to 20 rows)', json.ms, null, `${json.cpu}; ${(json.value.length / 1e6).toFixed(1)} MB`, '< 1 s')
  const full = timed(() => renderJson(jsonDocument({...report, exit_code: 3}, 3, {fullEvidence: true})))
  record('render findings: JSON --full-evidence', full.ms, null, `${full.cpu}; ${(full.value.length / 1e6).toFixed(1)} MB`)
}
