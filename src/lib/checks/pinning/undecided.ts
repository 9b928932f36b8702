import {undecidedUnit} from '../unit.js'

export const pinningUndecided = undecidedUnit('pinning', 'pinning.undecided', 'CPU pinning of its compute nodes is')
