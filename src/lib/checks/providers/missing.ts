import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {cnRow} from './shared.js'
import {nodesWithoutProvider} from './uuid-mismatch.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.missing': [FindingSubject, Open]
  }
}

export const providerMissing: CheckUnit = {
  code: 'provider.missing',
  check: 'providers',
  severity: 'warning',
  summary: 'live compute node with no provider',
  explain: {
    cause:
      'A live compute node has no provider: nova-compute has not reported since it started, or its provider was deleted by hand. The scheduler cannot place anything there.',
    repair: 'Restart nova-compute on the host (its resource tracker creates the provider); `cloudctl repair providers` lists the case.',
  },
  run(ctx) {
    const findings: Finding[] = []
    // A node whose name a provider carries is provider.uuid-mismatch instead.
    for (const {cn, named} of nodesWithoutProvider(ctx)) {
      if (named.length > 0) continue
      findings.push({
        check: 'providers',
        code: 'provider.missing',
        severity: 'warning',
        subject: ctx.nodeSubject(cn),
        message: `Compute node ${cn.hypervisor_hostname ?? cn.host} (uuid ${cn.uuid}) has no resource provider: the scheduler cannot place anything on it.`,
        evidence: {compute_node: cnRow(cn), service: ctx.model.serviceOf(cn) ?? null},
        repair: 'Restart nova-compute on the host (it creates its provider), or: cloudctl repair providers',
      })
    }
    return findings
  },
}
