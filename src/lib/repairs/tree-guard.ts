/**
 * A provider tree with a parent_provider_id loop (provider.tree-loop) has no root: which compute node
 * its providers stand for, and so whose allocations belong there, cannot be known. A plan that
 * writes, or relies on, any row of such a provider is refused whole; the operator fixes the tree first.
 */
import type {CloudModel} from '../domain/model.js'
import {CloudctlError, ExitCode} from '../errors.js'
import type {RepairPlan, Row, Step, WriteRow} from './plan.js'

/** Tables whose rows hang off one provider through resource_provider_id. */
const PROVIDER_ROWS = new Set(['allocations', 'inventories', 'resource_provider_traits', 'resource_provider_aggregates'])
const TREE_COLUMNS = ['parent_provider_id', 'root_provider_id']

function providerIdsOf(step: Step): number[] {
  const rows: Array<Row | WriteRow> = []
  if ('key' in step) rows.push(step.key)
  if ('expect' in step) rows.push(step.expect)
  if ('where' in step) rows.push(step.where)
  if ('values' in step) rows.push(step.values)
  if ('set' in step) rows.push(step.set)
  if (step.op === 'check') rows.push(...step.rows)
  const ids: number[] = []
  const take = (v: unknown) => typeof v === 'number' && ids.push(v)
  for (const row of rows) {
    if (PROVIDER_ROWS.has(step.table)) take(row.resource_provider_id)
    if (step.table === 'resource_providers') for (const c of ['id', ...TREE_COLUMNS]) take(row[c])
  }
  return ids
}

/** Exit 2 naming the loop when a step of the plan touches a provider of a broken tree. */
export function refuseBrokenTrees(model: CloudModel, plan: RepairPlan): void {
  if (model.brokenTrees.size === 0) return
  for (const step of plan.steps) {
    const hit = providerIdsOf(step).find((id) => model.brokenTrees.has(id))
    if (hit === undefined) continue
    const loop = model.brokenTrees.get(hit) ?? []
    const name = (id: number) => {
      const rp = model.providersById.get(id)
      return `${rp?.name ?? rp?.uuid ?? '?'} (id ${id})`
    }
    const chain = [...loop, loop[0]].map(name).join(' -> ')
    const steps = plan.steps.filter((s) => providerIdsOf(s).some((id) => model.brokenTrees.has(id))).length
    throw new CloudctlError(
      `refusing to plan repair ${plan.kind}: ${steps} step(s) touch provider ${name(hit)}, whose tree is a parent_provider_id loop (${chain}); nothing is concluded on such a tree`,
      {
        exitCode: ExitCode.CONFIG,
        code: 'ProviderTreeLoop',
        hint: 'Fix parent_provider_id / root_provider_id of those providers by hand first (`cloudctl audit providers` lists provider.tree-loop; `cloudctl explain provider.tree-loop`), then re-run.',
      },
    )
  }
}
