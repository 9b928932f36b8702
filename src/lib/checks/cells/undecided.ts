import type {FindingSubject, Open} from '../../domain/finding.js'
import {undecidedUnit} from '../unit.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'cell.undecided': [FindingSubject, Open]
  }
}

export const cellUndecided = undecidedUnit('cells', 'cell.undecided', 'instance and host mappings of this cell are')
