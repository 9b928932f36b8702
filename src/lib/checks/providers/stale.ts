import type {Finding, FindingSubject, StaleProviderEvidence} from '../../domain/finding.js'
import type {ComputeNode, ResourceProvider} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import {providerRow} from '../rows.js'
import {type CheckUnit, runbook} from '../unit.js'
import {duplicateNames} from './duplicate-name.js'
import {REPAIR, absenceDecidable, cnRow, nodeRoots, providerSubject, treeAllocations} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.stale': [FindingSubject, StaleProviderEvidence]
  }
}

type Cause = 'no-compute-node' | 'compute-node-deleted' | 'service-deleted'

const WHY: Record<Cause, string> = {
  'no-compute-node': 'no compute node in any cell has its uuid',
  'compute-node-deleted': 'its compute node is deleted',
  'service-deleted': 'the nova-compute service of its compute node is deleted',
}

/**
 * Node providers no earlier code explained, with no compute node, a deleted one, or a deleted
 * nova-compute service. `undecided` counts those whose cell could not be read.
 */
export function staleProviders(ctx: AuditContext): {
  stale: Array<{rp: ResourceProvider; cn?: ComputeNode; cause: Cause; detail: Record<string, unknown>}>
  undecided: number
} {
  return ctx.once(staleProviders, () => {
    const {model} = ctx
    const {claimed} = duplicateNames(ctx)
    const stale: Array<{rp: ResourceProvider; cn?: ComputeNode; cause: Cause; detail: Record<string, unknown>}> = []
    let undecided = 0
    for (const rp of nodeRoots(ctx)) {
      if (claimed.has(rp.id)) continue
      const cn = ctx.computeNodeOf(rp)
      if (cn) {
        const svc = model.serviceOf(cn)
        if (!svc || svc.deleted !== 0) stale.push({rp, cn, cause: 'service-deleted', detail: {compute_node: cnRow(cn), service: svc ?? null}})
        continue
      }
      const rows = model.computeNodesByUuid.get(rp.uuid) ?? []
      if (rows.length > 0) stale.push({rp, cause: 'compute-node-deleted', detail: {compute_nodes: rows.map(cnRow)}})
      else if (absenceDecidable(ctx)) stale.push({rp, cause: 'no-compute-node', detail: {}})
      else undecided++
    }
    return {stale, undecided}
  })
}

export const providerStale: CheckUnit = {
  code: 'provider.stale',
  check: 'providers',
  severity: 'warning',
  summary: 'provider with no compute node, a deleted one, or a deleted nova-compute service',
  explain: {
    cause:
      '`openstack compute service delete` (or a deleted compute node) on a host whose provider could not be removed because allocations were still on it; or a host decommissioned without deleting its service. The provider keeps inventory and allocations nova no longer tracks.',
    repair:
      '`cloudctl repair providers` removes its leaked allocations and then the provider tree (traits, aggregates, inventories, provider), refused while a live instance is still placed on it.',
    runbook: runbook('stale-provider-after-service-delete'),
  },
  run(ctx) {
    return staleProviders(ctx).stale.map(({rp, cn, cause, detail}): Finding => {
      const allocations = treeAllocations(ctx, rp)
      const holders = allocations.length > 0 ? `; ${new Set(allocations.map((a) => a.consumer_uuid)).size} consumer(s) still hold allocations on it` : ''
      return {
        check: 'providers',
        code: 'provider.stale',
        severity: 'warning',
        subject: cn ? {...ctx.nodeSubject(cn), provider_uuid: rp.uuid} : providerSubject(ctx, rp),
        message: `Resource provider ${rp.name ?? rp.uuid} is stale: ${WHY[cause]}${holders}.`,
        evidence: {cause, provider: providerRow(rp), children: ctx.model.tree(rp).slice(1).map(providerRow), blocking_allocations: allocations, ...detail},
        repair: REPAIR,
      }
    })
  },
}
