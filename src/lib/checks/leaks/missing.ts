import type {Finding, FindingSubject, MissingEvidence} from '../../domain/finding.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, instanceRow} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.missing': [FindingSubject, MissingEvidence]
  }
}

/** A live instance on a host, asking for resources, that holds no allocation at all. */
export const allocationMissing: CheckUnit = {
  code: 'allocation.missing',
  check: 'leaks',
  severity: 'error',
  summary: 'live instance on a host with no allocation at all',
  explain: {
    cause:
      'The instance is live on a host but holds nothing in placement: an allocation deleted by hand or by an over-eager cleanup, or an instance from before placement tracked it. The scheduler counts the host as emptier than it is.',
    repair: '`cloudctl repair leaks --heal` creates the allocation from the flavor, as `nova-manage placement heal_allocations` would.',
  },
  run(ctx) {
    return classifyAllocations(ctx).verdicts.missing.map(({uuid, inst, expected, cn, rp}): Finding => {
      const subject: FindingSubject = cn ? ctx.nodeSubject(cn) : {cell: ctx.cellName(inst.cell_uuid), cell_uuid: inst.cell_uuid, host: inst.host as string}
      if (!cn && inst.node !== null) subject.node = inst.node
      if (rp) subject.provider_uuid = rp.uuid
      subject.instance_uuid = uuid
      subject.consumer_uuid = uuid
      return {
        check: 'leaks',
        code: 'allocation.missing',
        severity: 'error',
        subject,
        message: `Instance ${uuid} runs on ${inst.node ?? inst.host} but holds no allocation in placement: the scheduler will hand its resources to others.`,
        evidence: {
          instance: instanceRow(inst),
          expected: expected.resources,
          flavor: expected.flavorName,
          flavor_source: expected.flavorSource,
          boot_from_volume: expected.bootFromVolume,
          provider: rp ? providerRow(rp) : null,
          compute_node: cn ? {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid} : null,
        },
        repair: REPAIR,
      }
    })
  },
}
