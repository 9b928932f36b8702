import type {DuplicateNameEvidence, Finding, FindingSubject} from '../../domain/finding.js'
import type {ResourceProvider} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import {type AuditContext, shortHostName} from '../context.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, absenceDecidable, cnRow, nodeRoots, treeAllocations} from './shared.js'
import {nodesWithoutProvider} from './uuid-mismatch.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.duplicate-name': [FindingSubject, DuplicateNameEvidence]
  }
}

interface DuplicateGroup {
  hostname: string
  rps: ResourceProvider[]
  /** The members that belong to no live compute node. */
  extra: ResourceProvider[]
}

/**
 * Several root providers for one hostname (a renamed host, FQDN versus short name), with a member
 * whose absence of a node is decided. Providers a uuid-mismatch already explains are not counted.
 * `claimed`: the providers explained so far (uuid-mismatch's and these extras): provider.stale skips them.
 */
export function duplicateNames(ctx: AuditContext): {groups: DuplicateGroup[]; claimed: ReadonlySet<number>} {
  return ctx.once(duplicateNames, () => {
    const claimed = new Set<number>()
    for (const {named} of nodesWithoutProvider(ctx)) for (const rp of named) claimed.add(rp.id)
    const byHostname = new Map<string, ResourceProvider[]>()
    for (const rp of nodeRoots(ctx)) if (rp.name !== null && !claimed.has(rp.id)) push(byHostname, shortHostName(rp.name).toLowerCase(), rp)
    const groups: DuplicateGroup[] = []
    for (const [hostname, rps] of byHostname) {
      if (rps.length < 2) continue
      const extra = rps.filter((rp) => !ctx.computeNodeOf(rp))
      if (extra.length === 0 || !absenceDecidable(ctx)) continue
      for (const rp of extra) claimed.add(rp.id)
      groups.push({hostname, rps, extra})
    }
    return {groups, claimed}
  })
}

export const duplicateName: CheckUnit = {
  code: 'provider.duplicate-name',
  check: 'providers',
  severity: 'warning',
  summary: 'several providers for one hostname',
  explain: {
    cause:
      'A hypervisor changed its name (short name to FQDN): nova-compute made a node and provider under the new name and deleted the old node as an orphan, but the old provider stayed, with the servers still placed on it.',
    repair:
      "`cloudctl repair providers` moves the old node's servers to the host's live node, moves their allocations to its provider and removes the old tree (refused for several live nodes or a move in progress).",
  },
  run(ctx) {
    return duplicateNames(ctx).groups.map(({hostname, rps, extra}): Finding => {
      const keep = rps.find((rp) => ctx.computeNodeOf(rp))
      const keepCn = keep && ctx.computeNodeOf(keep)
      return {
        check: 'providers',
        code: 'provider.duplicate-name',
        severity: 'warning',
        subject: keepCn ? {...ctx.nodeSubject(keepCn), provider_uuid: extra[0].uuid} : {node: extra[0].name ?? hostname, provider_uuid: extra[0].uuid},
        message: `${rps.length} resource providers stand for host ${hostname} (${rps.map((rp) => rp.name).join(', ')}); ${extra.length} of them belong to no live compute node.`,
        evidence: {
          hostname,
          providers: rps.map((rp) => {
            const cn = ctx.computeNodeOf(rp)
            return {...providerRow(rp), compute_node: cn ? cnRow(cn) : null, stale: !cn, allocations: cn ? undefined : treeAllocations(ctx, rp)}
          }),
        },
        repair: REPAIR,
      }
    })
  },
}
