import type {Finding, FindingSubject, UuidMismatchEvidence} from '../../domain/finding.js'
import type {ComputeNode, ResourceProvider} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import {providerRow} from '../rows.js'
import {type CheckUnit, runbook} from '../unit.js'
import {REPAIR, cnRow, namedRoots, treeAllocations} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.uuid-mismatch': [FindingSubject, UuidMismatchEvidence]
  }
}

/**
 * Live compute nodes without a provider of their uuid, with the root providers carrying their name
 * (none: provider.missing). The named providers are this fault's; the later codes leave them alone.
 */
export function nodesWithoutProvider(ctx: AuditContext): Array<{cn: ComputeNode; named: ResourceProvider[]}> {
  return ctx.once(nodesWithoutProvider, () => {
    const out: Array<{cn: ComputeNode; named: ResourceProvider[]}> = []
    for (const cn of ctx.model.liveComputeNodes) {
      if (cn.uuid && ctx.model.providersByUuid.has(cn.uuid)) continue
      out.push({cn, named: namedRoots(ctx, cn.hypervisor_hostname)})
    }
    return out
  })
}

export const uuidMismatch: CheckUnit = {
  code: 'provider.uuid-mismatch',
  check: 'providers',
  severity: 'error',
  summary: "a provider carries a live compute node's name under another uuid",
  explain: {
    cause:
      "A hypervisor renamed itself or its compute node was re-created: nova-compute made a new compute node uuid but placement already has a provider with that name under the old uuid, so every periodic fails with ResourceProviderCreationFailed and the host's inventory is never updated.",
    repair:
      '`cloudctl repair providers --strategy rekey` gives the provider the compute node uuid (children, inventories, allocations follow by id); `--strategy move` builds a new provider and moves the live allocations to it. Then restart nova-compute on the host.',
    runbook: runbook('uuid-mismatch-after-hostname-change'),
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const {cn, named} of nodesWithoutProvider(ctx)) {
      if (named.length === 0) continue
      findings.push({
        check: 'providers',
        code: 'provider.uuid-mismatch',
        severity: 'error',
        subject: {...ctx.nodeSubject(cn), provider_uuid: named[0].uuid},
        message: `Compute node ${cn.hypervisor_hostname} has uuid ${cn.uuid} but provider ${named[0].uuid} carries its name: nova-compute fails with ResourceProviderCreationFailed.`,
        evidence: {
          compute_node: cnRow(cn),
          providers: named.map((rp) => ({...providerRow(rp), allocations: treeAllocations(ctx, rp)})),
        },
        repair: REPAIR,
      })
    }
    return findings
  },
}
