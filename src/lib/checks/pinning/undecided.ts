import type {FindingSubject, Open} from '../../domain/finding.js'
import {undecidedUnit} from '../unit.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.undecided': [FindingSubject, Open]
  }
}

export const pinningUndecided = undecidedUnit('pinning', 'pinning.undecided', 'CPU pinning of its compute nodes is')
