import type {AmountMismatchEvidence, Finding, FindingSubject} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, consumerRow, fmtAmounts, groupSubject, instanceRow} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.amount-mismatch': [FindingSubject, AmountMismatchEvidence]
  }
}

export const amountMismatch: CheckUnit = {
  code: 'allocation.amount-mismatch',
  check: 'leaks',
  severity: 'warning',
  summary: 'allocation amounts differ from what the flavor asks',
  explain: {
    cause:
      'The amounts held differ from what the flavor asks (nova ResourceRequest rules: resources:RC overrides, dedicated CPU as PCPU, boot-from-volume without DISK_GB): a resize that did not swap allocations, a flavor changed in place, or a hand-made allocation.',
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
