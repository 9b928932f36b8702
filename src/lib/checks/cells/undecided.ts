import {undecidedUnit} from '../unit.js'

export const cellUndecided = undecidedUnit('cells', 'cell.undecided', 'instance and host mappings of this cell are')
