import type {Finding, FindingSubject, NodeDriftEvidence} from '../../domain/finding.js'
import type {Instance} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import type {AuditContext} from '../context.js'
import {DOWN_HOST_NOTE} from '../rows.js'
import {type CheckUnit, runbook} from '../unit.js'
import {nodeUsages, usageEvidence, usageSubject} from './node-usage.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'usage.node-drift': [FindingSubject, NodeDriftEvidence]
  }
}

const COUNTERS = ['vcpus_used', 'memory_mb_used', 'local_gb_used', 'running_vms']

export const nodeDrift: CheckUnit = {
  code: 'usage.node-drift',
  check: 'usage',
  severity: 'warning',
  summary: 'compute node *_used / free_* / running_vms differ from the live instances',
  explain: {
    cause:
      "The compute node's *_used / free_* / running_vms columns differ from what its live instances add up to: the resource tracker did not run since instances were deleted or moved (nova-compute down or stuck).",
    repair:
      '`cloudctl repair usage` recomputes the columns as the tracker would; refused while nova-compute is up unless `--force`. Restarting nova-compute does the same.',
    runbook: runbook('negative-free-resources'),
  },
  run(ctx) {
    const findings: Finding[] = []
    let deletedOnNode: Map<string, Instance[]> | undefined
    for (const u of nodeUsages(ctx)) {
      const {cn, drift} = u
      if (Object.keys(drift).length === 0) continue
      // The counters are the resource tracker's own: on a dead host they are only stale. Asked for a
      // drifting node only, not for each of the 10k nodes of a clean cloud.
      const rowIsStale = ctx.rowIsStale(cn)
      // Instances deleted on a node name the suspects when a row counts too much (one pass, on the first drift).
      deletedOnNode ??= deletedInstancesByNode(ctx)
      const over = COUNTERS.some((k) => (drift[k]?.diff ?? 0) > 0)
      const suspects = (deletedOnNode.get(u.key) ?? [])
        .filter((i) => ctx.liveRows(i.uuid) === undefined)
        .map((i) => ({uuid: i.uuid, id: i.id, deleted_at: i.deleted_at, vcpus: i.vcpus, memory_mb: i.memory_mb}))
      const differences = Object.entries(drift)
        .map(([k, d]) => `${k} ${d.recorded} vs ${d.expected}`)
        .join(', ')
      findings.push({
        check: 'usage',
        code: 'usage.node-drift',
        severity: rowIsStale ? 'info' : 'warning',
        subject: usageSubject(ctx, u),
        message: `${cn.hypervisor_hostname ?? cn.host}: the compute node row disagrees with its live instances (${differences})${over ? ': it still counts resources of instances that are gone' : ''}; ${rowIsStale ? `${DOWN_HOST_NOTE}` : "nova-compute's update_available_resource has not run since"}.`,
        evidence: {...usageEvidence(ctx, u), drift, deleted_instances_on_node: suspects.slice(0, 50), ...(rowIsStale ? {service_down: true} : {})},
        repair: 'cloudctl repair usage',
      })
    }
    return findings
  },
}

function deletedInstancesByNode(ctx: AuditContext): Map<string, Instance[]> {
  const out = new Map<string, Instance[]>()
  for (const i of ctx.model.snapshot.nova.instances) if (i.deleted !== 0 && i.host !== null) push(out, ctx.model.nodeKeyOfInstance(i), i)
  return out
}
