import {undecidedUnit} from '../unit.js'
import {listedHostsWithoutNode} from './host-not-found.js'

export const aggregateUndecided = undecidedUnit('aggregates', 'aggregate.undecided', 'aggregate membership of its hosts is', undefined, (ctx) => ({
  undecided_hosts: listedHostsWithoutNode(ctx).undecided,
}))
