/**
 * The leak rules classify.ts decides with, apart from the units that report them: the units import
 * classify.ts, and classify.ts imports these, so no module imports one that imports it back.
 */
import type {Consumer, ComputeNode, Instance, Migration} from '../../domain/snapshot.js'
import type {ResourceAmounts} from '../flavor-resources.js'
import {type AuditContext, INCOMPLETE_CONSUMER_ID} from '../context.js'
import {type AmountMatcher, sameAmounts} from './amounts.js'
import {CHECKED_CLASSES, type Group} from './shared.js'
import type {AmountMismatch} from './verdicts.js'

/**
 * How an instance's allocations differ from what its flavor asks (nova's ResourceRequest rules), or
 * undefined when they agree. Pinned guests that still hold VCPU on a host without PCPU inventory
 * (before cpu_dedicated_set) agree.
 */
export function amountMismatchOf(
  ctx: AuditContext,
  matcher: AmountMatcher,
  inst: Instance,
  groups: Group[],
): Pick<AmountMismatch, 'expected' | 'actual' | 'diff'> | undefined {
  const {model} = ctx
  const expected = ctx.expected(inst)
  if (!expected.ok) return undefined
  const want = expected.value.resources
  if (matcher.holdsAsAsked(want, groups)) return undefined
  const actual: ResourceAmounts = {}
  for (const g of groups) {
    for (const a of g.allocations) {
      const name = model.rc.name(a.resource_class_id)
      actual[name] = (actual[name] ?? 0) + a.used
    }
  }
  if (sameAmounts(want, actual)) return undefined
  const classes = new Set([...Object.keys(want), ...CHECKED_CLASSES.filter((c) => c in actual)])
  const diff: Record<string, {expected: number; allocated: number}> = {}
  for (const c of classes) if ((want[c] ?? 0) !== (actual[c] ?? 0)) diff[c] = {expected: want[c] ?? 0, allocated: actual[c] ?? 0}
  if (Object.keys(diff).length === 0) return undefined
  // Before cpu_dedicated_set, pinned guests allocated VCPU: still right on hosts without PCPU inventory.
  const nodeGroup = groups.find((g) => !g.sharing)
  const pcpuId = model.rc.id('PCPU') as number
  if (
    Object.keys(diff).every((c) => c === 'VCPU' || c === 'PCPU') &&
    want.PCPU !== undefined &&
    !actual.PCPU &&
    nodeGroup !== undefined &&
    model.inventory(nodeGroup.rp.id, pcpuId) === undefined &&
    (actual.VCPU === want.PCPU + (want.VCPU ?? 0) || actual.VCPU === want.PCPU + (want.VCPU ?? 0) - 1)
  )
    return undefined
  return {expected: expected.value, actual, diff}
}

/** What is wrong with a consumer's placement.consumers row, if anything (judged only where its allocations are right). */
export function consumerProblem(ctx: AuditContext, c: Consumer | undefined): string | undefined {
  if (!c) return 'has no row in placement.consumers'
  const project = ctx.model.projectsById.get(c.project_id)
  if (project === undefined || project === INCOMPLETE_CONSUMER_ID) return 'has no project (incomplete consumer)'
  const user = ctx.model.usersById.get(c.user_id)
  if (user === undefined || user === INCOMPLETE_CONSUMER_ID) return 'has no user (incomplete consumer)'
  return undefined
}

/**
 * The done evacuation that explains an instance's allocation on a provider it does not live on:
 * from that provider's node to the host the instance now runs on.
 */
export function evacuationOf(ctx: AuditContext, consumer: string, cn: ComputeNode | undefined, g: Group, inst: Instance): Migration | undefined {
  return (ctx.model.migrationsByInstance.get(consumer) ?? []).find(
    (m) =>
      m.deleted === 0 &&
      m.migration_type === 'evacuation' &&
      (m.status === 'done' || m.status === 'completed') &&
      (cn ? ctx.movesFrom(m, cn) : m.source_node === g.rp.name) &&
      // The hosts by compute ids where they name live nodes (2023.2+), else by the names (Zed).
      (ctx.model.migrationDestNode(m)?.host ?? m.dest_compute) === (ctx.model.nodeOfInstance(inst)?.host ?? inst.host),
  )
}
