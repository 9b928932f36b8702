import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CheckUnit} from '../unit.js'
import {classifyAllocations} from './classify.js'
import {REPAIR, allocRows, groupSubject} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'allocation.consumer-incomplete': [FindingSubject, Open]
  }
}

export const consumerIncomplete: CheckUnit = {
  code: 'allocation.consumer-incomplete',
  check: 'leaks',
  severity: 'warning',
  summary: 'consumer without a consumers row or with no project/user',
  explain: {
    cause: 'Placement allocations without a consumers row, or with no project/user: written before placement tracked consumers (pre-Rocky) or by hand.',
    repair: 'Reported only: `nova-manage placement heal_allocations` fills project and user from the instance.',
  },
  run(ctx) {
    const {model} = ctx
    return classifyAllocations(ctx).verdicts.incomplete.map(({consumer, groups, row: c, inst, problem}): Finding => {
      const g = groups.find((x) => !x.sharing) ?? groups[0]
      const subject = groupSubject(ctx, consumer, g, inst?.cell_uuid)
      if (inst) subject.instance_uuid = consumer
      const project = c ? model.projectsById.get(c.project_id) : undefined
      const user = c ? model.usersById.get(c.user_id) : undefined
      return {
        check: 'leaks',
        code: 'allocation.consumer-incomplete',
        severity: 'warning',
        subject,
        message: `Consumer ${consumer} ${problem}: quota usage and heal_allocations miss it.`,
        evidence: {
          consumer: c
            ? {id: c.id, uuid: c.uuid, generation: c.generation, project_id: c.project_id, user_id: c.user_id, project: project ?? null, user: user ?? null}
            : null,
          expected_project: inst?.project_id ?? null,
          expected_user: inst?.user_id ?? null,
          allocations: groups.flatMap((x) => allocRows(ctx, x.allocations)),
        },
        repair: REPAIR,
      }
    })
  },
}
