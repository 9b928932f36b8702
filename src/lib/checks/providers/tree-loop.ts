import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {ResourceProvider} from '../../domain/snapshot.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {providerSubject} from './shared.js'

type TreeRow = ReturnType<typeof providerRow> & {parent_provider_id: number | null; root_provider_id: number | null}

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.tree-loop': [FindingSubject & {provider_uuid: string}, Open & {loop: TreeRow[]; affected: TreeRow[]}]
  }
}

const treeRow = (rp: ResourceProvider): TreeRow => ({...providerRow(rp), parent_provider_id: rp.parent_provider_id, root_provider_id: rp.root_provider_id})
const label = (rp: ResourceProvider) => `${rp.name ?? rp.uuid} (id ${rp.id})`

export const treeLoop: CheckUnit = {
  code: 'provider.tree-loop',
  check: 'providers',
  severity: 'error',
  summary: 'providers whose parent_provider_id chain is a loop: the tree has no root',
  explain: {
    cause:
      'placement refuses to write a loop ("creating loop in the provider tree is not allowed"): the rows were edited by hand or restored inconsistently. A self-parent, two providers that are each other\'s parent, or a longer cycle; providers under it, or whose root_provider_id names one of its members, have no root either.',
    repair:
      'Fix parent_provider_id and root_provider_id of the listed providers by hand in the placement database (a root has parent_provider_id NULL and root_provider_id = its own id; nova-compute rewrites its children on its next report). Until then every cloudctl repair refuses to plan on these providers.',
  },
  run(ctx) {
    const {model} = ctx
    const byLoop = new Map<string, {loop: readonly number[]; affected: ResourceProvider[]}>()
    for (const [id, loop] of model.brokenTrees) {
      const key = loop.join(',')
      let entry = byLoop.get(key)
      if (!entry) byLoop.set(key, (entry = {loop, affected: []}))
      const rp = model.providersById.get(id)
      if (rp && !loop.includes(id)) entry.affected.push(rp)
    }
    const findings: Finding[] = []
    for (const {loop, affected} of byLoop.values()) {
      const members = loop.map((id) => model.providersById.get(id)).filter((rp): rp is ResourceProvider => rp !== undefined)
      const first = members[0]
      const chain = [...members, first].map(label).join(' -> ')
      const under = affected.length > 0 ? `; ${affected.length} other provider(s) hang under it or name it as their root` : ''
      findings.push({
        check: 'providers',
        code: 'provider.tree-loop',
        severity: 'error',
        subject: {...providerSubject(ctx, first), provider_uuid: first.uuid},
        message: `Resource providers form a parent_provider_id loop: ${chain}${under}. The tree has no root; placement never writes one.`,
        evidence: {loop: members.map(treeRow), affected: affected.sort((x, y) => x.id - y.id).map(treeRow)},
        repair:
          'Fix parent_provider_id / root_provider_id of these providers by hand (see `cloudctl explain provider.tree-loop`); repairs plan nothing on them meanwhile.',
      })
    }
    return findings
  },
}
