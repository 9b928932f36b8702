import {undecidedUnit} from '../unit.js'

export const usageUndecided = undecidedUnit('usage', 'usage.undecided', 'usage of its compute nodes is')
