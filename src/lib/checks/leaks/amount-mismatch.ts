import type {AmountMismatchEvidence, Finding, FindingSubject} from '../../domain/finding.js'
import type {Instance} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'
import type {ResourceAmounts} from '../flavor-resources.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {type AmountMatcher, sameAmounts} from './amounts.js'
import {classifyAllocations} from './classify.js'
import {CHECKED_CLASSES, type Group, REPAIR, allocRows, consumerRow, fmtAmounts, groupSubject, instanceRow} from './shared.js'
import type {AmountMismatch} from './verdicts.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.amount-mismatch': [FindingSubject, AmountMismatchEvidence]
  }
}

/**
 * How an instance's allocations differ from what its flavor asks (nova's ResourceRequest rules), or
 * undefined when they agree. Pinned guests that still hold VCPU on a host without PCPU inventory
 * (before cpu_dedicated_set) agree.
 */
export function amountMismatchOf(ctx: AuditContext, matcher: AmountMatcher, inst: Instance, groups: Group[]): Pick<AmountMismatch, 'expected' | 'actual' | 'diff'> | undefined {
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

export const amountMismatch: CheckUnit = {
  code: 'allocation.amount-mismatch',
  check: 'leaks',
  severity: 'warning',
  summary: 'allocation amounts differ from what the flavor asks',
  explain: {
    cause: 'The amounts held differ from what the flavor asks (nova ResourceRequest rules: resources:RC overrides, dedicated CPU as PCPU, boot-from-volume without DISK_GB): a resize that did not swap allocations, a flavor changed in place, or a hand-made allocation.',
    repair: '`cloudctl repair leaks --heal` rewrites the amounts from the flavor.',
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.amounts.map(({consumer, inst, groups, row, expected, actual, diff}): Finding => {
      const g = groups.find((x) => !x.sharing) ?? groups[0]
      const subject = groupSubject(ctx, consumer, g, inst.cell_uuid)
      subject.instance_uuid = consumer
      const want = expected.resources
      return {
        check: 'leaks',
        code: 'allocation.amount-mismatch',
        severity: 'warning',
        subject,
        message: `Instance ${consumer} holds ${fmtAmounts(actual)} but its flavor ${expected.flavorName ?? ''} asks for ${fmtAmounts(want)}.`,
        evidence: {
          differences: diff,
          expected: want,
          allocated: actual,
          flavor: expected.flavorName,
          flavor_source: expected.flavorSource,
          cpu_policy: expected.cpuPolicy,
          boot_from_volume: expected.bootFromVolume,
          allocations: groups.flatMap((x) => allocRows(ctx, x.allocations)),
          providers: groups.map((x) => providerRow(x.rp)),
          consumer: consumerRow(ctx, row),
          instance: instanceRow(inst),
        },
        repair: REPAIR,
      }
    })
  },
}
