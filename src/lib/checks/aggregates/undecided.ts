import type {FindingSubject, Open} from '../../domain/finding.js'
import {undecidedUnit} from '../unit.js'
import {listedHostsWithoutNode} from './host-not-found.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'aggregate.undecided': [FindingSubject, Open]
  }
}

export const aggregateUndecided = undecidedUnit('aggregates', 'aggregate.undecided', 'aggregate membership of its hosts is', undefined, (ctx) => ({
  undecided_hosts: listedHostsWithoutNode(ctx).undecided,
}))
